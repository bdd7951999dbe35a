//! Camel's `resultType` option: the value an expression yields, converted to a type
//! named the Java way (`java.lang.String`, `Integer`, `java.util.List`).
//!
//! There are no Java classes here, so a name picks one of the value kinds an exchange
//! holds; `Object` (and Jackson's `JsonNode`) mean "as it is". A name that fits none is
//! an error when the route is compiled, not a value silently left unconverted.
//!
//! ```
//! use camel_api::{Exchange, Value};
//! use camel_language::LanguageRegistry;
//!
//! let jq = LanguageRegistry::default().get("jq").unwrap();
//! let mut options = serde_json::Map::new();
//! options.insert("resultType".into(), "java.lang.String".into());
//! let id = jq.expression(".id", &options).unwrap();
//! let ex = Exchange::new(r#"{"id": 7}"#);
//! assert_eq!(id.evaluate(&ex).unwrap(), Value::from("7"));
//! ```

use std::sync::Arc;

use camel_api::{ExpressionError, Value};

use crate::options::{text_option, Options};

/// The option's snake_case name and Camel's spelling.
pub(crate) const RESULT_TYPE: (&str, &str) = ("result_type", "resultType");

/// The kind a result is converted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResultType {
    /// `String`: text; a list or map becomes its JSON text.
    Text,
    /// `Integer`, `Long`, `int`…: a whole number (a decimal loses its fraction, as a Java
    /// conversion of a number does).
    Integer,
    /// `Double`, `Float`, `BigDecimal`…: a number.
    Decimal,
    /// `Boolean`: `true` or `false` (text in any case).
    Boolean,
    /// `List`, `Collection`…: a list; one value becomes a list of that value.
    List,
    /// `Map`: a map.
    Map,
}

impl ResultType {
    /// Reads a Java type name; `Ok(None)` for `Object` and the other "as it is" names.
    pub(crate) fn parse(name: &str) -> Result<Option<ResultType>, String> {
        let name = name.trim();
        let short = name.rsplit('.').next().unwrap_or(name);
        Ok(Some(match short {
            "String" | "CharSequence" => ResultType::Text,
            "Integer" | "int" | "Long" | "long" | "Short" | "short" | "Byte" | "byte"
            | "BigInteger" => ResultType::Integer,
            "Double" | "double" | "Float" | "float" | "BigDecimal" | "Number" => {
                ResultType::Decimal
            }
            "Boolean" | "boolean" => ResultType::Boolean,
            "List" | "ArrayList" | "LinkedList" | "Collection" | "Iterable" | "Set" => {
                ResultType::List
            }
            "Map" | "HashMap" | "LinkedHashMap" | "TreeMap" => ResultType::Map,
            "Object" | "JsonNode" | "" => return Ok(None),
            other => {
                return Err(format!(
                    "unknown result type `{other}`; use String, Integer, Long, Double, \
                     Boolean, List, Map or Object"
                ))
            }
        }))
    }

    /// Reads the `result_type` option (alias `resultType`) of `language`.
    pub(crate) fn from_options(
        language: &str,
        text: &str,
        options: &Options,
    ) -> Result<Option<ResultType>, ExpressionError> {
        match text_option(language, text, options, RESULT_TYPE)? {
            None => Ok(None),
            Some(name) => ResultType::parse(name)
                .map_err(|message| crate::problem::located(language, text, 0, message)),
        }
    }

    /// The type's name, for errors.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ResultType::Text => "String",
            ResultType::Integer => "Integer",
            ResultType::Decimal => "Double",
            ResultType::Boolean => "Boolean",
            ResultType::List => "List",
            ResultType::Map => "Map",
        }
    }

    /// Converts `value`; null stays null. The error says what could not be converted.
    pub(crate) fn convert(self, value: Value) -> Result<Value, String> {
        let fail = |v: &Value| format!("cannot convert {} to {}", describe(v), self.name());
        // A JSON scalar is read as the value it is (a number, a text…).
        let value = match value {
            Value::Json(j) if !j.is_array() && !j.is_object() => Value::from_json((*j).clone()),
            other => other,
        };
        Ok(match (self, value) {
            (_, Value::Null) => Value::Null,
            (ResultType::Text, Value::Text(t)) => Value::Text(t),
            (ResultType::Text, Value::Bytes(b)) => {
                Value::Text(String::from_utf8_lossy(&b).as_ref().into())
            }
            (ResultType::Text, other) => Value::Text(other.to_string().into()),
            (ResultType::Integer, Value::Int(i)) => Value::Int(i),
            (ResultType::Integer, Value::Float(x)) if x.is_finite() => Value::Int(x.trunc() as i64),
            (ResultType::Integer, v @ (Value::Text(_) | Value::Bytes(_))) => {
                match text_of(&v).trim().parse::<i64>() {
                    Ok(i) => Value::Int(i),
                    Err(_) => return Err(fail(&v)),
                }
            }
            (ResultType::Decimal, Value::Int(i)) => Value::Float(i as f64),
            (ResultType::Decimal, Value::Float(x)) => Value::Float(x),
            (ResultType::Decimal, v @ (Value::Text(_) | Value::Bytes(_))) => {
                match text_of(&v).trim().parse::<f64>() {
                    Ok(x) => Value::Float(x),
                    Err(_) => return Err(fail(&v)),
                }
            }
            (ResultType::Boolean, Value::Bool(b)) => Value::Bool(b),
            (ResultType::Boolean, v @ (Value::Text(_) | Value::Bytes(_))) => {
                match text_of(&v).trim() {
                    t if t.eq_ignore_ascii_case("true") => Value::Bool(true),
                    t if t.eq_ignore_ascii_case("false") => Value::Bool(false),
                    _ => return Err(fail(&v)),
                }
            }
            (ResultType::List, Value::Json(j)) if j.is_array() => Value::Json(j),
            (ResultType::List, one) => {
                Value::Json(Arc::new(serde_json::Value::Array(vec![one.to_json()])))
            }
            (ResultType::Map, Value::Json(j)) if j.is_object() => Value::Json(j),
            (_, other) => return Err(fail(&other)),
        })
    }
}

fn text_of(v: &Value) -> std::borrow::Cow<'_, str> {
    match v {
        Value::Text(t) => std::borrow::Cow::Borrowed(&**t),
        Value::Bytes(b) => String::from_utf8_lossy(b),
        other => std::borrow::Cow::Owned(other.to_string()),
    }
}

/// A short description of a value for an error: its kind, and text in quotes (so a
/// line break in it cannot start a forged log line).
fn describe(v: &Value) -> String {
    const SHOWN: usize = 40;
    match v {
        Value::Text(_) | Value::Bytes(_) => {
            let text = text_of(v);
            let shown: String = text.chars().take(SHOWN).collect();
            let more = if text.chars().count() > SHOWN {
                "…"
            } else {
                ""
            };
            format!("the text {shown:?}{more}")
        }
        Value::Json(j) if j.is_array() => "a list".into(),
        Value::Json(j) if j.is_object() => "a map".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        other => format!("the value {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn java_names_pick_a_kind() {
        assert_eq!(
            ResultType::parse("java.lang.String"),
            Ok(Some(ResultType::Text))
        );
        assert_eq!(ResultType::parse("int"), Ok(Some(ResultType::Integer)));
        assert_eq!(
            ResultType::parse("java.util.List"),
            Ok(Some(ResultType::List))
        );
        assert_eq!(
            ResultType::parse("com.fasterxml.jackson.databind.JsonNode"),
            Ok(None)
        );
        let e = ResultType::parse("com.acme.Order").unwrap_err();
        assert!(e.contains("`Order`"), "{e}");
    }

    #[test]
    fn conversions() {
        use ResultType::*;
        let c = |t: ResultType, v: Value| t.convert(v);
        assert_eq!(c(Text, Value::Int(7)), Ok(Value::from("7")));
        assert_eq!(
            c(Text, Value::from_json(json!({"a": 1}))),
            Ok(Value::from(r#"{"a":1}"#))
        );
        assert_eq!(c(Integer, Value::from(" 42 ")), Ok(Value::Int(42)));
        assert_eq!(c(Integer, Value::Float(2.9)), Ok(Value::Int(2)));
        assert_eq!(c(Decimal, Value::Int(2)), Ok(Value::Float(2.0)));
        assert_eq!(c(Boolean, Value::from("TRUE")), Ok(Value::Bool(true)));
        assert_eq!(c(Boolean, Value::Null), Ok(Value::Null));
        assert_eq!(c(List, Value::Int(1)).map(|v| v.to_json()), Ok(json!([1])));
        let e = c(Integer, Value::from("x\ny")).unwrap_err();
        assert_eq!(e, r#"cannot convert the text "x\ny" to Integer"#);
        assert!(c(Map, Value::from_json(json!([1]))).is_err());
        assert!(c(Boolean, Value::Int(1)).is_err());
        assert_eq!(
            c(Integer, Value::Json(Arc::new(json!(3)))),
            Ok(Value::Int(3))
        );
    }
}
