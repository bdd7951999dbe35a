//! The `header` language: the value of one header, named by the expression text.
//!
//! ```
//! use camel_api::{Exchange, Value};
//! let ex = Exchange::new("").with_header("id", 7);
//! assert_eq!(camel_language::header("id").evaluate(&ex).unwrap(), Value::Int(7));
//! assert_eq!(camel_language::header("other").evaluate(&ex).unwrap(), Value::Null);
//! ```

use std::sync::Arc;

use camel_api::{
    BoxExpression, CamelError, Exchange, Expression, ExpressionError, Language, Value,
};

use crate::options::{reject_options, Options};
use crate::problem::located;

const LANGUAGE: &str = "header";

/// An expression yielding the header `name`, or null when it is absent.
pub fn header(name: &str) -> BoxExpression {
    Arc::new(HeaderExpression { name: name.into() })
}

#[derive(Debug)]
struct HeaderExpression {
    name: Arc<str>,
}

impl Expression for HeaderExpression {
    fn evaluate(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        Ok(exchange.header(&self.name).cloned().unwrap_or_default())
    }
}

/// The `header` language for a [`crate::LanguageRegistry`]: the text is a header name
/// (surrounding whitespace ignored). Takes no options.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeaderLanguage;

impl Language for HeaderLanguage {
    fn name(&self) -> &'static str {
        LANGUAGE
    }

    fn expression(&self, text: &str, options: &Options) -> Result<BoxExpression, ExpressionError> {
        reject_options(LANGUAGE, text, options, &[])?;
        let name = text.trim();
        if name.is_empty() {
            return Err(located(LANGUAGE, text, 0, "missing header name"));
        }
        Ok(header(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_named_header_or_null() {
        let ex = Exchange::new("").with_header("a", "x");
        let options = Options::new();
        let a = HeaderLanguage.expression(" a ", &options).unwrap();
        assert_eq!(a.evaluate(&ex).unwrap(), Value::from("x"));
        assert_eq!(header("b").evaluate(&ex).unwrap(), Value::Null);
        let flag = HeaderLanguage.predicate("a", &options).unwrap();
        assert!(!flag.matches(&ex).unwrap());
        let ex = ex.with_header("a", true);
        assert!(flag.matches(&ex).unwrap());
    }

    #[test]
    fn an_empty_name_is_an_error() {
        let e = HeaderLanguage
            .expression("  ", &Options::new())
            .unwrap_err();
        assert_eq!((e.language.as_str(), e.column), ("header", 1));
    }
}
