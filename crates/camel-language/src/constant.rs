//! The `constant` language: the expression text itself, as text.
//!
//! Numbers stay text (`constant: "42"` is the text `42`), as in Camel, so a constant never
//! changes type depending on what it happens to look like; `result_type` (Camel's
//! `resultType`, say `Integer`) converts it once, when the route is compiled. YAML's null
//! (`constant: null`) is a null value: the body is emptied, a header set to null.
//!
//! ```
//! use camel_api::{Exchange, Value};
//! let c = camel_language::constant("42");
//! assert_eq!(c.evaluate(&Exchange::default()).unwrap(), Value::from("42"));
//! ```

use std::sync::Arc;

use camel_api::{
    BoxExpression, CamelError, Exchange, Expression, ExpressionError, Language, Value,
};

use crate::options::{reject_options, trimmed, Options};
use crate::problem::located;
use crate::result_type::{ResultType, RESULT_TYPE};

const LANGUAGE: &str = "constant";

/// An expression yielding `text` as [`Value::Text`].
pub fn constant(text: &str) -> BoxExpression {
    Arc::new(ConstantExpression {
        value: Value::Text(text.into()),
    })
}

#[derive(Debug)]
struct ConstantExpression {
    value: Value,
}

impl Expression for ConstantExpression {
    fn evaluate(&self, _exchange: &Exchange) -> Result<Value, CamelError> {
        Ok(self.value.clone())
    }
}

/// The `constant` language for a [`crate::LanguageRegistry`]. Options: `result_type`
/// (alias `resultType`), a Java type name the text is converted to, and `trim`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConstantLanguage;

impl Language for ConstantLanguage {
    fn name(&self) -> &'static str {
        LANGUAGE
    }

    fn expression(&self, text: &str, options: &Options) -> Result<BoxExpression, ExpressionError> {
        reject_options(LANGUAGE, text, options, &[RESULT_TYPE])?;
        let null = options.get(camel_api::definition::NULL_CONSTANT)
            == Some(&serde_json::Value::Bool(true));
        let value = if null {
            Value::Null
        } else {
            Value::Text(trimmed(text, options).into())
        };
        let value = match ResultType::from_options(LANGUAGE, text, options)? {
            // A constant is converted once, so a bad one fails the route, not each message.
            Some(to) => to
                .convert(value)
                .map_err(|message| located(LANGUAGE, text, 0, message))?,
            None => value,
        };
        Ok(Arc::new(ConstantExpression { value }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn yields_the_text_unchanged() {
        let ex = Exchange::default();
        let options = Options::new();
        for text in ["42", " spaced ", "${body}", ""] {
            let value = ConstantLanguage
                .expression(text, &options)
                .unwrap()
                .evaluate(&ex)
                .unwrap();
            assert_eq!(value, Value::from(text));
        }
        assert!(ConstantLanguage
            .predicate("true", &options)
            .unwrap()
            .matches(&ex)
            .unwrap());
        assert!(!ConstantLanguage
            .predicate("no", &options)
            .unwrap()
            .matches(&ex)
            .unwrap());
    }

    fn options(v: serde_json::Value) -> Options {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn result_type_converts_once_when_compiled() {
        let ex = Exchange::default();
        let value = |text: &str, o: serde_json::Value| {
            ConstantLanguage
                .expression(text, &options(o))
                .map(|e| e.evaluate(&ex).unwrap())
        };
        assert_eq!(
            value("42", json!({"resultType": "java.lang.Integer"})),
            Ok(Value::Int(42))
        );
        assert_eq!(
            value("true", json!({"result_type": "boolean"})),
            Ok(Value::Bool(true))
        );
        let e = value("x", json!({"resultType": "Integer"})).unwrap_err();
        assert!(e.message.contains("cannot convert"), "{e}");
        assert!(value("1", json!({"result_typ": "int"})).is_err());
    }

    #[test]
    fn a_null_constant_and_trim() {
        let ex = Exchange::default();
        let null = options(json!({camel_api::definition::NULL_CONSTANT: true}));
        let e = ConstantLanguage.expression("", &null).unwrap();
        assert_eq!(e.evaluate(&ex).unwrap(), Value::Null);
        assert!(!ConstantLanguage
            .predicate("", &null)
            .unwrap()
            .matches(&ex)
            .unwrap());
        let e = ConstantLanguage
            .expression(" x ", &options(json!({"trim": true})))
            .unwrap();
        assert_eq!(e.evaluate(&ex).unwrap(), Value::from("x"));
    }
}
