//! Arguments of the `${name(a,b,…)}` functions and of method calls.
//!
//! An argument is a quoted text, a bare word (a number is a bare word read as one when
//! the function wants a number), a nested function `${…}`, a template, or — where the
//! function takes a predicate (`iif`, `not`) — a condition such as `${header.n} > 3`.
//! Each is compiled once, with the parser the whole expression uses.

use std::sync::Arc;

use camel_api::{CamelError, Exchange, Value};

use super::super::ast::{Node, Operand};
use super::super::compare;
use super::super::parser::{self, Mode};
use crate::problem::Problem;

/// A compiled sub-expression, compared by its text (a compiled regex has no equality).
#[derive(Debug, Clone)]
pub(crate) struct Nested {
    text: Arc<str>,
    mode: Mode,
    node: Arc<Node>,
}

impl PartialEq for Nested {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.mode == other.mode
    }
}

impl Nested {
    /// Compiles `text`, found at byte `at` of the whole expression.
    pub(crate) fn parse(text: &str, at: usize, mode: Mode) -> Result<Nested, Problem> {
        let node = parser::parse(text, mode).map_err(|p| Problem::new(at + p.at, p.message))?;
        Ok(Nested {
            text: text.into(),
            mode,
            node: Arc::new(node),
        })
    }

    /// Wraps a node parsed from `text` (which may be a rewritten form of the source).
    pub(crate) fn from_node(text: &str, mode: Mode, node: Node) -> Nested {
        Nested {
            text: text.into(),
            mode,
            node: Arc::new(node),
        }
    }

    pub(crate) fn value(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        self.node.evaluate(exchange)
    }

    pub(crate) fn holds(&self, exchange: &Exchange) -> Result<bool, CamelError> {
        self.node.matches(exchange)
    }
}

/// One argument.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Arg {
    /// Known at parse time: quoted text or a bare word.
    Literal(Value),
    /// Read from the exchange.
    Nested(Nested),
}

impl Arg {
    pub(crate) fn value(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        match self {
            Arg::Literal(v) => Ok(v.clone()),
            Arg::Nested(n) => n.value(exchange),
        }
    }

    pub(crate) fn holds(&self, exchange: &Exchange) -> Result<bool, CamelError> {
        match self {
            Arg::Literal(v) => Ok(compare::truthy(v)),
            Arg::Nested(n) => n.holds(exchange),
        }
    }
}

/// An argument's text and where it starts in the whole expression.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span<'a> {
    pub(crate) text: &'a str,
    pub(crate) at: usize,
}

/// Splits `inner` (the text between the parentheses, at byte `at`) at the commas that
/// are outside quotes, parentheses and nested `${…}`. An empty `inner` has no argument.
pub(crate) fn split(inner: &str, at: usize) -> Result<Vec<Span<'_>>, Problem> {
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    let bytes = inner.as_bytes();
    let mut spans = Vec::new();
    let mut start = 0;
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'\'' | b'"' if is_quote_start(inner, i) => quote = Some(b),
                b'(' | b'{' => depth += 1,
                b')' | b'}' => depth = depth.saturating_sub(1),
                b',' if depth == 0 => {
                    spans.push(trimmed(inner, start, i, at));
                    start = i + 1;
                }
                _ => {}
            },
        }
        i += 1;
    }
    if let Some(q) = quote {
        let open = inner[..].rfind(q as char).unwrap_or(0);
        return Err(Problem::new(
            at + open,
            "unterminated quote in the arguments",
        ));
    }
    spans.push(trimmed(inner, start, inner.len(), at));
    Ok(spans)
}

/// A quote opens a literal only at the start of an argument (after spaces), so that an
/// apostrophe inside a word stays text.
fn is_quote_start(inner: &str, i: usize) -> bool {
    inner[..i]
        .trim_end_matches(' ')
        .chars()
        .next_back()
        .is_none_or(|c| c == ',' || c == '(')
}

fn trimmed(inner: &str, start: usize, end: usize, at: usize) -> Span<'_> {
    let raw = &inner[start..end];
    let lead = raw.len() - raw.trim_start().len();
    Span {
        text: raw.trim(),
        at: at + start + lead,
    }
}

/// Compiles one argument.
pub(crate) fn parse(span: Span<'_>, mode: Mode) -> Result<Arg, Problem> {
    let text = span.text;
    if text.is_empty() {
        return Err(Problem::new(span.at, "empty argument"));
    }
    for q in ['\'', '"'] {
        if let Some(inner) = text.strip_prefix(q).and_then(|t| t.strip_suffix(q)) {
            if text.len() >= 2 && !inner.contains(q) {
                // Functions inside a quoted argument are filled in, as Camel evaluates
                // its arguments (`${concat('${header.a}','-x')}`).
                if inner.contains("${") {
                    return Ok(match parser::quoted_template(inner) {
                        Operand::Literal(v) => Arg::Literal(v),
                        operand => {
                            Arg::Nested(Nested::from_node(inner, mode, Node::Value(operand)))
                        }
                    });
                }
                return Ok(Arg::Literal(Value::Text(inner.into())));
            }
        }
    }
    let nested = Nested::parse(text, span.at, mode)?;
    Ok(match &*nested.node {
        Node::Value(Operand::Literal(v)) => Arg::Literal(v.clone()),
        _ => Arg::Nested(nested),
    })
}

/// Compiles every argument as a value.
pub(crate) fn parse_all(spans: &[Span<'_>]) -> Result<Vec<Arg>, Problem> {
    spans.iter().map(|s| parse(*s, Mode::Expression)).collect()
}

/// An integer argument known at parse time (`substring(2)`, `random(10)`).
pub(crate) fn literal_int(arg: &Arg, span: Span<'_>, what: &str) -> Result<Option<i64>, Problem> {
    match arg {
        Arg::Literal(v) => match compare::parse_number(&v.to_string()) {
            Some(Value::Int(i)) => Ok(Some(i)),
            _ => Err(Problem::new(
                span.at,
                format!("{what} must be a whole number, not `{}`", span.text),
            )),
        },
        Arg::Nested(_) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(inner: &str) -> Vec<&str> {
        split(inner, 0).unwrap().iter().map(|s| s.text).collect()
    }

    #[test]
    fn splits_outside_quotes_and_nesting() {
        assert_eq!(
            texts("a, 'b,c' ,${concat(x,y)}"),
            ["a", "'b,c'", "${concat(x,y)}"]
        );
        assert_eq!(texts(""), Vec::<&str>::new());
        assert_eq!(texts("it's,x"), ["it's", "x"]);
        let spans = split("a,  b", 10).unwrap();
        assert_eq!(spans[1].at, 14);
    }

    #[test]
    fn unterminated_quote_is_located() {
        assert_eq!(split("a,'b", 5).unwrap_err().at, 7);
    }

    #[test]
    fn literals_and_nested_arguments() {
        let span = |t| Span { text: t, at: 0 };
        assert_eq!(
            parse(span("'a b'"), Mode::Expression).unwrap(),
            Arg::Literal(Value::from("a b"))
        );
        assert_eq!(
            parse(span("12"), Mode::Expression).unwrap(),
            Arg::Literal(Value::from("12"))
        );
        assert!(matches!(
            parse(span("${body}"), Mode::Expression).unwrap(),
            Arg::Nested(_)
        ));
        assert_eq!(parse(span("${nope}"), Mode::Expression).unwrap_err().at, 2);
    }
}
