//! How the simple language compares two values.
//!
//! Numbers compare as numbers even when they arrive as text (headers often do), so
//! `"10" > "9"` holds; everything else compares by its text form. A null is equal only
//! to null and is never ordered, so `${header.missing} < 5` is false rather than an error.

use std::borrow::Cow;
use std::cmp::Ordering;

use camel_api::Value;

/// A value seen as a number.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }

    fn compare(self, other: Number) -> Option<Ordering> {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => Some(a.cmp(&b)),
            (a, b) => a.as_f64().partial_cmp(&b.as_f64()),
        }
    }
}

/// Reads numeric text: an integer or a finite decimal with at least one digit, so words
/// such as `inf` or `NaN` stay words.
pub(crate) fn parse_number(text: &str) -> Option<Value> {
    let t = text.trim();
    if !t.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    if let Ok(i) = t.parse::<i64>() {
        return Some(Value::Int(i));
    }
    match t.parse::<f64>() {
        Ok(f) if f.is_finite() => Some(Value::Float(f)),
        _ => None,
    }
}

fn number(value: &Value) -> Option<Number> {
    match value {
        Value::Int(i) => Some(Number::Int(*i)),
        Value::Float(f) => Some(Number::Float(*f)),
        Value::Text(_) | Value::Bytes(_) => value.as_utf8_text().and_then(text_number),
        Value::Json(j) => match (j.as_i64(), j.as_f64()) {
            (Some(i), _) => Some(Number::Int(i)),
            (None, Some(f)) => Some(Number::Float(f)),
            _ => None,
        },
        Value::Bool(_) | Value::Null => None,
    }
}

/// Both values as numbers; the right one is only parsed when the left one is a number.
fn numbers(a: &Value, b: &Value) -> Option<(Number, Number)> {
    let x = number(a)?;
    Some((x, number(b)?))
}

fn text_number(s: &str) -> Option<Number> {
    match parse_number(s)? {
        Value::Int(i) => Some(Number::Int(i)),
        Value::Float(f) => Some(Number::Float(f)),
        _ => None,
    }
}

fn boolean(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::Json(j) => j.as_bool(),
        _ => match value.as_utf8_text() {
            Some(s) if s.eq_ignore_ascii_case("true") => Some(true),
            Some(s) if s.eq_ignore_ascii_case("false") => Some(false),
            _ => None,
        },
    }
}

/// Whether a value used as a predicate holds: `true`, or text (also UTF-8 bytes) that
/// reads `true` ignoring case.
pub(crate) fn truthy(value: &Value) -> bool {
    boolean(value) == Some(true)
}

/// The text form of a value; `None` for null.
pub(crate) fn text(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::Null => None,
        Value::Text(s) => Some(Cow::Borrowed(s)),
        Value::Bytes(b) => Some(String::from_utf8_lossy(b)),
        other => Some(Cow::Owned(other.to_string())),
    }
}

/// `==`: null equals only null; numbers numerically; booleans against `true`/`false`
/// text; otherwise by text.
pub(crate) fn equals(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => return true,
        (Value::Null, _) | (_, Value::Null) => return false,
        _ => {}
    }
    if let Some((x, y)) = numbers(a, b) {
        return x.compare(y) == Some(Ordering::Equal);
    }
    if matches!(a, Value::Bool(_)) || matches!(b, Value::Bool(_)) {
        if let (Some(x), Some(y)) = (boolean(a), boolean(b)) {
            return x == y;
        }
    }
    text(a) == text(b)
}

/// `=~`: equality ignoring ASCII case.
pub(crate) fn equals_ignore_case(a: &Value, b: &Value) -> bool {
    match (text(a), text(b)) {
        (Some(x), Some(y)) => x.eq_ignore_ascii_case(&y),
        _ => equals(a, b),
    }
}

/// The order of two values, `None` when either is null or they are incomparable.
pub(crate) fn order(a: &Value, b: &Value) -> Option<Ordering> {
    if a.is_null() || b.is_null() {
        return None;
    }
    if let Some((x, y)) = numbers(a, b) {
        return x.compare(y);
    }
    Some(text(a)?.cmp(&text(b)?))
}

/// `contains`: a JSON array contains an equal element; anything else contains the
/// other's text.
pub(crate) fn contains(haystack: &Value, needle: &Value, ignore_case: bool) -> bool {
    if needle.is_null() {
        return false;
    }
    if let Value::Json(j) = haystack {
        if let Some(items) = j.as_array() {
            return items.iter().any(|item| {
                let item = Value::from_json(item.clone());
                if ignore_case {
                    equals_ignore_case(&item, needle)
                } else {
                    equals(&item, needle)
                }
            });
        }
    }
    match (text(haystack), text(needle)) {
        (Some(h), Some(n)) if ignore_case => h.to_lowercase().contains(&n.to_lowercase()),
        (Some(h), Some(n)) => h.contains(&*n),
        _ => false,
    }
}

/// `startsWith` / `endsWith` by text.
pub(crate) fn affix(value: &Value, affix: &Value, at_start: bool) -> bool {
    match (text(value), text(affix)) {
        (Some(v), Some(a)) if at_start => v.starts_with(&*a),
        (Some(v), Some(a)) => v.ends_with(&*a),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_text_compares_as_numbers() {
        assert_eq!(order(&"10".into(), &"9".into()), Some(Ordering::Greater));
        assert_eq!(order(&Value::Int(3), &"3.5".into()), Some(Ordering::Less));
        assert!(equals(&"010".into(), &Value::Int(10)));
        assert!(equals(&Value::Float(2.0), &Value::Int(2)));
    }

    #[test]
    fn words_compare_as_text() {
        assert_eq!(order(&"abc".into(), &"abd".into()), Some(Ordering::Less));
        assert_eq!(parse_number("inf"), None);
        assert_eq!(parse_number("NaN"), None);
        assert_eq!(parse_number("-4"), Some(Value::Int(-4)));
        assert_eq!(parse_number("1.5"), Some(Value::Float(1.5)));
    }

    #[test]
    fn null_equals_only_null_and_is_unordered() {
        assert!(equals(&Value::Null, &Value::Null));
        assert!(!equals(&Value::Null, &"".into()));
        assert_eq!(order(&Value::Null, &Value::Int(1)), None);
    }

    #[test]
    fn booleans_match_their_text() {
        assert!(equals(&"TRUE".into(), &Value::Bool(true)));
        assert!(!equals(&"yes".into(), &Value::Bool(true)));
        assert!(equals(&Value::Bool(false), &Value::Bool(false)));
    }

    #[test]
    fn contains_searches_text_and_arrays() {
        assert!(contains(&"hello world".into(), &"lo w".into(), false));
        assert!(!contains(&"Hello".into(), &"hello".into(), false));
        assert!(contains(&"Hello".into(), &"hello".into(), true));
        let array = Value::from_json(serde_json::json!(["a", 2]));
        assert!(contains(&array, &"2".into(), false));
        assert!(!contains(&array, &"b".into(), false));
        assert!(!contains(&"x".into(), &Value::Null, false));
    }

    #[test]
    fn affixes_and_ignore_case() {
        assert!(affix(&"order-1".into(), &"order".into(), true));
        assert!(affix(&"order-1".into(), &"-1".into(), false));
        assert!(!affix(&Value::Null, &"x".into(), true));
        assert!(equals_ignore_case(&"ABC".into(), &"abc".into()));
    }
}
