//! The `${...}` functions of the simple language: what they read from an exchange.
//!
//! A function is resolved once, at parse time, into a [`Function`] value; evaluation is
//! a field lookup or a call on already-parsed arguments, never a string match.

mod access;
mod args;
mod call;
mod call_parse;
mod call_value;
mod date;
mod date_format;
mod exception;
mod file;
mod info;
mod inline;
mod lists;
mod message;
mod query;
mod text;

use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::Arc;

use camel_api::{Body, CamelError, Exchange, Value};

use crate::problem::Problem;
pub(crate) use access::Step;
pub(crate) use call::Call;
pub(crate) use date::DateFunction;
pub(crate) use info::Info;

/// The function names the parser knows, for "did you mean" suggestions.
const KNOWN: &[&str] = &[
    "body",
    "in.body",
    "bodyAs",
    "mandatoryBodyAs",
    "headerAs",
    "bodyOneLine",
    "prettyBody",
    "header",
    "headers",
    "in.header",
    "in.headers",
    "exchangeProperty",
    "variable",
    "variables",
    "exchangeId",
    "id",
    "null",
    "date",
    "date-with-timezone",
    "file",
    "env",
    "sysenv",
    "uuid",
];

/// A resolved `${...}` function.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Function {
    /// `${body}`: the message body as a value.
    Body,
    /// `${bodyAs(Type)}` / `${mandatoryBodyAs(Type)}`: the body converted to a type.
    BodyAs(Conversion, Mandatory),
    /// `${header.NAME}`: a header, or null.
    Header(Arc<str>),
    /// `${headerAs(NAME,Type)}`: a header converted to a type (null when absent).
    HeaderAs(Arc<str>, Conversion),
    /// `${headers}`: every header, as a JSON object.
    Headers,
    /// `${exchangeProperty.NAME}`: an exchange property, or null.
    Property(Arc<str>),
    /// `${variable.NAME}` / `${variable.global:NAME}`: a variable, or null.
    Variable(camel_api::variables::Variable),
    /// `${variables}`: every exchange variable, as a JSON object.
    Variables,
    /// `${exchangeId}`: the exchange id as text.
    ExchangeId,
    /// `${null}`.
    Null,
    /// `${body[0]}`, `${header.x.toUpperCase()}`: a value, then indexes and method calls.
    Access(Box<Function>, Box<[Step]>),
    /// `${uppercase()}`, `${substringBefore(…)}`, `${iif(…)}` and the other calls.
    Call(Box<Call>),
    /// `${date:…}` and `${date-with-timezone:…}`.
    Date(Box<DateFunction>),
    /// `${header.n > 3}` and `${header.n > 3 ? 'big' : 'small'}`.
    Inline(Box<inline::Inline>),
    /// `${file:…}`, `${env.X}`, `${uuid}`, `${prettyBody}` and other exchange or
    /// environment facts.
    Info(Info),
}

/// Whether `${mandatoryBodyAs}` (an empty body is an error) or `${bodyAs}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mandatory {
    Yes,
    No,
}

/// The target of `${bodyAs(...)}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Conversion {
    Text,
    Integer,
    Decimal,
    Boolean,
}

impl Function {
    /// The function's value. Headers and properties are borrowed, not cloned.
    pub(crate) fn value<'a>(&self, exchange: &'a Exchange) -> Result<Cow<'a, Value>, CamelError> {
        Ok(match self {
            Function::Body => Cow::Owned(exchange.message.body.to_value()),
            Function::Header(name) => borrowed_or_null(exchange.header(name)),
            Function::HeaderAs(name, conversion) => match exchange.header(name) {
                None | Some(Value::Null) => Cow::Owned(Value::Null),
                Some(value) => Cow::Owned(convert_value(value, *conversion)?),
            },
            Function::Property(name) => borrowed_or_null(exchange.property(name)),
            Function::Variable(variable) => {
                variable.get(exchange).unwrap_or(Cow::Owned(Value::Null))
            }
            Function::Variables => Cow::Owned(Value::from_json(serde_json::Value::Object(
                exchange
                    .variables()
                    .map(|(k, v)| (k.to_owned(), v.to_json()))
                    .collect(),
            ))),
            Function::ExchangeId => Cow::Owned(Value::Text(exchange.id.to_string().into())),
            Function::Null => Cow::Owned(Value::Null),
            Function::BodyAs(conversion, mandatory) => {
                if *mandatory == Mandatory::Yes && exchange.message.body.is_empty() {
                    return Err(CamelError::conversion(
                        conversion.name(),
                        "mandatoryBodyAs: the body is empty",
                    ));
                }
                Cow::Owned(convert_body(&exchange.message.body, *conversion)?)
            }
            Function::Headers => Cow::Owned(Value::from_json(serde_json::Value::Object(
                exchange
                    .message
                    .headers
                    .iter()
                    .map(|(k, v)| (k.to_owned(), v.to_json()))
                    .collect(),
            ))),
            Function::Access(source, steps) => {
                access::apply(source.value(exchange)?, steps, exchange)?
            }
            Function::Call(call) => Cow::Owned(call.value(exchange)?),
            Function::Date(date) => Cow::Owned(date.value(exchange)?),
            Function::Info(info) => Cow::Owned(info.value(exchange)?),
            Function::Inline(inline) => Cow::Owned(inline.value(exchange)?),
        })
    }

    /// Appends the function's text form to `out` without building an intermediate value
    /// where it can (text bodies and headers are copied straight in).
    pub(crate) fn append_to(
        &self,
        exchange: &Exchange,
        out: &mut String,
    ) -> Result<(), CamelError> {
        match self {
            Function::Body | Function::BodyAs(Conversion::Text, Mandatory::No) => {
                append_body(&exchange.message.body, out);
                Ok(())
            }
            Function::ExchangeId => {
                // Infallible for a String.
                let _ = write!(out, "{}", exchange.id);
                Ok(())
            }
            Function::Header(name) => {
                if let Some(value) = exchange.header(name) {
                    append_value(value, out);
                }
                Ok(())
            }
            _ => {
                append_value(&*self.value(exchange)?, out);
                Ok(())
            }
        }
    }
}

fn borrowed_or_null(value: Option<&Value>) -> Cow<'_, Value> {
    match value {
        Some(v) => Cow::Borrowed(v),
        None => Cow::Owned(Value::Null),
    }
}

/// Appends the text form of `value` (null appends nothing).
pub(crate) fn append_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => {}
        Value::Text(s) => out.push_str(s),
        Value::Bytes(b) => out.push_str(&String::from_utf8_lossy(b)),
        // Infallible for a String.
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

fn append_body(body: &Body, out: &mut String) {
    match body {
        Body::Empty => {}
        Body::Text(s) => out.push_str(s),
        Body::Bytes(b) => out.push_str(&String::from_utf8_lossy(b)),
        Body::Json(j) => {
            let _ = write!(out, "{j}");
        }
    }
}

impl Conversion {
    fn name(self) -> &'static str {
        match self {
            Conversion::Text => "text",
            Conversion::Integer => "integer",
            Conversion::Decimal => "decimal",
            Conversion::Boolean => "boolean",
        }
    }
}

/// A value converted as `${bodyAs}` converts the body: a value of the type already
/// stays as it is, anything else is read from its text.
fn convert_value(value: &Value, to: Conversion) -> Result<Value, CamelError> {
    match (to, value) {
        (Conversion::Text, Value::Text(_))
        | (Conversion::Integer, Value::Int(_))
        | (Conversion::Decimal, Value::Float(_))
        | (Conversion::Boolean, Value::Bool(_)) => Ok(value.clone()),
        (Conversion::Decimal, Value::Int(i)) => Ok(Value::Float(*i as f64)),
        (_, Value::Bytes(b)) => convert_body(&Body::Bytes(b.clone()), to),
        (_, other) => convert_body(&Body::Text(other.to_string().into()), to),
    }
}

fn convert_body(body: &Body, to: Conversion) -> Result<Value, CamelError> {
    let text = || body.as_text().unwrap_or_default();
    match to {
        Conversion::Text => Ok(Value::Text(text().into())),
        Conversion::Integer => text()
            .trim()
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|e| CamelError::conversion("integer", e)),
        Conversion::Decimal => text()
            .trim()
            .parse::<f64>()
            .map(Value::Float)
            .map_err(|e| CamelError::conversion("decimal", e)),
        Conversion::Boolean => match text().trim() {
            t if t.eq_ignore_ascii_case("true") => Ok(Value::Bool(true)),
            t if t.eq_ignore_ascii_case("false") => Ok(Value::Bool(false)),
            t => Err(CamelError::conversion(
                "boolean",
                format!("`{t}` is not true or false"),
            )),
        },
    }
}

/// Parses the inside of `${...}`; `offset` is the byte offset of `content` in the whole
/// expression, so problems point at the right column.
pub(crate) fn parse(content: &str, offset: usize) -> Result<Function, Problem> {
    let leading = content.len() - content.trim_start().len();
    let name = content.trim();
    let at = offset + leading;
    if name.is_empty() {
        return Err(Problem::new(offset, "empty function `${}`"));
    }
    if !name.starts_with("date") {
        if let Some(inline) = inline::parse(name, at)? {
            return Ok(Function::Inline(Box::new(inline)));
        }
    }
    if let Some(function) = message::parse(name, at)? {
        return Ok(function);
    }
    if let Some(function) = info::parse(name, at)? {
        return Ok(Function::Info(function));
    }
    if let Some(rest) = name.strip_prefix("date-with-timezone:") {
        let rest_at = at + "date-with-timezone:".len();
        return Ok(Function::Date(Box::new(date::parse(rest, rest_at, true)?)));
    }
    if let Some(rest) = name.strip_prefix("date:") {
        return Ok(Function::Date(Box::new(date::parse(rest, at + 5, false)?)));
    }
    if let Some(rest) = name.strip_prefix("file:") {
        return Ok(Function::Info(Info::File(file::parse(rest, at + 5)?)));
    }
    if let Some(call) = call::parse_bare(name) {
        return Ok(Function::Call(Box::new(call)));
    }
    if let Some(open) = name.find('(') {
        let fname = &name[..open];
        if let Some(inner) = name[open + 1..].strip_suffix(')') {
            if let Some(call) = call::parse(fname, at, inner, at + open + 1) {
                return Ok(Function::Call(Box::new(call?)));
            }
        } else if call::is_name(fname) {
            return Err(Problem::new(
                at + open,
                format!("missing `)` after the arguments of `{fname}`"),
            ));
        }
    }
    if let Some(problem) = info::unsupported(name, at) {
        return Err(problem);
    }
    let word = name
        .split(|c: char| matches!(c, '.' | '[' | '(' | ':') || c.is_whitespace())
        .next()
        .unwrap_or(name);
    let known = KNOWN.iter().copied().chain(call::names());
    let hint = camel_api::suggest::nearest(word, known)
        .map(|s| format!("; did you mean `{s}`?"))
        .unwrap_or_default();
    Err(Problem::new(at, format!("unknown function `{name}`{hint}")))
}

#[cfg(test)]
mod tests;
