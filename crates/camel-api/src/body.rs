use std::borrow::Cow;
use std::sync::Arc;

use bytes::Bytes;

use crate::{CamelError, Value};

/// The payload of a message.
///
/// Every variant is reference counted, so cloning a body (and so an exchange) never copies
/// the payload. A stage that changes the payload builds a new body.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Body {
    /// No payload.
    #[default]
    Empty,
    /// Raw bytes.
    Bytes(Bytes),
    /// UTF-8 text.
    Text(Arc<str>),
    /// A parsed JSON document.
    Json(Arc<serde_json::Value>),
}

impl Body {
    /// True when the body is [`Body::Empty`].
    pub fn is_empty(&self) -> bool {
        matches!(self, Body::Empty)
    }

    /// The body as text: text as is, bytes when valid UTF-8, JSON serialised.
    /// `None` for an empty body or bytes that are not UTF-8.
    pub fn as_text(&self) -> Option<Cow<'_, str>> {
        match self {
            Body::Empty => None,
            Body::Text(s) => Some(Cow::Borrowed(s)),
            Body::Bytes(b) => std::str::from_utf8(b).ok().map(Cow::Borrowed),
            Body::Json(j) => Some(Cow::Owned(j.to_string())),
        }
    }

    /// The body as bytes, serialising text and JSON. Empty gives empty bytes.
    pub fn to_bytes(&self) -> Bytes {
        match self {
            Body::Empty => Bytes::new(),
            Body::Bytes(b) => b.clone(),
            Body::Text(s) => Bytes::copy_from_slice(s.as_bytes()),
            Body::Json(j) => Bytes::from(j.to_string()),
        }
    }

    /// Size of the payload in bytes as it would be sent (JSON is measured serialised).
    pub fn len(&self) -> usize {
        match self {
            Body::Empty => 0,
            Body::Bytes(b) => b.len(),
            Body::Text(s) => s.len(),
            Body::Json(j) => j.to_string().len(),
        }
    }

    /// Parses the body as JSON (`unmarshal: json`).
    pub fn to_json(&self) -> Result<serde_json::Value, CamelError> {
        match self {
            Body::Json(j) => Ok((**j).clone()),
            Body::Empty => Ok(serde_json::Value::Null),
            Body::Text(s) => serde_json::from_str(s).map_err(|e| CamelError::conversion("json", e)),
            Body::Bytes(b) => {
                serde_json::from_slice(b).map_err(|e| CamelError::conversion("json", e))
            }
        }
    }

    /// The body as a [`Value`], as the expression languages see `${body}`.
    pub fn to_value(&self) -> Value {
        match self {
            Body::Empty => Value::Null,
            Body::Bytes(b) => Value::Bytes(b.clone()),
            Body::Text(s) => Value::Text(s.clone()),
            Body::Json(j) => Value::Json(j.clone()),
        }
    }
}

impl From<Value> for Body {
    fn from(v: Value) -> Self {
        match v {
            Value::Null => Body::Empty,
            Value::Text(s) => Body::Text(s),
            Value::Bytes(b) => Body::Bytes(b),
            Value::Json(j) => Body::Json(j),
            // A number or a boolean stays one, as a Java Integer body does in Camel:
            // `marshal: json` writes `1`, not `"1"`.
            other @ (Value::Int(_) | Value::Float(_) | Value::Bool(_)) => {
                Body::Json(Arc::new(other.to_json()))
            }
        }
    }
}
impl From<&str> for Body {
    fn from(s: &str) -> Self {
        Body::Text(s.into())
    }
}
impl From<String> for Body {
    fn from(s: String) -> Self {
        Body::Text(s.into())
    }
}
impl From<Arc<str>> for Body {
    fn from(s: Arc<str>) -> Self {
        Body::Text(s)
    }
}
impl From<Bytes> for Body {
    fn from(b: Bytes) -> Self {
        Body::Bytes(b)
    }
}
impl From<Vec<u8>> for Body {
    fn from(b: Vec<u8>) -> Self {
        Body::Bytes(b.into())
    }
}
impl From<serde_json::Value> for Body {
    fn from(j: serde_json::Value) -> Self {
        Body::Json(Arc::new(j))
    }
}
