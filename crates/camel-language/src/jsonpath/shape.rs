//! What a `jsonpath` result becomes after the query: Camel's `writeAsString`,
//! `resultType` and `unpackArray`, and whether a path is definite (yields one value
//! rather than a list).

use std::sync::Arc;

use camel_api::Value;

use crate::result_type::ResultType;

/// What happens to a result after the query: Camel's `writeAsString`, `resultType` and
/// `unpackArray`.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Shape {
    pub(super) write_as_string: bool,
    pub(super) result_type: Option<ResultType>,
    pub(super) unpack_array: bool,
}

impl Shape {
    pub(super) fn apply(self, value: Value) -> Result<Value, String> {
        let value = if self.write_as_string {
            written_as_string(value)?
        } else {
            value
        };
        let Some(to) = self.result_type else {
            return Ok(value);
        };
        let value = match value {
            Value::Json(j) if self.unpack_array && to != ResultType::List => match &*j {
                serde_json::Value::Array(items) if items.len() == 1 => {
                    Value::from_json(items[0].clone())
                }
                _ => Value::Json(j),
            },
            other => other,
        };
        to.convert(value)
    }
}

/// Camel's `writeAsString`: a list's elements, a map's values, or the one value, each
/// as JSON text.
fn written_as_string(value: Value) -> Result<Value, String> {
    let text = |v: &serde_json::Value| {
        serde_json::to_string(v)
            .map(serde_json::Value::String)
            .map_err(|e| format!("cannot write the result as JSON: {e}"))
    };
    Ok(match value {
        Value::Null => Value::Null,
        Value::Json(j) => match &*j {
            serde_json::Value::Array(items) => Value::Json(Arc::new(serde_json::Value::Array(
                items.iter().map(text).collect::<Result<_, _>>()?,
            ))),
            serde_json::Value::Object(map) => Value::Json(Arc::new(serde_json::Value::Object(
                map.iter()
                    .map(|(k, v)| Ok((k.clone(), text(v)?)))
                    .collect::<Result<_, String>>()?,
            ))),
            other => Value::from_json(text(other)?),
        },
        other => Value::from_json(text(&other.to_json())?),
    })
}

/// Whether a path names at most one node — Jayway's "definite path", which
/// camel-jsonpath runs on: names and single indexes only, no wildcard, filter, slice,
/// list of selectors or descendant segment. Any other path yields a list, whatever it
/// matched (one node, or none: an empty list, not an error).
pub(super) fn is_definite(path: &str) -> bool {
    let bytes = path.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            q @ (b'\'' | b'"') => {
                // A quoted name: skip to its closing quote (a backslash escapes).
                i += 1;
                while i < bytes.len() && bytes[i] != q {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'.' if bytes.get(i + 1) == Some(&b'.') => return false,
            b'*' | b'?' => return false,
            b'[' => depth += 1,
            b']' => depth = depth.saturating_sub(1),
            b',' | b':' if depth > 0 => return false,
            _ => {}
        }
        i += 1;
    }
    true
}
