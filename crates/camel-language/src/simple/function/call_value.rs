//! Evaluation of the [`Call`] functions.

use camel_api::{CamelError, Exchange, Value};
use rand::Rng;

use super::args::Arg;
use super::call::{Aggregate, Call, Empty, Unary};
use super::{lists, text};

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
            Call::Pad {
                source,
                width,
                filler,
            } => {
                let width = int(&width.value(exchange)?, "pad")?;
                let filler = match filler {
                    Some(f) => text_arg(f, exchange)?,
                    None => " ".to_owned(),
                };
                text_value(text::pad(&text_arg(source, exchange)?, width, &filler))
            }
            Call::Escape(kind, s) => text_value(kind.apply(&text::text_of(&source(s, exchange)?))),
            Call::Hash(s) => {
                use sha2::Digest as _;
                let digest = sha2::Sha256::digest(text::text_of(&source(s, exchange)?).as_bytes());
                text_value(
                    digest
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<String>(),
                )
            }
            Call::List(op, args) => lists::evaluate(*op, args, exchange)?,
            Call::Sort(s, descending) => lists::sort(s.as_ref(), descending.as_ref(), exchange)?,
            Call::JsonPath(input, query) | Call::Jq(input, query) => {
                query.value(input.as_ref(), exchange)?
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
        Unary::SafeQuote => match text::kind_of(&v) {
            "null" => text_value("null"),
            "number" | "boolean" => text_value(t()),
            _ => text_value(format!("\"{}\"", t())),
        },
        Unary::ToJson | Unary::ToPrettyJson => match &v {
            Value::Null => Value::Null,
            Value::Text(_) | Value::Bytes(_) => text_value(t()),
            other if u == Unary::ToJson => text_value(other.to_json().to_string()),
            other => text_value(pretty_json(&other.to_json())),
        },
        Unary::Pretty => match &v {
            Value::Null => Value::Null,
            Value::Json(j) => text_value(pretty_json(j)),
            other => match serde_json::from_str::<serde_json::Value>(&text::text_of(other)) {
                Ok(j) => text_value(pretty_json(&j)),
                Err(_) => text_value(t()),
            },
        },
    })
}

fn pretty_json(json: &serde_json::Value) -> String {
    serde_json::to_string_pretty(json).unwrap_or_else(|_| json.to_string())
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
