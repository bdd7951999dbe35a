//! The `${name(args)}` functions: text, condition, list and math functions.
//!
//! Most take an optional last value that defaults to the message body (`${uppercase()}`
//! upper-cases the body, `${uppercase(${header.x})}` a header); the table in
//! `docs/languages.md` gives each one's arguments, in Camel's order.

use camel_api::{CamelError, Exchange, Value};
use rand::Rng;

use super::super::parser::Mode;
use super::args::{self, Arg};
use super::text;
use crate::problem::Problem;

/// A function with one optional value (the body by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unary {
    Uppercase,
    Lowercase,
    Trim,
    Capitalize,
    NormalizeWhitespace,
    Quote,
    Unquote,
    Length,
    Size,
    IsEmpty,
    IsAlpha,
    IsNumeric,
    IsAlphaNumeric,
    KindOfType,
    Abs,
    Floor,
    Ceil,
}

/// `sum`, `max`, `min`, `average` over integral numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Aggregate {
    Sum,
    Max,
    Min,
    Average,
}

/// A resolved call. `None` as a source means the message body.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Call {
    Unary(Unary, Option<Arg>),
    Contains(Option<Arg>, Arg),
    SubstringBefore(Option<Arg>, Arg),
    SubstringAfter(Option<Arg>, Arg),
    SubstringBetween(Option<Arg>, Arg, Arg),
    Substring {
        head: Arg,
        tail: Option<Arg>,
        source: Option<Arg>,
    },
    Replace {
        from: Arg,
        to: Arg,
        source: Option<Arg>,
    },
    Concat(Arg, Arg, Option<Arg>),
    Join {
        separator: Option<Arg>,
        prefix: Option<Arg>,
        source: Option<Arg>,
    },
    Split {
        source: Option<Arg>,
        separator: Option<Arg>,
    },
    Iif(Arg, Arg, Arg),
    Not(Option<Arg>),
    Aggregate(Aggregate, Box<[Arg]>),
    Random(Arg, Arg),
    Range(Arg, Arg),
    Empty(Empty),
}

/// What `${createEmpty(kind)}` makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Empty {
    Text,
    List,
    Map,
}

/// Names of the call functions, for suggestions.
pub(crate) const NAMES: &[&str] = &[
    "uppercase",
    "lowercase",
    "trim",
    "capitalize",
    "normalizeWhitespace",
    "quote",
    "unquote",
    "length",
    "size",
    "isEmpty",
    "isAlpha",
    "isNumeric",
    "isAlphaNumeric",
    "kindOfType",
    "abs",
    "floor",
    "ceil",
    "contains",
    "substringBefore",
    "substringAfter",
    "substringBetween",
    "substring",
    "replace",
    "concat",
    "join",
    "split",
    "iif",
    "not",
    "sum",
    "max",
    "min",
    "average",
    "random",
    "range",
    "createEmpty",
    "empty",
];

/// Resolves `name(inner)`; `None` when `name` is not a call function.
pub(crate) fn parse(
    name: &str,
    at: usize,
    inner: &str,
    inner_at: usize,
) -> Option<Result<Call, Problem>> {
    let unary = match name {
        "uppercase" => Some(Unary::Uppercase),
        "lowercase" => Some(Unary::Lowercase),
        "trim" => Some(Unary::Trim),
        "capitalize" => Some(Unary::Capitalize),
        "normalizeWhitespace" => Some(Unary::NormalizeWhitespace),
        "quote" => Some(Unary::Quote),
        "unquote" => Some(Unary::Unquote),
        "length" => Some(Unary::Length),
        "size" => Some(Unary::Size),
        "isEmpty" => Some(Unary::IsEmpty),
        "isAlpha" => Some(Unary::IsAlpha),
        "isNumeric" => Some(Unary::IsNumeric),
        "isAlphaNumeric" => Some(Unary::IsAlphaNumeric),
        "kindOfType" => Some(Unary::KindOfType),
        "abs" => Some(Unary::Abs),
        "floor" => Some(Unary::Floor),
        "ceil" => Some(Unary::Ceil),
        _ => None,
    };
    if !NAMES.contains(&name) {
        return None;
    }
    Some(parse_known(name, unary, at, inner, inner_at))
}

fn parse_known(
    name: &str,
    unary: Option<Unary>,
    at: usize,
    inner: &str,
    inner_at: usize,
) -> Result<Call, Problem> {
    let spans = args::split(inner, inner_at)?;
    let count = |min: usize, max: usize| -> Result<(), Problem> {
        if spans.len() < min || spans.len() > max {
            let want = match (min, max) {
                (a, b) if a == b => format!("{a}"),
                (a, usize::MAX) => format!("{a} or more"),
                (a, b) => format!("{a} to {b}"),
            };
            return Err(Problem::new(
                at,
                format!("`{name}` takes {want} argument(s), not {}", spans.len()),
            ));
        }
        Ok(())
    };
    let values = || args::parse_all(&spans).map(|v| v.into_iter());
    if let Some(u) = unary {
        count(0, 1)?;
        return Ok(Call::Unary(u, values()?.next()));
    }
    Ok(match name {
        "contains" | "substringBefore" | "substringAfter" => {
            count(1, 2)?;
            let mut v = values()?;
            let (source, needle) = match (v.next(), v.next()) {
                (Some(a), Some(b)) => (Some(a), b),
                (Some(a), None) => (None, a),
                _ => return Err(Problem::new(at, "missing argument")),
            };
            match name {
                "contains" => Call::Contains(source, needle),
                "substringBefore" => Call::SubstringBefore(source, needle),
                _ => Call::SubstringAfter(source, needle),
            }
        }
        "substringBetween" => {
            count(2, 3)?;
            let mut v: Vec<Arg> = values()?.collect();
            let before = pop(&mut v, at)?;
            let after = pop(&mut v, at)?;
            Call::SubstringBetween(v.pop(), after, before)
        }
        "substring" => {
            count(1, 3)?;
            for (span, arg) in spans.iter().zip(values()?).take(2) {
                args::literal_int(&arg, *span, "a substring count")?;
            }
            let mut v = values()?;
            let head = v
                .next()
                .ok_or_else(|| Problem::new(at, "missing argument"))?;
            Call::Substring {
                head,
                tail: v.next(),
                source: v.next(),
            }
        }
        "replace" => {
            count(2, 3)?;
            let mut v = values()?;
            match (v.next(), v.next()) {
                (Some(from), Some(to)) => Call::Replace {
                    from,
                    to,
                    source: v.next(),
                },
                _ => return Err(Problem::new(at, "missing argument")),
            }
        }
        "concat" => {
            count(2, 3)?;
            let mut v = values()?;
            match (v.next(), v.next()) {
                (Some(a), Some(b)) => Call::Concat(a, b, v.next()),
                _ => return Err(Problem::new(at, "missing argument")),
            }
        }
        "join" => {
            count(0, 3)?;
            let mut v = values()?;
            Call::Join {
                separator: v.next(),
                prefix: v.next(),
                source: v.next(),
            }
        }
        "split" => {
            count(0, 2)?;
            let mut v: Vec<Arg> = values()?.collect();
            let separator = v.pop();
            Call::Split {
                source: v.pop(),
                separator,
            }
        }
        "iif" => {
            count(3, 3)?;
            let predicate = args::parse(spans[0], Mode::Predicate)?;
            let mut v = args::parse_all(&spans[1..])?.into_iter();
            match (v.next(), v.next()) {
                (Some(a), Some(b)) => Call::Iif(predicate, a, b),
                _ => return Err(Problem::new(at, "missing argument")),
            }
        }
        "not" => {
            count(0, 1)?;
            let predicate = spans
                .first()
                .map(|s| args::parse(*s, Mode::Predicate))
                .transpose()?;
            Call::Not(predicate)
        }
        "sum" | "max" | "min" | "average" => {
            let kind = match name {
                "sum" => Aggregate::Sum,
                "max" => Aggregate::Max,
                "min" => Aggregate::Min,
                _ => Aggregate::Average,
            };
            Call::Aggregate(kind, values()?.collect())
        }
        "random" | "range" => {
            count(1, 2)?;
            for (span, arg) in spans.iter().zip(values()?) {
                args::literal_int(&arg, *span, "a bound")?;
            }
            let mut v: Vec<Arg> = values()?.collect();
            let max = pop(&mut v, at)?;
            let min = v.pop().unwrap_or(Arg::Literal(Value::Int(0)));
            if let (Arg::Literal(a), Arg::Literal(b)) = (&min, &max) {
                if name == "random" && a.as_i64() >= b.as_i64() {
                    return Err(Problem::new(at, "random(min,max) needs min < max"));
                }
            }
            if name == "random" {
                Call::Random(min, max)
            } else {
                Call::Range(min, max)
            }
        }
        _ => {
            // createEmpty / empty
            count(1, 1)?;
            let kind = spans[0].text.trim_matches(['\'', '"']);
            Call::Empty(match kind.to_ascii_lowercase().as_str() {
                "string" => Empty::Text,
                "list" => Empty::List,
                "map" => Empty::Map,
                other => {
                    return Err(Problem::new(
                        spans[0].at,
                        format!("cannot create an empty `{other}`: use string, list or map (there is no set type)"),
                    ))
                }
            })
        }
    })
}

fn pop(v: &mut Vec<Arg>, at: usize) -> Result<Arg, Problem> {
    v.pop().ok_or_else(|| Problem::new(at, "missing argument"))
}

fn fail(message: impl std::fmt::Display) -> CamelError {
    CamelError::processor(format!("simple: {message}"))
}

/// The value of `arg`, or the body when it is absent.
fn source(arg: &Option<Arg>, exchange: &Exchange) -> Result<Value, CamelError> {
    match arg {
        Some(a) => a.value(exchange),
        None => Ok(exchange.message.body.to_value()),
    }
}

fn text_arg(arg: &Arg, exchange: &Exchange) -> Result<String, CamelError> {
    Ok(text::text_of(&arg.value(exchange)?))
}

fn int(value: &Value, what: &str) -> Result<i64, CamelError> {
    value
        .as_i64()
        .or_else(|| value.as_utf8_text().and_then(|t| t.trim().parse().ok()))
        .ok_or_else(|| fail(format!("{what}: `{value}` is not a whole number")))
}

fn float(value: &Value, what: &str) -> Result<f64, CamelError> {
    value
        .as_f64()
        .or_else(|| value.as_utf8_text().and_then(|t| t.trim().parse().ok()))
        .ok_or_else(|| fail(format!("{what}: `{value}` is not a number")))
}

fn text_value(s: impl Into<std::sync::Arc<str>>) -> Value {
    Value::Text(s.into())
}

impl Call {
    pub(crate) fn value(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        Ok(match self {
            Call::Unary(u, arg) => unary(*u, source(arg, exchange)?)?,
            Call::Contains(s, needle) => {
                let hay = text::text_of(&source(s, exchange)?).to_lowercase();
                Value::Bool(hay.contains(&text_arg(needle, exchange)?.to_lowercase()))
            }
            Call::SubstringBefore(s, sep) => {
                let t = text::text_of(&source(s, exchange)?);
                let sep = text_arg(sep, exchange)?;
                t.find(&sep).map_or(Value::Null, |i| text_value(&t[..i]))
            }
            Call::SubstringAfter(s, sep) => {
                let t = text::text_of(&source(s, exchange)?);
                let sep = text_arg(sep, exchange)?;
                t.find(&sep)
                    .map_or(Value::Null, |i| text_value(&t[i + sep.len()..]))
            }
            Call::SubstringBetween(s, after, before) => {
                let t = text::text_of(&source(s, exchange)?);
                let (after, before) = (text_arg(after, exchange)?, text_arg(before, exchange)?);
                t.find(&after)
                    .map(|i| &t[i + after.len()..])
                    .and_then(|rest| rest.find(&before).map(|j| text_value(&rest[..j])))
                    .unwrap_or(Value::Null)
            }
            Call::Substring {
                head,
                tail,
                source: s,
            } => {
                let t = text::text_of(&source(s, exchange)?);
                let chars: Vec<char> = t.chars().collect();
                let head = int(&head.value(exchange)?, "substring")?;
                let tail = match tail {
                    Some(a) => int(&a.value(exchange)?, "substring")?.unsigned_abs() as usize,
                    None => 0,
                };
                let (front, back) = match head {
                    h if h < 0 && tail == 0 => (0, h.unsigned_abs() as usize),
                    h => (h.unsigned_abs() as usize, tail),
                };
                let end = chars.len().saturating_sub(back);
                text_value(
                    chars
                        .get(front.min(end)..end)
                        .unwrap_or_default()
                        .iter()
                        .collect::<String>(),
                )
            }
            Call::Replace {
                from,
                to,
                source: s,
            } => {
                let t = text::text_of(&source(s, exchange)?);
                let from = text::replace_escapes(&text_arg(from, exchange)?);
                let to = text::replace_escapes(&text_arg(to, exchange)?);
                if from.is_empty() {
                    text_value(t)
                } else {
                    text_value(t.replace(&from, &to))
                }
            }
            Call::Concat(a, b, sep) => {
                let sep = sep
                    .as_ref()
                    .map(|s| text_arg(s, exchange))
                    .transpose()?
                    .unwrap_or_default();
                text_value(format!(
                    "{}{sep}{}",
                    text_arg(a, exchange)?,
                    text_arg(b, exchange)?
                ))
            }
            Call::Join {
                separator,
                prefix,
                source: s,
            } => {
                let sep = separator
                    .as_ref()
                    .map(|a| text_arg(a, exchange))
                    .transpose()?;
                let prefix = prefix
                    .as_ref()
                    .map(|a| text_arg(a, exchange))
                    .transpose()?
                    .unwrap_or_default();
                let items = text::items(&source(s, exchange)?);
                let parts: Vec<String> = items.iter().map(|i| format!("{prefix}{i}")).collect();
                text_value(parts.join(sep.as_deref().unwrap_or(",")))
            }
            Call::Split {
                source: s,
                separator,
            } => {
                let t = text::text_of(&source(s, exchange)?);
                let sep = match separator {
                    Some(a) => unescape(&text_arg(a, exchange)?),
                    None => ",".to_owned(),
                };
                if sep.is_empty() {
                    return Err(fail("split: the separator is empty"));
                }
                text::text_list(t.split(sep.as_str()))
            }
            Call::Iif(p, yes, no) => {
                if p.holds(exchange)? {
                    yes.value(exchange)?
                } else {
                    no.value(exchange)?
                }
            }
            Call::Not(Some(p)) => Value::Bool(!p.holds(exchange)?),
            Call::Not(None) => {
                let body = exchange.message.body.to_value();
                let holds = !matches!(body, Value::Null | Value::Bool(false));
                Value::Bool(!holds)
            }
            Call::Aggregate(kind, args) => aggregate(*kind, args, exchange)?,
            Call::Random(min, max) => {
                let (min, max) = (
                    int(&min.value(exchange)?, "random")?,
                    int(&max.value(exchange)?, "random")?,
                );
                if min >= max {
                    return Err(fail(format!("random({min},{max}) needs min < max")));
                }
                Value::Int(rand::thread_rng().gen_range(min..max))
            }
            Call::Range(min, max) => {
                let (min, max) = (
                    int(&min.value(exchange)?, "range")?,
                    int(&max.value(exchange)?, "range")?,
                );
                Value::from_json(serde_json::Value::Array(
                    (min..max).map(Into::into).collect(),
                ))
            }
            Call::Empty(Empty::Text) => text_value(""),
            Call::Empty(Empty::List) => Value::from_json(serde_json::json!([])),
            Call::Empty(Empty::Map) => Value::from_json(serde_json::json!({})),
        })
    }
}

/// `\n`, `\t` and `\r` in a separator mean the control characters, as in Camel.
fn unescape(s: &str) -> String {
    s.replace("\\n", "\n")
        .replace("\\t", "\t")
        .replace("\\r", "\r")
}

fn unary(u: Unary, v: Value) -> Result<Value, CamelError> {
    let t = || text::text_of(&v);
    let all = |f: fn(char) -> bool| {
        let t = t();
        !t.is_empty() && t.chars().all(f)
    };
    Ok(match u {
        Unary::Uppercase => text_value(t().to_uppercase()),
        Unary::Lowercase => text_value(t().to_lowercase()),
        Unary::Trim => text_value(t().trim()),
        Unary::Capitalize => text_value(text::capitalize(&t())),
        Unary::NormalizeWhitespace => text_value(text::normalize_whitespace(&t())),
        Unary::Quote => text_value(format!("\"{}\"", t())),
        Unary::Unquote => text_value(text::unquote(&t())),
        Unary::Length => Value::Int(match &v {
            Value::Bytes(b) => b.len(),
            other => text::text_of(other).len(),
        } as i64),
        Unary::Size => Value::Int(match &v {
            Value::Null => 0,
            Value::Json(j) if j.is_array() || j.is_object() => text::size(&v),
            _ => 1,
        } as i64),
        Unary::IsEmpty => Value::Bool(text::size(&v) == 0),
        Unary::IsAlpha => Value::Bool(all(char::is_alphabetic)),
        Unary::IsNumeric => Value::Bool(all(|c| c.is_ascii_digit())),
        Unary::IsAlphaNumeric => Value::Bool(all(char::is_alphanumeric)),
        Unary::KindOfType => text_value(text::kind_of(&v)),
        Unary::Abs => Value::Int(int(&v, "abs")?.abs()),
        Unary::Floor => Value::Int(float(&v, "floor")?.floor() as i64),
        Unary::Ceil => Value::Int(float(&v, "ceil")?.ceil() as i64),
    })
}

fn aggregate(kind: Aggregate, args: &[Arg], exchange: &Exchange) -> Result<Value, CamelError> {
    let mut numbers = Vec::new();
    let values = if args.is_empty() {
        vec![exchange.message.body.to_value()]
    } else {
        args.iter()
            .map(|a| a.value(exchange))
            .collect::<Result<_, _>>()?
    };
    let name = match kind {
        Aggregate::Sum => "sum",
        Aggregate::Max => "max",
        Aggregate::Min => "min",
        Aggregate::Average => "average",
    };
    for v in &values {
        for item in text::items(v) {
            numbers.push(int(&item, name)?);
        }
    }
    Ok(match kind {
        Aggregate::Sum => Value::Int(numbers.iter().fold(0i64, |a, b| a.wrapping_add(*b))),
        Aggregate::Max => numbers.iter().max().map_or(Value::Null, |m| Value::Int(*m)),
        Aggregate::Min => numbers.iter().min().map_or(Value::Null, |m| Value::Int(*m)),
        Aggregate::Average if numbers.is_empty() => Value::Null,
        Aggregate::Average => {
            let sum: i128 = numbers.iter().map(|n| i128::from(*n)).sum();
            Value::Int((sum / numbers.len() as i128) as i64)
        }
    })
}
