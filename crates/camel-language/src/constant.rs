//! The `constant` language: the expression text itself, as text.
//!
//! Numbers stay text (`constant: "42"` is the text `42`), as in Camel, so a constant never
//! changes type depending on what it happens to look like.
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

use crate::options::{reject_options, Options};

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

/// The `constant` language for a [`crate::LanguageRegistry`]. Takes no options.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConstantLanguage;

impl Language for ConstantLanguage {
    fn name(&self) -> &'static str {
        LANGUAGE
    }

    fn expression(&self, text: &str, options: &Options) -> Result<BoxExpression, ExpressionError> {
        reject_options(LANGUAGE, text, options, &[])?;
        Ok(constant(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn rejects_options() {
        let mut options = Options::new();
        options.insert("result_type".into(), "int".into());
        assert!(ConstantLanguage.expression("1", &options).is_err());
    }
}
