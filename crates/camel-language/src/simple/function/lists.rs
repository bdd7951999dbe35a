//! `${list(…)}`, `${reverse(…)}`, `${distinct(…)}`, `${shuffle(…)}` and `${sort(…)}`:
//! lists built from values. A value that is a JSON array contributes its elements;
//! anything else (a text too) is one element. With no value they work on the body.

use camel_api::{CamelError, Exchange, Value};
use rand::seq::SliceRandom;

use super::super::compare;
use super::args::Arg;

/// What a list function does with its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListOp {
    List,
    Reverse,
    Distinct,
    Shuffle,
}

impl ListOp {
    pub(crate) fn from_name(name: &str) -> Option<ListOp> {
        Some(match name {
            "list" => ListOp::List,
            "reverse" => ListOp::Reverse,
            "distinct" => ListOp::Distinct,
            "shuffle" => ListOp::Shuffle,
            _ => return None,
        })
    }
}

/// The elements of the values (or of the body when there is none).
fn elements(args: &[Arg], exchange: &Exchange) -> Result<Vec<Value>, CamelError> {
    let values = if args.is_empty() {
        vec![exchange.message.body.to_value()]
    } else {
        args.iter()
            .map(|a| a.value(exchange))
            .collect::<Result<_, _>>()?
    };
    let mut out = Vec::new();
    for value in values {
        match &value {
            Value::Json(j) if j.is_array() => {
                out.extend(
                    j.as_array()
                        .into_iter()
                        .flatten()
                        .cloned()
                        .map(Value::from_json),
                );
            }
            Value::Null if args.is_empty() => {}
            _ => out.push(value),
        }
    }
    Ok(out)
}

fn to_list(items: Vec<Value>) -> Value {
    Value::from_json(serde_json::Value::Array(
        items.iter().map(Value::to_json).collect(),
    ))
}

pub(crate) fn evaluate(op: ListOp, args: &[Arg], exchange: &Exchange) -> Result<Value, CamelError> {
    let mut items = elements(args, exchange)?;
    match op {
        ListOp::List => {}
        ListOp::Reverse => items.reverse(),
        ListOp::Distinct => {
            let mut kept: Vec<Value> = Vec::with_capacity(items.len());
            for item in items {
                if !kept.iter().any(|k| compare::equals(k, &item)) {
                    kept.push(item);
                }
            }
            items = kept;
        }
        ListOp::Shuffle => items.shuffle(&mut rand::thread_rng()),
    }
    Ok(to_list(items))
}

/// `${sort()}`, `${sort(true)}` (descending), `${sort(${header.x})}`,
/// `${sort(${header.x},true)}`: natural order, numbers as numbers.
pub(crate) fn sort(
    source: Option<&Arg>,
    descending: Option<&Arg>,
    exchange: &Exchange,
) -> Result<Value, CamelError> {
    let mut items = elements(
        source.map(std::slice::from_ref).unwrap_or_default(),
        exchange,
    )?;
    let descending = match descending {
        Some(d) => d.holds(exchange)?,
        None => false,
    };
    items.sort_by(|a, b| {
        let order = compare::order(a, b).unwrap_or_else(|| a.is_null().cmp(&b.is_null()).reverse());
        if descending {
            order.reverse()
        } else {
            order
        }
    });
    Ok(to_list(items))
}
