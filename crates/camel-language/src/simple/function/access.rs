//! `[index]`, `[key]` and method calls after `body`, `header.x` and `exchangeProperty.x`:
//! the part of Camel's OGNL that makes sense without Java objects.
//!
//! Lists and maps are JSON arrays and objects. The methods are those of Java's `String`,
//! `List` and `Map` that routes use most; any other name is a parse error.

use std::borrow::Cow;

use camel_api::{CamelError, Exchange, Value};

use super::args::{self, Arg, Span};
use super::text;
use crate::problem::Problem;

/// One step applied to a value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// `[2]`, `[last]`, `[last-1]`: an element of a list.
    Position(Position),
    /// `[key]`, `['key']`: an entry of a map.
    Key(Box<str>),
    /// `.name(args)`.
    Method(Method),
    /// `.name` that is not one of the methods: the entry of a map, as Camel reads
    /// `${body.name}` of a `Map` body (a JSON object here).
    Field(Box<str>),
    /// `?.`: the rest is null when the value so far is null (Camel's null-safe
    /// operator), rather than an error.
    NullSafe,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Position {
    FromStart(usize),
    FromEnd(usize),
}

/// A supported method.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Method {
    ToUpperCase,
    ToLowerCase,
    Trim,
    Length,
    Size,
    IsEmpty,
    ToString,
    Substring(Arg, Option<Arg>),
    StartsWith(Arg),
    EndsWith(Arg),
    Contains(Arg),
    Split(Arg),
    Replace(Arg, Arg),
    Get(Arg),
}

/// Method names, for the error that lists them.
const METHODS: &str = "toUpperCase, toLowerCase, trim, length, size, isEmpty, toString, \
                       substring, startsWith, endsWith, contains, split, replace, get";

/// The methods without arguments, which a bare name (`${body.size}`) calls; any other
/// bare name reads a map entry.
const BARE_METHODS: &[&str] = &[
    "toUpperCase",
    "toLowerCase",
    "trim",
    "length",
    "size",
    "isEmpty",
    "toString",
];

/// Parses the steps in `rest` (at byte `at`). `bare_methods` lets a method without
/// arguments drop its parentheses (`${body.length}`), as Camel allows on the body.
pub(crate) fn parse_steps(rest: &str, at: usize, bare_methods: bool) -> Result<Vec<Step>, Problem> {
    let mut steps = Vec::new();
    let mut i = 0;
    while i < rest.len() {
        let here = at + i;
        let tail = &rest[i..];
        if let Some(inner) = tail.strip_prefix('[') {
            let Some(close) = inner.find(']') else {
                return Err(Problem::new(here, "missing `]` after the index"));
            };
            steps.push(parse_index(inner[..close].trim(), here + 1)?);
            i += close + 2;
        } else if tail.starts_with("?.") {
            steps.push(Step::NullSafe);
            i += 1;
        } else if let Some(after_dot) = tail.strip_prefix('.') {
            let name_len = after_dot
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(after_dot.len());
            let name = &after_dot[..name_len];
            let name_at = here + 1;
            if name.is_empty() {
                return Err(Problem::new(name_at, "missing method name after `.`"));
            }
            let after_name = &after_dot[name_len..];
            let (spans, used) = if let Some(inner) = after_name.strip_prefix('(') {
                let Some(close) = closing_paren(inner) else {
                    return Err(Problem::new(
                        name_at + name_len,
                        "missing `)` after the arguments",
                    ));
                };
                let spans = args::split(&inner[..close], name_at + name_len + 1)?;
                (Some(spans), name_len + close + 2)
            } else {
                (None, name_len)
            };
            if spans.is_none() && !bare_methods {
                return Err(Problem::new(
                    name_at,
                    format!("`{name}` needs parentheses here: write `{name}()`"),
                ));
            }
            match spans {
                // A name without parentheses that no method has reads a map entry.
                None if !BARE_METHODS.contains(&name) => {
                    steps.push(Step::Field(name.into()));
                }
                spans => {
                    let spans = spans.unwrap_or_default();
                    steps.push(Step::Method(parse_method(name, name_at, &spans)?));
                }
            }
            i += 1 + used;
        } else {
            return Err(Problem::new(here, "expected `.method()` or `[index]` here"));
        }
    }
    Ok(steps)
}

/// The offset of the `)` that closes an argument list whose content starts `text`,
/// skipping quoted text and nested parentheses and braces.
pub(crate) fn closing_paren(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote = None;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"')
                if text[..i].trim_end().ends_with([',', '(']) || text[..i].trim().is_empty() =>
            {
                quote = Some(c)
            }
            (None, '(' | '{') => depth += 1,
            (None, ')') if depth == 0 => return Some(i),
            (None, ')' | '}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

fn parse_index(inner: &str, at: usize) -> Result<Step, Problem> {
    if inner.is_empty() {
        return Err(Problem::new(at, "missing index or key in `[]`"));
    }
    if let Some(from_end) = inner.strip_prefix("last") {
        let back = match from_end.trim() {
            "" => Some(0),
            minus => minus.strip_prefix('-').and_then(|n| n.trim().parse().ok()),
        };
        return back
            .map(|n| Step::Position(Position::FromEnd(n)))
            .ok_or_else(|| {
                Problem::new(at, format!("bad index `{inner}`: write `last` or `last-N`"))
            });
    }
    if let Ok(n) = inner.parse::<usize>() {
        return Ok(Step::Position(Position::FromStart(n)));
    }
    let key = text::unquote(inner);
    Ok(Step::Key(key.into()))
}

fn parse_method(name: &str, at: usize, spans: &[Span<'_>]) -> Result<Method, Problem> {
    let arity = |n: usize, m: usize| -> Result<Vec<Arg>, Problem> {
        if spans.len() < n || spans.len() > m {
            let want = if n == m {
                format!("{n}")
            } else {
                format!("{n} or {m}")
            };
            return Err(Problem::new(
                at,
                format!("`{name}` takes {want} argument(s), not {}", spans.len()),
            ));
        }
        args::parse_all(spans)
    };
    let one = |v: Vec<Arg>| v.into_iter().next().ok_or_else(|| arity_bug(at));
    let two = |v: Vec<Arg>| {
        let mut v = v.into_iter();
        match (v.next(), v.next()) {
            (Some(a), b) => Ok((a, b)),
            _ => Err(arity_bug(at)),
        }
    };
    Ok(match name {
        "toUpperCase" => arity(0, 0).map(|_| Method::ToUpperCase)?,
        "toLowerCase" => arity(0, 0).map(|_| Method::ToLowerCase)?,
        "trim" => arity(0, 0).map(|_| Method::Trim)?,
        "length" => arity(0, 0).map(|_| Method::Length)?,
        "size" => arity(0, 0).map(|_| Method::Size)?,
        "isEmpty" => arity(0, 0).map(|_| Method::IsEmpty)?,
        "toString" => arity(0, 0).map(|_| Method::ToString)?,
        "substring" => two(arity(1, 2)?).map(|(begin, end)| Method::Substring(begin, end))?,
        "startsWith" => Method::StartsWith(one(arity(1, 1)?)?),
        "endsWith" => Method::EndsWith(one(arity(1, 1)?)?),
        "contains" => Method::Contains(one(arity(1, 1)?)?),
        "split" => Method::Split(one(arity(1, 1)?)?),
        "get" => Method::Get(one(arity(1, 1)?)?),
        "replace" => match two(arity(2, 2)?)? {
            (from, Some(to)) => Method::Replace(from, to),
            _ => return Err(arity_bug(at)),
        },
        other => {
            return Err(Problem::new(
                at,
                format!(
                    "unsupported method `{other}`; supported: {METHODS} \
                     (a map entry is read as `[{other}]`)"
                ),
            ))
        }
    })
}

fn arity_bug(at: usize) -> Problem {
    Problem::new(at, "wrong number of arguments")
}

/// Applies the steps to `value`.
pub(crate) fn apply<'a>(
    mut value: Cow<'a, Value>,
    steps: &[Step],
    exchange: &Exchange,
) -> Result<Cow<'a, Value>, CamelError> {
    for step in steps {
        value = Cow::Owned(match step {
            Step::NullSafe if value.is_null() => return Ok(Cow::Owned(Value::Null)),
            Step::NullSafe => continue,
            Step::Position(p) => position(&value, *p)?,
            Step::Key(k) => key(&value, k)?,
            Step::Field(name) => field(&value, name)?,
            Step::Method(m) => call(&value, m, exchange)?,
        });
    }
    Ok(value)
}

fn fail(message: impl std::fmt::Display) -> CamelError {
    CamelError::processor(format!("simple: {message}"))
}

fn position(value: &Value, p: Position) -> Result<Value, CamelError> {
    let Value::Json(j) = value else {
        return Err(fail(format!(
            "cannot index {}: `[n]` needs a list (a JSON array)",
            text::kind_of(value)
        )));
    };
    let Some(items) = j.as_array() else {
        return Err(fail("cannot index a map with a number; use `[key]`"));
    };
    let index = match p {
        Position::FromStart(n) => Some(n),
        Position::FromEnd(n) => items.len().checked_sub(1 + n),
    };
    index
        .and_then(|i| items.get(i))
        .map(|v| Value::from_json(v.clone()))
        .ok_or_else(|| {
            fail(format!(
                "index out of bounds: the list has {} elements",
                items.len()
            ))
        })
}

fn key(value: &Value, key: &str) -> Result<Value, CamelError> {
    match value {
        Value::Null => Err(fail(format!("cannot read `[{key}]` of null"))),
        Value::Json(j) => match j.as_object() {
            Some(map) => Ok(map.get(key).cloned().map_or(Value::Null, Value::from_json)),
            None => Err(fail(format!(
                "cannot read `[{key}]` of a list: use a number"
            ))),
        },
        other => Err(fail(format!(
            "cannot read `[{key}]` of {}: it needs a map (a JSON object)",
            text::kind_of(other)
        ))),
    }
}

/// `.name` of a map: its entry (null when absent, as `Map.get`).
fn field(value: &Value, name: &str) -> Result<Value, CamelError> {
    match value {
        Value::Null => Err(fail(format!(
            "cannot read `{name}` of null (`?.{name}` gives null instead)"
        ))),
        Value::Json(j) if j.is_object() => key(value, name),
        other => Err(fail(format!(
            "cannot read `{name}` of {}: it needs a map (a JSON object; unmarshal a JSON \
             text first with `unmarshal: {{json: {{}}}}`)",
            text::kind_of(other)
        ))),
    }
}

fn call(value: &Value, method: &Method, exchange: &Exchange) -> Result<Value, CamelError> {
    if value.is_null() {
        return Err(fail("cannot call a method on null"));
    }
    let s = || text::text_of(value);
    let arg_text =
        |a: &Arg| -> Result<String, CamelError> { Ok(text::text_of(&a.value(exchange)?)) };
    Ok(match method {
        Method::ToUpperCase => Value::Text(s().to_uppercase().into()),
        Method::ToLowerCase => Value::Text(s().to_lowercase().into()),
        Method::Trim => Value::Text(s().trim().into()),
        Method::ToString => Value::Text(s().into()),
        Method::Length | Method::Size => Value::Int(text::size(value) as i64),
        Method::IsEmpty => Value::Bool(text::size(value) == 0),
        Method::StartsWith(a) => Value::Bool(s().starts_with(&arg_text(a)?)),
        Method::EndsWith(a) => Value::Bool(s().ends_with(&arg_text(a)?)),
        Method::Contains(a) => match value {
            Value::Json(_) => Value::Bool(super::super::compare::contains(
                value,
                &a.value(exchange)?,
                false,
            )),
            _ => Value::Bool(s().contains(&arg_text(a)?)),
        },
        Method::Replace(from, to) => {
            Value::Text(s().replace(&arg_text(from)?, &arg_text(to)?).into())
        }
        Method::Split(sep) => text::java_split(&s(), &arg_text(sep)?)?,
        Method::Substring(begin, end) => {
            let text = s();
            let chars: Vec<char> = text.chars().collect();
            let begin = index_arg(begin, exchange)?;
            let end = match end {
                Some(e) => index_arg(e, exchange)?,
                None => chars.len(),
            };
            if begin > end || end > chars.len() {
                return Err(fail(format!(
                    "substring({begin}, {end}) is out of range for a text of {} characters",
                    chars.len()
                )));
            }
            Value::Text(chars[begin..end].iter().collect::<String>().into())
        }
        Method::Get(a) => {
            let arg = a.value(exchange)?;
            match (value, arg.as_i64()) {
                (Value::Json(j), Some(i)) if j.is_array() => match usize::try_from(i) {
                    Ok(i) => position(value, Position::FromStart(i))?,
                    Err(_) => return Err(fail(format!("negative index {i}"))),
                },
                _ => key(value, &text::text_of(&arg))?,
            }
        }
    })
}

fn index_arg(arg: &Arg, exchange: &Exchange) -> Result<usize, CamelError> {
    let v = arg.value(exchange)?;
    v.as_i64()
        .and_then(|i| usize::try_from(i).ok())
        .ok_or_else(|| fail(format!("`{}` is not an index", text::text_of(&v))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_indexes_and_methods() {
        let steps = parse_steps("[0].toUpperCase()[last-1]", 0, false).unwrap();
        assert_eq!(steps.len(), 3);
        assert_eq!(steps[0], Step::Position(Position::FromStart(0)));
        assert_eq!(steps[1], Step::Method(Method::ToUpperCase));
        assert_eq!(steps[2], Step::Position(Position::FromEnd(1)));
        assert_eq!(
            parse_steps("['a b']", 0, false).unwrap(),
            [Step::Key("a b".into())]
        );
        assert_eq!(
            parse_steps(".length", 0, true).unwrap(),
            [Step::Method(Method::Length)]
        );
    }

    #[test]
    fn bad_steps_are_located() {
        assert_eq!(parse_steps(".length", 4, false).unwrap_err().at, 5);
        let e = parse_steps(".frobnicate()", 10, true).unwrap_err();
        assert_eq!(e.at, 11);
        assert!(
            e.message.contains("unsupported method `frobnicate`"),
            "{}",
            e.message
        );
        assert_eq!(parse_steps(".substring()", 0, true).unwrap_err().at, 1);
        assert_eq!(parse_steps("[1", 3, true).unwrap_err().at, 3);
        assert!(parse_steps("[last+1]", 0, true).is_err());
    }
}
