//! The parsed form of a simple expression, and its evaluation.
//!
//! Everything that can be decided from the text is decided at parse time: functions are
//! resolved, literals typed, regexes compiled, `in` lists split. Evaluation only reads the
//! exchange, borrowing header values instead of cloning them where it can.

use std::borrow::Cow;
use std::sync::Arc;

use camel_api::{CamelError, Exchange, ExpressionError, Value};
use regex::Regex;

use super::compare;
use super::function::Function;

/// A value-producing leaf.
#[derive(Debug, Clone)]
pub(crate) enum Operand {
    /// A literal: quoted text, a number, `true`, `false`, `null`.
    Literal(Value),
    /// A lone `${...}`: its value, untyped.
    Function(Function),
    /// Text mixed with functions: always text.
    Template(Template),
}

impl Operand {
    pub(crate) fn value<'a>(
        &'a self,
        exchange: &'a Exchange,
    ) -> Result<Cow<'a, Value>, CamelError> {
        match self {
            Operand::Literal(v) => Ok(Cow::Borrowed(v)),
            Operand::Function(f) => f.value(exchange),
            Operand::Template(t) => Ok(Cow::Owned(Value::Text(t.render(exchange)?))),
        }
    }
}

/// Literal text interleaved with functions.
#[derive(Debug, Clone)]
pub(crate) struct Template {
    pieces: Box<[Piece]>,
    /// Capacity reserved for the output: literal text plus a guess per function.
    capacity: usize,
}

#[derive(Debug, Clone)]
enum Piece {
    Text(Box<str>),
    Function(Function),
}

/// Bytes reserved per function when rendering a template; a guess that covers typical
/// ids and short header values so most renders never reallocate.
const FUNCTION_CAPACITY: usize = 24;

/// A render buffer larger than this is not kept for the thread's next render.
const KEPT_BUFFER: usize = 64 * 1024;

thread_local! {
    /// Where templates render before the text is allocated once, at its final size: a
    /// `String` per render would cost an allocation and a free on top (the shared text
    /// needs its own allocation either way).
    static RENDER_BUFFER: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

impl Template {
    /// Starts an empty template.
    pub(crate) fn builder() -> TemplateBuilder {
        TemplateBuilder::default()
    }

    fn render(&self, exchange: &Exchange) -> Result<Arc<str>, CamelError> {
        RENDER_BUFFER.with(|buffer| match buffer.try_borrow_mut() {
            Ok(mut out) => {
                out.clear();
                out.reserve(self.capacity);
                let rendered = self
                    .write(exchange, &mut out)
                    .map(|()| Arc::from(out.as_str()));
                if out.capacity() > KEPT_BUFFER {
                    *out = String::new();
                }
                rendered
            }
            // Only if a function ever renders a template itself.
            Err(_) => {
                let mut out = String::with_capacity(self.capacity);
                self.write(exchange, &mut out)?;
                Ok(out.into())
            }
        })
    }

    fn write(&self, exchange: &Exchange, out: &mut String) -> Result<(), CamelError> {
        for piece in self.pieces.iter() {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Function(f) => f.append_to(exchange, out)?,
            }
        }
        Ok(())
    }
}

/// A piece of a template as a renderer that treats function output apart from the
/// literal text sees it (the URI templates of `to_d` encode the one, not the other).
#[derive(Debug, Clone, Copy)]
pub(crate) enum PieceRef<'a> {
    Text(&'a str),
    Function(&'a Function),
}

impl Template {
    /// The pieces in order.
    pub(crate) fn pieces(&self) -> impl Iterator<Item = PieceRef<'_>> {
        self.pieces.iter().map(|p| match p {
            Piece::Text(t) => PieceRef::Text(t),
            Piece::Function(f) => PieceRef::Function(f),
        })
    }
}

/// Accumulates template pieces, merging adjacent text.
#[derive(Debug, Default)]
pub(crate) struct TemplateBuilder {
    pieces: Vec<Piece>,
    text: String,
}

impl TemplateBuilder {
    pub(crate) fn text(&mut self, text: &str) {
        self.text.push_str(text);
    }

    pub(crate) fn function(&mut self, function: Function) {
        self.flush();
        self.pieces.push(Piece::Function(function));
    }

    fn flush(&mut self) {
        if !self.text.is_empty() {
            let text = std::mem::take(&mut self.text);
            self.pieces.push(Piece::Text(text.into_boxed_str()));
        }
    }

    /// The operand: plain text when there is no function, the function alone when the
    /// template is exactly one function, a template otherwise.
    pub(crate) fn finish(mut self) -> Operand {
        self.flush();
        match self.pieces.as_slice() {
            [] => Operand::Literal(Value::Text("".into())),
            [Piece::Text(t)] => Operand::Literal(Value::Text((&**t).into())),
            [Piece::Function(f)] => Operand::Function(f.clone()),
            _ => {
                let capacity = self
                    .pieces
                    .iter()
                    .map(|p| match p {
                        Piece::Text(t) => t.len(),
                        Piece::Function(_) => FUNCTION_CAPACITY,
                    })
                    .sum();
                Operand::Template(Template {
                    pieces: self.pieces.into_boxed_slice(),
                    capacity,
                })
            }
        }
    }
}

/// A binary operator that compares two operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    EqIgnoreCase,
    NeIgnoreCase,
    Contains,
    NotContains,
    ContainsIgnoreCase,
    NotContainsIgnoreCase,
    StartsWith,
    NotStartsWith,
    EndsWith,
    NotEndsWith,
}

impl CompareOp {
    fn holds(self, a: &Value, b: &Value) -> bool {
        use std::cmp::Ordering::*;
        use CompareOp::*;
        match self {
            Eq => compare::equals(a, b),
            Ne => !compare::equals(a, b),
            Lt => compare::order(a, b) == Some(Less),
            Le => matches!(compare::order(a, b), Some(Less | Equal)),
            Gt => compare::order(a, b) == Some(Greater),
            Ge => matches!(compare::order(a, b), Some(Greater | Equal)),
            EqIgnoreCase => compare::equals_ignore_case(a, b),
            NeIgnoreCase => !compare::equals_ignore_case(a, b),
            Contains => compare::contains(a, b, false),
            NotContains => !compare::contains(a, b, false),
            ContainsIgnoreCase => compare::contains(a, b, true),
            NotContainsIgnoreCase => !compare::contains(a, b, true),
            StartsWith => compare::affix(a, b, true),
            NotStartsWith => !compare::affix(a, b, true),
            EndsWith => compare::affix(a, b, false),
            NotEndsWith => !compare::affix(a, b, false),
        }
    }
}

/// The right side of `regex`.
#[derive(Debug, Clone)]
pub(crate) enum Pattern {
    /// A literal pattern, compiled at parse time.
    Fixed(Regex),
    /// A pattern read from the exchange, compiled per evaluation.
    Dynamic {
        operand: Operand,
        /// Expression text and column, for the error a bad pattern raises.
        expression: Arc<str>,
        column: usize,
    },
}

/// The right side of `in`.
#[derive(Debug, Clone)]
pub(crate) enum List {
    /// A literal list, split at parse time.
    Fixed(Box<[Value]>),
    /// A comma-separated list read from the exchange.
    Dynamic(Operand),
}

/// Compiles a pattern that must match the whole text, as Camel's `regex` does. The error
/// is one line (the regex crate's spans several, drawing a caret under the pattern), so
/// it stays on the line of the error's location.
pub(crate) fn whole_match_regex(pattern: &str) -> Result<Regex, String> {
    whole_match_with(pattern, Regex::new)
}

/// [`whole_match_regex`] with the compiler given (the bounded one of patterns read from
/// the exchange, say).
pub(crate) fn whole_match_with(
    pattern: &str,
    build: impl Fn(&str) -> Result<Regex, regex::Error>,
) -> Result<Regex, String> {
    build(&format!(r"\A(?:{pattern})\z")).map_err(|wrapped| {
        // The wrapper shifts positions, and an unclosed `(` of the pattern swallows the
        // wrapper's `)`: the pattern alone says what is wrong with it, and where.
        match build(pattern) {
            Err(own) => one_line(&own, true),
            Ok(_) => one_line(&wrapped, false),
        }
    })
}

/// `regex parse error:\n    a(b\n     ^\nerror: unclosed group` becomes
/// `unclosed group (at column 2 of the pattern)`.
fn one_line(e: &regex::Error, with_column: bool) -> String {
    let text = e.to_string();
    let lines: Vec<&str> = text.lines().collect();
    let Some(reason) = lines.iter().rev().find_map(|l| l.strip_prefix("error: ")) else {
        return lines.join(" ");
    };
    // With a one-line pattern, line 3 holds the caret under line 2's pattern.
    let column = match lines.as_slice() {
        [_, shown, caret, _] if with_column => caret
            .find('^')
            .and_then(|c| c.checked_sub(shown.len() - shown.trim_start().len()))
            .map(|c| format!(" (at column {} of the pattern)", c + 1)),
        _ => None,
    };
    format!("{reason}{}", column.unwrap_or_default())
}

/// Splits an `in` list: comma-separated, items trimmed.
pub(crate) fn split_list(text: &str) -> Box<[Value]> {
    text.split(',')
        .map(|s| Value::Text(s.trim().into()))
        .collect()
}

/// One test inside a predicate.
#[derive(Debug, Clone)]
pub(crate) enum Condition {
    /// An operand on its own: true when its value is truthy.
    Test(Operand),
    Compare {
        left: Operand,
        op: CompareOp,
        right: Operand,
    },
    Regex {
        left: Operand,
        pattern: Pattern,
        negate: bool,
    },
    In {
        left: Operand,
        list: List,
        negate: bool,
    },
}

impl Condition {
    fn holds(&self, exchange: &Exchange) -> Result<bool, CamelError> {
        match self {
            Condition::Test(operand) => Ok(compare::truthy(&*operand.value(exchange)?)),
            Condition::Compare { left, op, right } => {
                Ok(op.holds(&*left.value(exchange)?, &*right.value(exchange)?))
            }
            Condition::Regex {
                left,
                pattern,
                negate,
            } => {
                let value = left.value(exchange)?;
                let Some(text) = compare::text(&value) else {
                    return Ok(*negate);
                };
                let found = match pattern {
                    Pattern::Fixed(regex) => regex.is_match(&text),
                    Pattern::Dynamic {
                        operand,
                        expression,
                        column,
                    } => {
                        let source = operand.value(exchange)?;
                        let source = compare::text(&source).unwrap_or_default();
                        let regex = super::dynamic_regex::whole_match(&source).map_err(|e| {
                            ExpressionError {
                                language: "simple".into(),
                                expression: expression.to_string(),
                                column: *column,
                                // The pattern came from the message: quoted, so a newline
                                // in it cannot start a forged log line.
                                message: format!("invalid regex {source:?}: {e}"),
                            }
                        })?;
                        super::dynamic_regex::is_match(&regex, &text)
                    }
                };
                Ok(found != *negate)
            }
            Condition::In { left, list, negate } => {
                let value = left.value(exchange)?;
                let found = match list {
                    List::Fixed(items) => items.iter().any(|item| compare::equals(&value, item)),
                    List::Dynamic(operand) => {
                        let items = operand.value(exchange)?;
                        compare::text(&items).is_some_and(|items| {
                            items.split(',').any(|item| {
                                compare::equals(&value, &Value::Text(item.trim().into()))
                            })
                        })
                    }
                };
                Ok(found != *negate)
            }
        }
    }
}

/// The parsed expression.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    /// A value: a literal, a function or a template.
    Value(Operand),
    /// Conditions joined by `||` of `&&`s (`&&` binds tighter).
    Logic(Box<[Box<[Condition]>]>),
}

impl Node {
    /// The expression's value; a condition yields a boolean.
    pub(crate) fn evaluate(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        match self {
            // The two shapes every `set_header`/`transform` has, without the `Cow` between.
            Node::Value(Operand::Function(Function::Header(name))) => {
                Ok(exchange.header(name).cloned().unwrap_or_default())
            }
            Node::Value(Operand::Template(t)) => Ok(Value::Text(t.render(exchange)?)),
            Node::Value(operand) => Ok(operand.value(exchange)?.into_owned()),
            Node::Logic(_) => Ok(Value::Bool(self.matches(exchange)?)),
        }
    }

    /// The expression as a predicate: a condition's result, or a value's truthiness.
    pub(crate) fn matches(&self, exchange: &Exchange) -> Result<bool, CamelError> {
        match self {
            Node::Value(operand) => Ok(compare::truthy(&*operand.value(exchange)?)),
            Node::Logic(any) => {
                for all in any.iter() {
                    let mut holds = true;
                    for condition in all.iter() {
                        if !condition.holds(exchange)? {
                            holds = false;
                            break;
                        }
                    }
                    if holds {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_builder_collapses_trivial_cases() {
        assert!(
            matches!(Template::builder().finish(), Operand::Literal(Value::Text(ref t)) if t.is_empty())
        );
        let mut b = Template::builder();
        b.text("a");
        b.text("b");
        assert!(matches!(b.finish(), Operand::Literal(Value::Text(ref t)) if &**t == "ab"));
        let mut b = Template::builder();
        b.function(Function::Body);
        assert!(matches!(b.finish(), Operand::Function(Function::Body)));
    }

    #[test]
    fn template_renders_with_reserved_capacity() {
        let mut b = Template::builder();
        b.text("Hello ");
        b.function(Function::Body);
        b.text("!");
        let Operand::Template(t) = b.finish() else {
            panic!("expected a template");
        };
        assert_eq!(t.capacity, 7 + FUNCTION_CAPACITY);
        let out = t.render(&Exchange::new("you")).unwrap();
        assert_eq!(&*out, "Hello you!");
        // The buffer is reused: a second render starts from a clean one.
        let out = t.render(&Exchange::new("me")).unwrap();
        assert_eq!(&*out, "Hello me!");
        RENDER_BUFFER.with(|b| assert!(b.borrow().capacity() >= 7 + FUNCTION_CAPACITY));
    }

    #[test]
    fn a_huge_render_does_not_keep_its_buffer() {
        let mut b = Template::builder();
        b.text("x");
        b.function(Function::Body);
        let Operand::Template(t) = b.finish() else {
            panic!("expected a template");
        };
        let big = "y".repeat(KEPT_BUFFER + 1);
        let out = t.render(&Exchange::new(big.as_str())).unwrap();
        assert_eq!(out.len(), KEPT_BUFFER + 2);
        RENDER_BUFFER.with(|b| assert!(b.borrow().capacity() <= KEPT_BUFFER));
    }

    #[test]
    fn whole_match_is_anchored() {
        let r = whole_match_regex("a|b").unwrap();
        assert!(r.is_match("a"));
        assert!(!r.is_match("ab"));
    }
}
