use std::fmt;
use std::sync::Arc;

use bytes::Bytes;

/// A header or property value.
///
/// Cheap to clone: text, bytes and JSON are reference counted, never copied.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Value {
    /// No value.
    #[default]
    Null,
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// A floating point number.
    Float(f64),
    /// Text.
    Text(Arc<str>),
    /// Raw bytes.
    Bytes(Bytes),
    /// A JSON document.
    Json(Arc<serde_json::Value>),
}

impl Value {
    /// The value as text, if it is text or a scalar that prints as one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The value as text when it is text or bytes holding valid UTF-8 (a file's or a
    /// broker's body): what Camel's type converter reads as a string.
    pub fn as_utf8_text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            Value::Bytes(b) => std::str::from_utf8(b).ok(),
            _ => None,
        }
    }

    /// The value as an integer: integers, integral floats and text that parses.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Float(f) if f.fract() == 0.0 && f.is_finite() => Some(*f as i64),
            Value::Text(s) => s.trim().parse().ok(),
            Value::Bool(_) | Value::Null | Value::Bytes(_) | Value::Float(_) => None,
            Value::Json(j) => j.as_i64(),
        }
    }

    /// The value as a float: numbers and text that parses.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Text(s) => s.trim().parse().ok(),
            Value::Json(j) => j.as_f64(),
            _ => None,
        }
    }

    /// Whether a predicate over this value holds: `true`, or the text `"true"`.
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Bool(b) => *b,
            Value::Text(s) => s.eq_ignore_ascii_case("true"),
            Value::Json(j) => j.as_bool().unwrap_or(false),
            _ => false,
        }
    }

    /// True for [`Value::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Converts into a JSON value (text stays text; bytes become lossy UTF-8).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => (*b).into(),
            Value::Int(i) => (*i).into(),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null),
            Value::Text(s) => serde_json::Value::String(s.to_string()),
            Value::Bytes(b) => serde_json::Value::String(String::from_utf8_lossy(b).into_owned()),
            Value::Json(j) => (**j).clone(),
        }
    }

    /// Builds a value from JSON, keeping scalars as scalars.
    pub fn from_json(json: serde_json::Value) -> Value {
        match json {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            serde_json::Value::String(s) => Value::Text(s.into()),
            other => Value::Json(Arc::new(other)),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => Ok(()),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Text(s) => f.write_str(s),
            Value::Bytes(b) => f.write_str(&String::from_utf8_lossy(b)),
            Value::Json(j) => write!(f, "{j}"),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(s.into())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Text(s.into())
    }
}
impl From<Arc<str>> for Value {
    fn from(s: Arc<str>) -> Self {
        Value::Text(s)
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::Int(i)
    }
}
impl From<u64> for Value {
    fn from(i: u64) -> Self {
        i64::try_from(i)
            .map(Value::Int)
            .unwrap_or(Value::Float(i as f64))
    }
}
impl From<i32> for Value {
    fn from(i: i32) -> Self {
        Value::Int(i.into())
    }
}
impl From<f64> for Value {
    fn from(x: f64) -> Self {
        Value::Float(x)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}
impl From<Bytes> for Value {
    fn from(b: Bytes) -> Self {
        Value::Bytes(b)
    }
}
impl From<serde_json::Value> for Value {
    fn from(j: serde_json::Value) -> Self {
        Value::from_json(j)
    }
}
