//! A value to bind to a placeholder, taken from a header, the body or an expression
//! before the database's parameter types are known.

use camel_api::Value;
use serde_json::Value as Json;

/// A value to bind, before the database's types are known.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Arg {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    Json(Json),
    Bytes(Vec<u8>),
}

impl Arg {
    pub(crate) fn from_value(v: &Value) -> Arg {
        match v {
            Value::Null => Arg::Null,
            Value::Bool(b) => Arg::Bool(*b),
            Value::Int(i) => Arg::Int(*i),
            Value::Float(f) => Arg::Float(*f),
            Value::Text(t) => Arg::Text(t.to_string()),
            Value::Bytes(b) => Arg::Bytes(b.to_vec()),
            Value::Json(j) => Arg::from_json(j),
            #[allow(unreachable_patterns)]
            other => Arg::Json(other.to_json()),
        }
    }

    pub(crate) fn from_json(j: &Json) -> Arg {
        match j {
            Json::Null => Arg::Null,
            Json::Bool(b) => Arg::Bool(*b),
            Json::Number(n) => match n.as_i64() {
                Some(i) => Arg::Int(i),
                None => Arg::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Json::String(s) => Arg::Text(s.clone()),
            other => Arg::Json(other.clone()),
        }
    }

    /// The value as text (for a text column, or to parse into a number).
    pub(crate) fn text(&self) -> Option<String> {
        match self {
            Arg::Null => None,
            Arg::Bool(b) => Some(b.to_string()),
            Arg::Int(i) => Some(i.to_string()),
            Arg::Float(f) => Some(f.to_string()),
            Arg::Text(t) => Some(t.clone()),
            Arg::Json(j) => Some(j.to_string()),
            Arg::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        }
    }

    /// Shortened, for an error message.
    pub(crate) fn shown(&self) -> String {
        let mut t = self.text().unwrap_or_else(|| "null".into());
        if t.len() > 40 {
            let mut cut = 40;
            while !t.is_char_boundary(cut) {
                cut -= 1;
            }
            t.truncate(cut);
            t.push('…');
        }
        format!("`{t}`")
    }
}
