//! `${jsonpath(…)}` and `${jq(…)}`: the `jsonpath` and `jq` languages inside a simple
//! expression, compiled when the expression is.
//!
//! Each runs on the body, or on another value named first: Camel's `header:NAME`,
//! `exchangeProperty:NAME` (or `property:NAME`) and `variable:NAME`, or a nested
//! function (`${jsonpath(${header.doc},$.name)}`). A query holds commas of its own
//! (`$.items[0,1]`, jq's `{id, name}`), so the text is split only after one of those.

use std::sync::Arc;

use camel_api::{Body, CamelError, Exchange, Value};

use super::super::parser::Mode;
use super::args::{self, Arg};
use super::call::Call;
use crate::problem::Problem;

/// A compiled query, compared by its text.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    text: Arc<str>,
    engine: Engine,
}

#[derive(Debug, Clone)]
enum Engine {
    JsonPath(camel_api::BoxExpression),
    Jq(Arc<crate::jq::JqExpression>),
}

impl PartialEq for Query {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Query {
    /// The query's value on `input` (the body when `None`).
    pub(crate) fn value(
        &self,
        input: Option<&Arg>,
        exchange: &Exchange,
    ) -> Result<Value, CamelError> {
        match (&self.engine, input) {
            (Engine::JsonPath(e), None) => e.evaluate(exchange),
            (Engine::JsonPath(e), Some(input)) => {
                let document = Exchange::new(Body::from(input.value(exchange)?));
                e.evaluate(&document)
            }
            (Engine::Jq(e), None) => e.evaluate_body(&exchange.message.body, exchange),
            (Engine::Jq(e), Some(input)) => {
                e.evaluate_body(&Body::from(input.value(exchange)?), exchange)
            }
        }
    }
}

/// Which language a call names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    JsonPath,
    Jq,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::JsonPath => "jsonpath",
            Kind::Jq => "jq",
        }
    }

    fn example(self) -> &'static str {
        match self {
            Kind::JsonPath => "a path such as `$.id`",
            Kind::Jq => "a filter such as `.id`",
        }
    }
}

/// Camel's prefixes that name the input, and the function that reads it.
const INPUTS: [(&str, &str); 4] = [
    ("header:", "header"),
    ("exchangeProperty:", "exchangeProperty"),
    ("property:", "exchangeProperty"),
    ("variable:", "variable"),
];

/// `jsonpath(path)`, `jq(filter)`, or either with an input first.
pub(crate) fn parse(kind: Kind, at: usize, inner: &str, inner_at: usize) -> Result<Call, Problem> {
    let lead = inner.len() - inner.trim_start().len();
    let start = inner.trim_start();
    let (source, query, query_at) = if let Some(after) = start.strip_prefix("${") {
        let close = super::super::lexer::closing_brace(after)
            .ok_or_else(|| Problem::new(inner_at + lead, "unterminated `${`: missing `}`"))?;
        let end = lead + 2 + close + 1;
        let Some(rest) = inner[end..].trim_start().strip_prefix(',') else {
            return Err(Problem::new(
                inner_at + end,
                format!("missing `,{}` after the value", kind.name().to_uppercase()),
            ));
        };
        let span = args::Span {
            text: inner[lead..end].trim(),
            at: inner_at + lead,
        };
        let query_at = inner_at + inner.len() - rest.len();
        (Some(args::parse(span, Mode::Expression)?), rest, query_at)
    } else if let Some((prefix, function)) = INPUTS.iter().find(|(p, _)| start.starts_with(p)) {
        let name_at = inner_at + lead + prefix.len();
        let Some((name, rest)) = start[prefix.len()..].split_once(',') else {
            return Err(Problem::new(
                name_at,
                format!("missing `,` and the query after `{prefix}NAME`"),
            ));
        };
        let name = name.trim();
        if name.is_empty() || name.contains([']', '}']) {
            return Err(Problem::new(
                name_at,
                format!("missing or bad name after `{prefix}`"),
            ));
        }
        let reader = format!("${{{function}[{name}]}}");
        let span = args::Span {
            text: &reader,
            at: name_at,
        };
        let query_at = inner_at + inner.len() - rest.len();
        let input =
            args::parse(span, Mode::Expression).map_err(|p| Problem::new(name_at, p.message))?;
        (Some(input), rest, query_at)
    } else {
        (None, inner, inner_at)
    };
    if query.trim().is_empty() {
        return Err(Problem::new(
            at,
            format!("`{}` needs {}", kind.name(), kind.example()),
        ));
    }
    // jsonpath reports columns in the text it was given; jq is given the trimmed text.
    let lead = query.len() - query.trim_start().len();
    let located = |e: camel_api::ExpressionError, text: &str, base: usize, what: &str| {
        let byte = text
            .char_indices()
            .nth(e.column.saturating_sub(1))
            .map_or(text.len(), |(i, _)| i);
        Problem::new(base + byte, format!("invalid {what}: {}", e.message))
    };
    let engine = match kind {
        Kind::JsonPath => Engine::JsonPath(
            crate::jsonpath(query, false).map_err(|e| located(e, query, query_at, "JSONPath"))?,
        ),
        Kind::Jq => {
            Engine::Jq(Arc::new(crate::jq::compile(query.trim()).map_err(|e| {
                located(e, query.trim(), query_at + lead, "jq filter")
            })?))
        }
    };
    let query = Query {
        text: query.trim().into(),
        engine,
    };
    Ok(match kind {
        Kind::JsonPath => Call::JsonPath(source, query),
        Kind::Jq => Call::Jq(source, query),
    })
}
