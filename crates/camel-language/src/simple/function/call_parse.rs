//! Resolving the arguments of each [`Call`] function, with Camel's argument orders.

use camel_api::Value;

use super::super::parser::Mode;
use super::args::{self, Arg};
use super::call::{Aggregate, Call, Empty, Unary};
use super::{lists, query, text};
use crate::problem::Problem;

pub(super) fn parse_known(
    name: &str,
    unary: Option<Unary>,
    at: usize,
    inner: &str,
    inner_at: usize,
) -> Result<Call, Problem> {
    if name == "jsonpath" {
        return query::parse(query::Kind::JsonPath, at, inner, inner_at);
    }
    if name == "jq" {
        return query::parse(query::Kind::Jq, at, inner, inner_at);
    }
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
        "pad" => {
            count(2, 3)?;
            args::literal_int(
                &args::parse(spans[1], Mode::Expression)?,
                spans[1],
                "a width",
            )?;
            let mut v = values()?;
            match (v.next(), v.next()) {
                (Some(source), Some(width)) => Call::Pad {
                    source,
                    width,
                    filler: v.next(),
                },
                _ => return Err(Problem::new(at, "missing argument")),
            }
        }
        "escape" => {
            count(1, 2)?;
            let kind =
                text::Escape::parse(spans[0].text.trim_matches(['\'', '"'])).ok_or_else(|| {
                    Problem::new(
                        spans[0].at,
                        format!(
                            "unknown escape kind `{}`; use html, xml, json, js, sql or url",
                            spans[0].text
                        ),
                    )
                })?;
            let source = spans
                .get(1)
                .map(|s| args::parse(*s, Mode::Expression))
                .transpose()?;
            Call::Escape(kind, source)
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
        "list" | "reverse" | "distinct" | "shuffle" => {
            let op = lists::ListOp::from_name(name)
                .ok_or_else(|| Problem::new(at, "unknown list function"))?;
            Call::List(op, values()?.collect())
        }
        "hash" => {
            count(0, 2)?;
            if let Some(algorithm) = spans.get(1) {
                let name = algorithm.text.trim_matches(['\'', '"']);
                if !name.eq_ignore_ascii_case("SHA-256") {
                    return Err(Problem::new(
                        algorithm.at,
                        format!("hash algorithm `{name}` is not supported: only SHA-256"),
                    ));
                }
            }
            Call::Hash(values()?.next())
        }
        "sort" => {
            count(0, 2)?;
            let mut v: Vec<Arg> = values()?.collect();
            // One argument is the order when it is written `true` or `false`.
            let lone_flag = v.len() == 1
                && matches!(&v[0], Arg::Literal(Value::Text(t)) if matches!(&**t, "true" | "false"));
            match (v.len(), lone_flag) {
                (1, true) => Call::Sort(None, v.pop()),
                _ => {
                    let descending = if v.len() == 2 { v.pop() } else { None };
                    Call::Sort(v.pop(), descending)
                }
            }
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
