//! Turning an exchange into the key a policy orders by, before the exchange is accepted.
//!
//! Keys are computed on the caller's side of the input channel so that an exchange whose
//! expression fails is refused with a typed error instead of vanishing inside the actor.

use std::cmp::Ordering;
use std::sync::Arc;

use camel_api::{BoxExpression, CamelError, Exchange, Value};

use super::error::ResequenceError;

/// A batch sort key. Numbers (including text that parses as one) order numerically and
/// before any text, so "10" sorts after "9"; other text orders lexically.
#[derive(Clone, Debug)]
pub enum SortKey {
    /// An integer, or an integral float.
    Int(i64),
    /// A float with a fractional part.
    Float(f64),
    /// Anything else, as text.
    Text(Arc<str>),
}

impl SortKey {
    /// The key of a value; `None` for null, which has no place in an order. Bytes that
    /// are UTF-8 (a file's body) count as their text.
    pub fn from_value(value: &Value) -> Option<SortKey> {
        let number = |x: f64| {
            if x.fract() == 0.0 && x.abs() < 9.0e15 {
                SortKey::Int(x as i64)
            } else {
                SortKey::Float(x)
            }
        };
        if let Some(text) = value.as_utf8_text() {
            let t = text.trim();
            return Some(if let Ok(i) = t.parse::<i64>() {
                SortKey::Int(i)
            } else if let Some(x) = t.parse::<f64>().ok().filter(|x| x.is_finite()) {
                number(x)
            } else if let Value::Text(s) = value {
                SortKey::Text(s.clone())
            } else {
                SortKey::Text(text.into())
            });
        }
        match value {
            Value::Null => None,
            Value::Int(i) => Some(SortKey::Int(*i)),
            Value::Float(x) if x.is_nan() => None,
            Value::Float(x) => Some(number(*x)),
            other => match other.as_f64() {
                Some(x) if x.is_finite() => Some(number(x)),
                _ => Some(SortKey::Text(other.to_string().into())),
            },
        }
    }

    fn rank(&self) -> u8 {
        match self {
            SortKey::Int(_) | SortKey::Float(_) => 0,
            SortKey::Text(_) => 1,
        }
    }
}

impl Ord for SortKey {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (SortKey::Int(a), SortKey::Int(b)) => a.cmp(b),
            (SortKey::Int(a), SortKey::Float(b)) => (*a as f64).total_cmp(b),
            (SortKey::Float(a), SortKey::Int(b)) => a.total_cmp(&(*b as f64)),
            (SortKey::Float(a), SortKey::Float(b)) => a.total_cmp(b),
            (SortKey::Text(a), SortKey::Text(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for SortKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for SortKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for SortKey {}

/// The key of a batch exchange: its group and its place in the group.
#[derive(Clone, Debug)]
pub struct BatchKey {
    /// The correlation value, as text (`None` without a correlation expression).
    pub group: Option<Arc<str>>,
    /// The sort key.
    pub sort: SortKey,
}

/// Computes a key for an exchange; `Ok(None)` means "skip it silently".
pub(crate) trait Keying: Send + Sync + 'static {
    type Key: Send + 'static;
    fn key(&self, exchange: &Exchange) -> Result<Option<Self::Key>, CamelError>;
}

/// Stream mode: an unsigned sequence number. Whether it is too old (`reject_old`) is
/// the actor's decision, not the key's: only the actor knows the current watermark.
#[derive(Debug)]
pub(crate) struct StreamKeying {
    pub(crate) expression: BoxExpression,
    pub(crate) text: String,
    pub(crate) ignore_invalid: bool,
}

/// Reads an unsigned sequence number from a value (text and UTF-8 bytes are parsed).
pub(crate) fn sequence_of(value: &Value) -> Result<u64, String> {
    if let Some(s) = value.as_utf8_text() {
        return s.trim().parse::<u64>().map_err(|e| format!("`{s}`: {e}"));
    }
    match value {
        Value::Null => Err("no value".into()),
        other => other
            .as_i64()
            .and_then(|i| u64::try_from(i).ok())
            .ok_or_else(|| format!("`{other}` is not an unsigned integer")),
    }
}

impl Keying for StreamKeying {
    type Key = u64;

    fn key(&self, exchange: &Exchange) -> Result<Option<u64>, CamelError> {
        let evaluated = self.expression.evaluate(exchange).and_then(|value| {
            sequence_of(&value).map_err(|reason| {
                ResequenceError::InvalidKey {
                    expression: self.text.clone(),
                    reason,
                }
                .into()
            })
        });
        match evaluated {
            Ok(seq) => Ok(Some(seq)),
            Err(_) if self.ignore_invalid => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Batch mode: group and sort key; with `ignore_invalid`, unusable exchanges are skipped.
#[derive(Debug)]
pub(crate) struct BatchKeying {
    pub(crate) sort: BoxExpression,
    pub(crate) sort_text: String,
    pub(crate) correlation: Option<BoxExpression>,
    pub(crate) ignore_invalid: bool,
}

impl BatchKeying {
    fn evaluate(&self, exchange: &Exchange) -> Result<BatchKey, CamelError> {
        let sort = SortKey::from_value(&self.sort.evaluate(exchange)?).ok_or_else(|| {
            ResequenceError::InvalidKey {
                expression: self.sort_text.clone(),
                reason: "no value".into(),
            }
        })?;
        let group = match &self.correlation {
            Some(c) => Some(c.evaluate(exchange)?.to_string().into()),
            None => None,
        };
        Ok(BatchKey { group, sort })
    }
}

impl Keying for BatchKeying {
    type Key = BatchKey;

    fn key(&self, exchange: &Exchange) -> Result<Option<BatchKey>, CamelError> {
        match self.evaluate(exchange) {
            Ok(k) => Ok(Some(k)),
            Err(_) if self.ignore_invalid => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(v: impl Into<Value>) -> SortKey {
        SortKey::from_value(&v.into()).unwrap()
    }

    #[test]
    fn numbers_sort_numerically_even_as_text() {
        let mut keys = [
            key("10"),
            key("9"),
            key(2.5),
            key("abc"),
            key(-1),
            key("100"),
        ];
        keys.sort();
        let shown: Vec<String> = keys.iter().map(|k| format!("{k:?}")).collect();
        assert_eq!(
            shown,
            [
                "Int(-1)",
                "Float(2.5)",
                "Int(9)",
                "Int(10)",
                "Int(100)",
                "Text(\"abc\")"
            ]
        );
        assert_eq!(key("7"), key(7.0));
        assert!(SortKey::from_value(&Value::Null).is_none());
    }

    #[test]
    fn sequence_numbers_must_be_unsigned_integers() {
        assert_eq!(sequence_of(&Value::from("42")), Ok(42));
        assert_eq!(sequence_of(&Value::from(7)), Ok(7));
        assert!(sequence_of(&Value::from(-3)).is_err());
        assert!(sequence_of(&Value::from("x")).is_err());
        assert!(sequence_of(&Value::Null).is_err());
    }

    #[test]
    fn a_utf8_bytes_value_counts_as_its_text() {
        // A file consumer's body: `Body::Bytes`, seen by `${body}` as `Value::Bytes`.
        let bytes = |b: &[u8]| Exchange::new(b.to_vec()).message.body.to_value();
        assert_eq!(sequence_of(&bytes(b"264\n")), Ok(264));
        assert!(sequence_of(&bytes(b"x")).is_err());
        assert!(sequence_of(&bytes(&[0xff, 0x31])).is_err());
        assert_eq!(SortKey::from_value(&bytes(b" 10")), Some(SortKey::Int(10)));
        assert!(SortKey::from_value(&bytes(b"9")) < SortKey::from_value(&bytes(b"10")));
        assert_eq!(SortKey::from_value(&bytes(b"2.5")), Some(key(2.5)));
        assert_eq!(SortKey::from_value(&bytes(b"abc")), Some(key("abc")));
    }
}
