//! The `jq` language (through the `jaq` crates), evaluated on the message body: wherever a
//! route takes `jsonpath`, it takes `jq` too.
//!
//! The filter is parsed and compiled once, with jq's standard library. A text or bytes
//! body is parsed as JSON first; an empty body is `null`. One output yields that value,
//! several yield a JSON array of them (at most [`MAX_OUTPUTS`]), none yields null. As a
//! predicate, a filter holds when its first output is neither `null` nor `false` (as in
//! jq's `select`). A body nested deeper than
//! [`MAX_NESTING_DEPTH`](camel_api::nesting::MAX_NESTING_DEPTH) levels is an error, not
//! a stack overflow.
//!
//! ```
//! use camel_api::{Body, Exchange, Value};
//! use camel_language::jq;
//!
//! let ex = Exchange::new(Body::from(r#"{"order": {"id": 7, "items": ["a", "b"]}}"#));
//! assert_eq!(jq(".order.id").unwrap().evaluate(&ex).unwrap(), Value::Int(7));
//! let n = jq(".order.items | length").unwrap().evaluate(&ex).unwrap();
//! assert_eq!(n, Value::Int(2));
//! assert_eq!(jq(".order |").unwrap_err().language, "jq");
//! ```

use std::sync::Arc;

use std::rc::Rc;

use camel_api::nesting::{check_json_nesting, MAX_NESTING_DEPTH};
use camel_api::{
    Body, BoxExpression, BoxPredicate, CamelError, Exchange, Expression, ExpressionError, Language,
    Predicate, Value,
};
use jaq_core::compile::Filter;
use jaq_core::data::JustLut;
use jaq_core::load::{self, Arena, File, Loader};
use jaq_core::{Compiler, Ctx, Native, Vars};
use jaq_json::Val;

use crate::options::{reject_options, trimmed, Options};
use crate::problem::located;
use crate::result_type::{ResultType, RESULT_TYPE};
use crate::source::{Source, HEADER_NAME, PROPERTY_NAME, SOURCE};

mod exchange;

const LANGUAGE: &str = "jq";

/// At most this many outputs are collected; a filter that yields more is an error (a
/// `repeat` or `range` without end would otherwise never finish).
pub const MAX_OUTPUTS: usize = 10_000;

type Data = JustLut<Val>;

/// Compiles a jq filter over the body.
pub fn jq(text: &str) -> Result<BoxExpression, ExpressionError> {
    Ok(Arc::new(compile(text)?))
}

/// Compiles a filter for the simple language's `${jq(…)}`, which runs it on a value of
/// its choosing ([`JqExpression::evaluate_body`]).
pub(crate) fn compile(written: &str) -> Result<JqExpression, ExpressionError> {
    // Camel's `header(…)`, `property(…)`, `variable(…)` read the exchange.
    let (rewritten, reads) = exchange::rewrite(written);
    let text = rewritten.as_str();
    let globals = reads.names();
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    // jaq's own `fromjson` parses with a reader that recurses once per level; ours
    // checks the text's nesting first.
    let funs = jaq_core::funs::<Data>()
        .chain(jaq_std::funs::<Data>())
        .chain(jaq_json::funs::<Data>().filter(|(name, _, _)| *name != "fromjson"))
        .chain([fromjson()]);
    let arena = Arena::default();
    let at = |part: &str| load::span(text, part).start;
    let modules = Loader::new(defs)
        .load(
            &arena,
            File {
                code: text,
                path: (),
            },
        )
        .map_err(|errors| {
            let (offset, message) = errors
                .into_iter()
                .find_map(|(_, e)| match e {
                    load::Error::Lex(v) => v
                        .into_iter()
                        .next()
                        .map(|(expect, s)| (at(s), format!("expected {}", expect.as_str()))),
                    load::Error::Parse(v) => v
                        .into_iter()
                        .next()
                        .map(|(expect, s)| (at(s), format!("expected {}", expect.as_str()))),
                    load::Error::Io(v) => v.into_iter().next().map(|(s, m)| (at(s), m)),
                })
                .unwrap_or((0, "the filter cannot be read".to_string()));
            located(LANGUAGE, text, offset, message)
        })?;
    let filter = Compiler::default()
        .with_funs(funs)
        .with_global_vars(globals.iter().map(String::as_str))
        .compile(modules)
        .map_err(|errors| {
            let (offset, message) = errors
                .into_iter()
                .flat_map(|(_, e)| e)
                .next()
                .map(|(name, undefined)| {
                    (
                        at(name),
                        format!("undefined {} `{name}`", undefined.as_str()),
                    )
                })
                .unwrap_or((0, "the filter cannot be compiled".to_string()));
            located(LANGUAGE, text, offset, message)
        })?;
    Ok(JqExpression {
        text: written.into(),
        filter,
        result_type: None,
        source: None,
        reads,
    })
}

/// `fromjson` with the body's nesting limit applied to the text it parses.
fn fromjson() -> jaq_core::native::Fun<Data> {
    jaq_core::native::run::<Data>(("fromjson", jaq_core::native::v(0), |cv| {
        let fail = |e: &dyn std::fmt::Display| {
            jaq_json::Error::str(format_args!("cannot parse as JSON: {e}"))
        };
        let parsed: Vec<jaq_json::ValR> = match cv.1.try_as_utf8_bytes_owned() {
            Err(e) => vec![Err(e)],
            Ok(text) => match check_json_nesting(&text) {
                Err(deep) => vec![Err(fail(&deep))],
                Ok(()) => jaq_json::read::parse_many(&text)
                    .map(|r| r.map_err(|e| fail(&e)))
                    .collect(),
            },
        };
        Box::new(parsed.into_iter().map(|r| r.map_err(jaq_core::Exn::from)))
    }))
}

/// Whether `value` nests deeper than the body limit. A loop over an explicit stack:
/// jaq's own printing and dropping of values recurse once per level.
fn too_deep(value: &Val) -> bool {
    let mut stack = vec![(value, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Val>> = match v {
            Val::Arr(items) => Box::new(items.iter()),
            Val::Obj(fields) => Box::new(fields.values()),
            _ => continue,
        };
        if depth == MAX_NESTING_DEPTH {
            return true;
        }
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    false
}

/// Drops `value` level by level, so that a value nested 100,000 deep (a filter such as
/// `reduce range(.n) as $i (0; [.])` builds one) does not overflow the stack as it goes.
fn dismantle(value: Val) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Val::Arr(items) => {
                if let Ok(items) = Rc::try_unwrap(items) {
                    stack.extend(items);
                }
            }
            Val::Obj(fields) => {
                if let Ok(fields) = Rc::try_unwrap(fields) {
                    for (k, v) in fields {
                        stack.push(k);
                        stack.push(v);
                    }
                }
            }
            _ => {}
        }
    }
}

pub(crate) struct JqExpression {
    text: Arc<str>,
    filter: Filter<Native<Data>>,
    /// Camel's `resultType`: each output is converted, as camel-jq converts each one.
    result_type: Option<ResultType>,
    /// Camel's `source`: the header, property or variable run on instead of the body.
    source: Option<Source>,
    /// What the filter's `header(…)`, `property(…)` and `variable(…)` read.
    reads: exchange::ExchangeReads,
}

impl std::fmt::Debug for JqExpression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JqExpression")
            .field("text", &self.text)
            .finish_non_exhaustive()
    }
}

impl JqExpression {
    fn failure(&self, message: impl Into<String>) -> CamelError {
        located(LANGUAGE, &self.text, 0, message).into()
    }

    fn input(&self, body: &Body) -> Result<Val, CamelError> {
        let json;
        let bytes: &[u8] = match body {
            Body::Empty => return Ok(Val::Null),
            Body::Json(j) => {
                json = serde_json::to_vec(&**j).map_err(|e| self.failure(e.to_string()))?;
                &json
            }
            Body::Text(s) => s.as_bytes(),
            Body::Bytes(b) => b,
        };
        // jaq's reader recurses once per level: a deep body would overflow the stack.
        check_json_nesting(bytes).map_err(|e| self.failure(e.to_string()))?;
        jaq_json::read::parse_single(bytes)
            .map_err(|e| self.failure(format!("the body is not JSON: {e}")))
    }

    /// Runs the filter on `body`, giving each output to `each` until it returns false.
    fn run(
        &self,
        body: &Body,
        exchange: &Exchange,
        mut each: impl FnMut(Val) -> bool,
    ) -> Result<(), CamelError> {
        let input = self.input(body)?;
        let ctx = Ctx::<Data>::new(
            &self.filter.lut,
            Vars::new(self.reads.values(Some(exchange))),
        );
        for (n, out) in self.filter.id.run((ctx, input)).enumerate() {
            if n >= MAX_OUTPUTS {
                return Err(
                    self.failure(format!("the filter yields more than {MAX_OUTPUTS} values"))
                );
            }
            match out {
                Ok(v) if too_deep(&v) => {
                    dismantle(v);
                    return Err(self.failure(format!(
                        "a result nests deeper than {MAX_NESTING_DEPTH} levels"
                    )));
                }
                Ok(v) => {
                    if !each(v) {
                        break;
                    }
                }
                Err(exn) => {
                    let message = match exn.get_err() {
                        Ok(e) => e.to_string(),
                        Err(_) => "the filter stopped (`halt` or an uncaught `break`)".into(),
                    };
                    return Err(self.failure(message));
                }
            }
        }
        Ok(())
    }
}

fn to_value(v: &Val) -> Result<Value, String> {
    serde_json::from_str::<serde_json::Value>(&v.to_string())
        .map(Value::from_json)
        .map_err(|e| format!("a result is not JSON: {e}"))
}

impl Expression for JqExpression {
    fn evaluate(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        match &self.source {
            None => self.evaluate_body(&exchange.message.body, exchange),
            Some(s) => self.evaluate_body(&s.body(LANGUAGE, &self.text, exchange)?, exchange),
        }
    }
}

impl JqExpression {
    /// The filter's value on `body` (the message body, or a header read as one).
    pub(crate) fn evaluate_body(
        &self,
        body: &Body,
        exchange: &Exchange,
    ) -> Result<Value, CamelError> {
        let mut outputs = Vec::new();
        self.run(body, exchange, |v| {
            outputs.push(v);
            true
        })?;
        let mut values = outputs
            .iter()
            .map(|v| {
                let value = to_value(v)?;
                match self.result_type {
                    Some(to) => to.convert(value),
                    None => Ok(value),
                }
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.failure(e))?;
        Ok(match values.len() {
            0 => Value::Null,
            1 => values.remove(0),
            _ => Value::Json(Arc::new(serde_json::Value::Array(
                values.iter().map(Value::to_json).collect(),
            ))),
        })
    }
}

impl Predicate for JqExpression {
    fn matches(&self, exchange: &Exchange) -> Result<bool, CamelError> {
        let mut holds = false;
        let from_source;
        let body = match &self.source {
            None => &exchange.message.body,
            Some(s) => {
                from_source = s.body(LANGUAGE, &self.text, exchange)?;
                &from_source
            }
        };
        self.run(body, exchange, |v| {
            holds = !matches!(v, Val::Null | Val::Bool(false));
            false
        })?;
        Ok(holds)
    }
}

/// The `jq` language for a [`crate::LanguageRegistry`]. Options: `result_type` (alias
/// `resultType`: `String`, `Integer`, `Boolean`… each output is converted to), `source`
/// (`header:NAME`, `property:NAME`, `variable:NAME`; Camel 3's `headerName` and
/// `propertyName`) and `trim`.
#[derive(Debug, Clone, Copy, Default)]
pub struct JqLanguage;

impl JqLanguage {
    fn compile(&self, text: &str, options: &Options) -> Result<JqExpression, ExpressionError> {
        reject_options(
            LANGUAGE,
            text,
            options,
            &[RESULT_TYPE, SOURCE, HEADER_NAME, PROPERTY_NAME],
        )?;
        let result_type = ResultType::from_options(LANGUAGE, text, options)?;
        let source = Source::from_options(LANGUAGE, text, options)?;
        Ok(JqExpression {
            result_type,
            source,
            ..compile(trimmed(text, options))?
        })
    }
}

impl Language for JqLanguage {
    fn name(&self) -> &'static str {
        LANGUAGE
    }

    fn expression(&self, text: &str, options: &Options) -> Result<BoxExpression, ExpressionError> {
        Ok(Arc::new(self.compile(text, options)?))
    }

    fn predicate(&self, text: &str, options: &Options) -> Result<BoxPredicate, ExpressionError> {
        Ok(Arc::new(self.compile(text, options)?))
    }
}

#[cfg(test)]
mod tests;
