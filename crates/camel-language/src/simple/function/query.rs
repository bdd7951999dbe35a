//! `${jsonpath(path)}` and `${jsonpath(${…},path)}`: the `jsonpath` language inside
//! a simple expression, compiled when the expression is.

use super::super::parser::Mode;
use super::args;
use super::call::Call;
use crate::problem::Problem;

/// A compiled JSONPath query, compared by its text.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    text: std::sync::Arc<str>,
    pub(crate) expression: camel_api::BoxExpression,
}

impl PartialEq for Query {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

/// `jsonpath(path)` or `jsonpath(${…},path)`. A path holds commas of its own
/// (`$.items[0,1]`), so the text is split only after a leading nested function.
pub(crate) fn parse(at: usize, inner: &str, inner_at: usize) -> Result<Call, Problem> {
    let lead = inner.len() - inner.trim_start().len();
    let (source, path, path_at) = match inner.trim_start().strip_prefix("${") {
        Some(after) => {
            let close = super::super::lexer::closing_brace(after)
                .ok_or_else(|| Problem::new(inner_at + lead, "unterminated `${`: missing `}`"))?;
            let end = lead + 2 + close + 1;
            let Some(rest) = inner[end..].trim_start().strip_prefix(',') else {
                return Err(Problem::new(
                    inner_at + end,
                    "missing `,PATH` after the value",
                ));
            };
            let span = args::Span {
                text: inner[lead..end].trim(),
                at: inner_at + lead,
            };
            let path_at = inner_at + inner.len() - rest.len();
            (Some(args::parse(span, Mode::Expression)?), rest, path_at)
        }
        None => (None, inner, inner_at),
    };
    if path.trim().is_empty() {
        return Err(Problem::new(at, "`jsonpath` needs a path such as `$.id`"));
    }
    let expression = crate::jsonpath(path, false).map_err(|e| {
        let byte = path
            .char_indices()
            .nth(e.column.saturating_sub(1))
            .map_or(path.len(), |(i, _)| i);
        Problem::new(path_at + byte, format!("invalid JSONPath: {}", e.message))
    })?;
    Ok(Call::JsonPath(
        source,
        Query {
            text: path.trim().into(),
            expression,
        },
    ))
}
