//! The `jsonpath` language (RFC 9535 JSONPath, through `serde_json_path`), evaluated on
//! the message body.
//!
//! A JSON body is queried in place; text or bytes are parsed as JSON first. A definite
//! path (names and single indexes: `$.order.id`, `$.items[0]`) yields the value it names
//! with its JSON type (a number stays a number), and no match is an error unless the
//! expression suppresses exceptions (then it yields null). Any other path (a wildcard,
//! filter, slice, list of selectors or `..`) yields a JSON array of its matches, empty
//! when there is none — as camel-jsonpath (Jayway) does. As a predicate, a query holds
//! when it matches something (a single boolean match holds when it is `true`).
//!
//! Camel's options: `suppress_exceptions`; `write_as_string` (each element of a list
//! result, each value of a map result, or a single result becomes its JSON text, as
//! camel-jsonpath writes it with Jackson: a string keeps its quotes); `result_type`
//! (`String`, `Integer`, `List`…, applied after `write_as_string`; a `List` of a single
//! value is a one-element list); `unpack_array` (with a `result_type` that is not a
//! list, a one-element array is unpacked first).
//!
//! ```
//! use camel_api::{Body, Exchange, Value};
//! use camel_language::jsonpath;
//!
//! let ex = Exchange::new(Body::from(r#"{"order": {"id": 7, "items": ["a", "b"]}}"#));
//! let id = jsonpath("$.order.id", false).unwrap();
//! assert_eq!(id.evaluate(&ex).unwrap(), Value::Int(7));
//! let missing = jsonpath("$.order.customer", true).unwrap();
//! assert_eq!(missing.evaluate(&ex).unwrap(), Value::Null);
//! ```

use std::borrow::Cow;
use std::sync::Arc;

use camel_api::{
    Body, BoxExpression, BoxPredicate, CamelError, Exchange, Expression, ExpressionError, Language,
    Predicate, Value,
};
use serde_json_path::JsonPath;

use crate::options::{bool_option, reject_options, trimmed, Options};
use crate::problem::located;
use crate::result_type::{ResultType, RESULT_TYPE};
use crate::source::{Source, HEADER_NAME, SOURCE};

const LANGUAGE: &str = "jsonpath";
const SUPPRESS: (&str, &str) = ("suppress_exceptions", "suppressExceptions");
const WRITE_AS_STRING: (&str, &str) = ("write_as_string", "writeAsString");
const UNPACK_ARRAY: (&str, &str) = ("unpack_array", "unpackArray");

/// Compiles a JSONPath query over the body. With `suppress_exceptions`, a query that
/// matches nothing (or a body that is not JSON) yields null instead of an error.
pub fn jsonpath(text: &str, suppress_exceptions: bool) -> Result<BoxExpression, ExpressionError> {
    Ok(Arc::new(compile(text, suppress_exceptions)?))
}

fn compile(text: &str, suppress_exceptions: bool) -> Result<JsonPathExpression, ExpressionError> {
    let path = JsonPath::parse(text.trim()).map_err(|e| {
        let leading = text.len() - text.trim_start().len();
        // The parser reports a byte offset into the trimmed query.
        let at = leading + e.position();
        located(LANGUAGE, text, at, e.message().to_owned())
    })?;
    Ok(JsonPathExpression {
        text: text.into(),
        path,
        suppress_exceptions,
        shape: Shape::default(),
        source: None,
        definite: is_definite(text),
    })
}

/// What happens to a result after the query: Camel's `writeAsString`, `resultType` and
/// `unpackArray`.
#[derive(Debug, Default, Clone, Copy)]
struct Shape {
    write_as_string: bool,
    result_type: Option<ResultType>,
    unpack_array: bool,
}

impl Shape {
    fn apply(self, value: Value) -> Result<Value, String> {
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

#[derive(Debug)]
struct JsonPathExpression {
    text: Arc<str>,
    path: JsonPath,
    suppress_exceptions: bool,
    shape: Shape,
    /// Camel's `source` / `headerName`: the document instead of the body.
    source: Option<Source>,
    /// The path names at most one node ([`is_definite`]).
    definite: bool,
}

/// Whether a path names at most one node — Jayway's "definite path", which
/// camel-jsonpath runs on: names and single indexes only, no wildcard, filter, slice,
/// list of selectors or descendant segment. Any other path yields a list, whatever it
/// matched (one node, or none: an empty list, not an error).
fn is_definite(path: &str) -> bool {
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

impl JsonPathExpression {
    fn failure(&self, message: impl Into<String>) -> CamelError {
        located(LANGUAGE, &self.text, 0, message).into()
    }

    /// The body as JSON, borrowed when it already is JSON. `None` for an empty body.
    fn document<'a>(
        &self,
        body: &'a Body,
    ) -> Result<Option<Cow<'a, serde_json::Value>>, CamelError> {
        let parsed = match body {
            Body::Json(j) => return Ok(Some(Cow::Borrowed(&**j))),
            Body::Empty => return Ok(None),
            Body::Text(s) => serde_json::from_str(s),
            Body::Bytes(b) => serde_json::from_slice(b),
        };
        parsed
            .map(|json| Some(Cow::Owned(json)))
            .map_err(|e| self.failure(format!("the body is not JSON: {e}")))
    }
}

impl Expression for JsonPathExpression {
    fn evaluate(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        let value = match &self.source {
            None => self.query(&exchange.message.body)?,
            Some(s) => match s.body(LANGUAGE, &self.text, exchange) {
                Ok(body) => self.query(&body)?,
                Err(_) if self.suppress_exceptions => Value::Null,
                Err(e) => return Err(e),
            },
        };
        self.shape.apply(value).map_err(|e| self.failure(e))
    }
}

impl JsonPathExpression {
    /// The query's result on `body`, before Camel's result options.
    fn query(&self, body: &Body) -> Result<Value, CamelError> {
        let document = match self.document(body) {
            Ok(Some(document)) => document,
            Ok(None) if self.suppress_exceptions => return Ok(Value::Null),
            Ok(None) => return Err(self.failure("the body is empty")),
            Err(_) if self.suppress_exceptions => return Ok(Value::Null),
            Err(e) => return Err(e),
        };
        let nodes = self.path.query(&document).all();
        if !self.definite {
            // Camel's list for a path that may name several nodes, even one or none.
            return Ok(Value::Json(Arc::new(serde_json::Value::Array(
                nodes.iter().map(|v| (*v).clone()).collect(),
            ))));
        }
        match nodes.as_slice() {
            [] if self.suppress_exceptions => Ok(Value::Null),
            [] => Err(self.failure("no match in the body")),
            [one] => Ok(Value::from_json((*one).clone())),
            many => Ok(Value::Json(Arc::new(serde_json::Value::Array(
                many.iter().map(|v| (*v).clone()).collect(),
            )))),
        }
    }
}

impl Predicate for JsonPathExpression {
    fn matches(&self, exchange: &Exchange) -> Result<bool, CamelError> {
        let from_source;
        let body = match &self.source {
            None => &exchange.message.body,
            Some(s) => match s.body(LANGUAGE, &self.text, exchange) {
                Ok(body) => {
                    from_source = body;
                    &from_source
                }
                // An absent document matches nothing, as an empty body does.
                Err(_) => return Ok(false),
            },
        };
        let document = match self.document(body) {
            Ok(Some(document)) => document,
            Ok(None) => return Ok(false),
            Err(_) if self.suppress_exceptions => return Ok(false),
            Err(e) => return Err(e),
        };
        let nodes = self.path.query(&document);
        Ok(match nodes.exactly_one() {
            Ok(serde_json::Value::Bool(b)) => *b,
            Ok(_) => true,
            Err(_) => !nodes.is_empty(),
        })
    }
}

/// The `jsonpath` language for a [`crate::LanguageRegistry`]. Options (snake_case, or
/// Camel's camelCase): `suppress_exceptions`, `write_as_string`, `unpack_array`
/// (booleans, default false), `result_type` (a Java type name), `source`
/// (`header:NAME`, `property:NAME`, `variable:NAME`; Camel 3's `headerName`) and `trim`.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonPathLanguage;

impl JsonPathLanguage {
    fn compile(
        &self,
        text: &str,
        options: &Options,
    ) -> Result<JsonPathExpression, ExpressionError> {
        reject_options(
            LANGUAGE,
            text,
            options,
            &[
                SUPPRESS,
                WRITE_AS_STRING,
                UNPACK_ARRAY,
                RESULT_TYPE,
                SOURCE,
                HEADER_NAME,
            ],
        )?;
        let suppress = bool_option(LANGUAGE, text, options, SUPPRESS)?;
        let shape = Shape {
            write_as_string: bool_option(LANGUAGE, text, options, WRITE_AS_STRING)?,
            result_type: ResultType::from_options(LANGUAGE, text, options)?,
            unpack_array: bool_option(LANGUAGE, text, options, UNPACK_ARRAY)?,
        };
        Ok(JsonPathExpression {
            shape,
            source: Source::from_options(LANGUAGE, text, options)?,
            ..compile(trimmed(text, options), suppress)?
        })
    }
}

impl Language for JsonPathLanguage {
    fn name(&self) -> &'static str {
        LANGUAGE
    }

    fn expression(&self, text: &str, options: &Options) -> Result<BoxExpression, ExpressionError> {
        Ok(Arc::new(self.compile(text, options)?))
    }

    fn predicate(&self, text: &str, options: &Options) -> Result<BoxPredicate, ExpressionError> {
        Ok(Arc::new(self.compile(text, options)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn order() -> Exchange {
        Exchange::new(Body::from(json!({
            "id": 7,
            "vip": true,
            "items": [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 5}]
        })))
    }

    #[test]
    fn one_match_is_that_value() {
        let ex = order();
        assert_eq!(
            jsonpath("$.id", false).unwrap().evaluate(&ex).unwrap(),
            Value::Int(7)
        );
        assert_eq!(
            jsonpath("$.items[0].sku", false)
                .unwrap()
                .evaluate(&ex)
                .unwrap(),
            Value::from("a")
        );
        let item = jsonpath("$.items[1]", false)
            .unwrap()
            .evaluate(&ex)
            .unwrap();
        assert_eq!(item.to_json(), json!({"sku": "b", "qty": 5}));
    }

    #[test]
    fn a_path_that_may_name_several_nodes_is_always_a_list() {
        let ex = order();
        let value = |t: &str| jsonpath(t, false).unwrap().evaluate(&ex).unwrap().to_json();
        assert_eq!(value("$.items[?@.qty > 3].sku"), json!(["b"]));
        assert_eq!(value("$.items[?@.qty > 9]"), json!([]));
        assert_eq!(value("$..sku"), json!(["a", "b"]));
        assert_eq!(value("$.items[0:1].qty"), json!([2]));
        assert_eq!(value("$['items'][1]['sku']"), json!("b"));
        assert!(is_definite("$.a['x,y:*?'][0]"));
        assert!(!is_definite("$.a[0,1]"));
        assert!(!is_definite("$.a.*"));
    }

    #[test]
    fn several_matches_are_an_array() {
        let skus = jsonpath("$.items[*].sku", false)
            .unwrap()
            .evaluate(&order())
            .unwrap();
        assert_eq!(skus.to_json(), json!(["a", "b"]));
    }

    #[test]
    fn no_match_is_an_error_unless_suppressed() {
        let ex = order();
        let err = jsonpath("$.missing", false)
            .unwrap()
            .evaluate(&ex)
            .unwrap_err();
        assert!(
            matches!(err, CamelError::Expression(ref e) if e.language == "jsonpath"),
            "{err}"
        );
        assert_eq!(
            jsonpath("$.missing", true).unwrap().evaluate(&ex).unwrap(),
            Value::Null
        );
    }

    #[test]
    fn text_and_bytes_bodies_are_parsed() {
        let text = Exchange::new(r#"{"a": [1, 2]}"#);
        assert_eq!(
            jsonpath("$.a[1]", false).unwrap().evaluate(&text).unwrap(),
            Value::Int(2)
        );
        let bytes = Exchange::new(Body::from(br#"{"a": "x"}"#.to_vec()));
        assert_eq!(
            jsonpath("$.a", false).unwrap().evaluate(&bytes).unwrap(),
            Value::from("x")
        );
    }

    #[test]
    fn bodies_that_are_not_json() {
        let text = Exchange::new("not json");
        let err = jsonpath("$.a", false).unwrap().evaluate(&text).unwrap_err();
        assert!(err.to_string().contains("not JSON"), "{err}");
        assert_eq!(
            jsonpath("$.a", true).unwrap().evaluate(&text).unwrap(),
            Value::Null
        );
        let empty = Exchange::default();
        assert!(jsonpath("$.a", false).unwrap().evaluate(&empty).is_err());
        assert_eq!(
            jsonpath("$.a", true).unwrap().evaluate(&empty).unwrap(),
            Value::Null
        );
    }

    #[test]
    fn bad_paths_report_their_column() {
        let err = jsonpath("$.a[", false).unwrap_err();
        assert_eq!(err.language, "jsonpath");
        assert_eq!(err.column, 4, "{err}");
        let err = jsonpath("  nope", false).unwrap_err();
        assert_eq!(err.column, 3, "{err}");
    }

    #[test]
    fn predicates_hold_on_a_match_or_a_true_value() {
        let ex = order();
        let options = Options::new();
        let holds = |text: &str| {
            JsonPathLanguage
                .predicate(text, &options)
                .unwrap()
                .matches(&ex)
                .unwrap()
        };
        assert!(holds("$.items[?@.qty > 3]"));
        assert!(!holds("$.items[?@.qty > 9]"));
        assert!(holds("$.vip"));
        assert!(!holds("$.missing"));
        let not_json = Exchange::new("x");
        assert!(JsonPathLanguage
            .predicate("$.a", &options)
            .unwrap()
            .matches(&not_json)
            .is_err());
    }

    fn with(options: serde_json::Value) -> Options {
        options.as_object().cloned().unwrap_or_default()
    }

    fn eval(text: &str, options: serde_json::Value) -> Result<Value, CamelError> {
        JsonPathLanguage
            .expression(text, &with(options))
            .unwrap()
            .evaluate(&order())
    }

    #[test]
    fn results_keep_their_json_type() {
        assert_eq!(eval("$.id", json!({})).unwrap().to_json(), json!(7));
        assert_eq!(eval("$.vip", json!({})).unwrap().to_json(), json!(true));
        assert_eq!(eval("$.items[1].qty", json!({})).unwrap(), Value::Int(5));
    }

    #[test]
    fn write_as_string_writes_each_element_as_json_text() {
        let w = json!({"writeAsString": true});
        assert_eq!(
            eval("$.items", w.clone()).unwrap().to_json(),
            json!([r#"{"qty":2,"sku":"a"}"#, r#"{"qty":5,"sku":"b"}"#])
        );
        assert_eq!(
            eval("$.items[0]", w.clone()).unwrap().to_json(),
            json!({"qty": "2", "sku": r#""a""#})
        );
        // A single string keeps its quotes, as Jackson writes it.
        assert_eq!(
            eval("$.items[0].sku", w.clone()).unwrap(),
            Value::from(r#""a""#)
        );
        assert_eq!(eval("$.id", w).unwrap(), Value::from("7"));
    }

    #[test]
    fn result_type_and_unpack_array() {
        assert_eq!(
            eval("$.id", json!({"resultType": "String"})).unwrap(),
            Value::from("7")
        );
        assert_eq!(
            eval("$.id", json!({"result_type": "java.util.List"}))
                .unwrap()
                .to_json(),
            json!([7])
        );
        let one = json!({"resultType": "Integer", "unpackArray": true});
        assert_eq!(
            eval("$.items[?@.qty > 3].qty", one.clone()).unwrap(),
            Value::Int(5)
        );
        // Two matches are an array, which no unpacking makes an integer.
        assert!(eval("$.items[*].qty", one).is_err());
        let err = eval("$.items", json!({"resultType": "Integer"})).unwrap_err();
        assert!(err.to_string().contains("cannot convert a list"), "{err}");
        // Suppressed: a missing path is null, whatever the result type.
        let none = json!({"suppressExceptions": true, "resultType": "Integer"});
        assert_eq!(eval("$.nope", none).unwrap(), Value::Null);
        assert!(JsonPathLanguage
            .expression("$", &with(json!({"resultType": "Order"})))
            .is_err());
    }

    #[test]
    fn source_reads_another_document() {
        let ex = Exchange::new("not json").with_header("doc", r#"{"a": [1, 2]}"#);
        let with_source = |o: serde_json::Value| {
            JsonPathLanguage
                .expression("$.a[1]", &with(o))
                .unwrap()
                .evaluate(&ex)
        };
        assert_eq!(
            with_source(json!({"source": "header:doc"})).unwrap(),
            Value::Int(2)
        );
        assert_eq!(
            with_source(json!({"headerName": "doc"})).unwrap(),
            Value::Int(2)
        );
        assert!(with_source(json!({"source": "header:x"})).is_err());
        let quiet = json!({"source": "header:x", "suppressExceptions": true});
        assert_eq!(with_source(quiet).unwrap(), Value::Null);
        let p = JsonPathLanguage
            .predicate("$.a", &with(json!({"source": "header:doc"})))
            .unwrap();
        assert!(p.matches(&ex).unwrap());
    }

    #[test]
    fn the_language_reads_suppress_exceptions() {
        let ex = order();
        let mut options = Options::new();
        options.insert("suppress_exceptions".into(), true.into());
        let e = JsonPathLanguage.expression("$.missing", &options).unwrap();
        assert_eq!(e.evaluate(&ex).unwrap(), Value::Null);
        let mut options = Options::new();
        options.insert("suppress".into(), true.into());
        assert!(JsonPathLanguage.expression("$.missing", &options).is_err());
    }
}
