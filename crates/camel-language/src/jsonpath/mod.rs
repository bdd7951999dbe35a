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
use shape::{is_definite, Shape};

mod shape;

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
mod tests;
