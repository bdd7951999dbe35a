//! The `header` and `exchangeProperty` languages: the value of one header, or of one
//! exchange property, named by the expression text.
//!
//! ```
//! use camel_api::{Exchange, Value};
//! let ex = Exchange::new("").with_header("id", 7);
//! assert_eq!(camel_language::header("id").evaluate(&ex).unwrap(), Value::Int(7));
//! assert_eq!(camel_language::header("other").evaluate(&ex).unwrap(), Value::Null);
//! let mut ex = ex;
//! ex.properties.insert("step", "two");
//! let step = camel_language::exchange_property("step");
//! assert_eq!(step.evaluate(&ex).unwrap(), Value::from("two"));
//! ```

use std::sync::Arc;

use camel_api::{
    BoxExpression, CamelError, Exchange, Expression, ExpressionError, Language, Value,
};

use crate::options::{reject_options, Options};
use crate::problem::located;

/// Where a named value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Header,
    Property,
}

impl Slot {
    /// The language's name, as the registry knows it.
    fn language(self) -> &'static str {
        match self {
            Slot::Header => "header",
            Slot::Property => "exchange_property",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Slot::Header => "header",
            Slot::Property => "property",
        }
    }

    fn compile(self, text: &str, options: &Options) -> Result<BoxExpression, ExpressionError> {
        let language = self.language();
        reject_options(language, text, options, &[])?;
        let name = text.trim();
        if name.is_empty() {
            return Err(located(
                language,
                text,
                0,
                format!("missing {} name", self.what()),
            ));
        }
        Ok(Arc::new(NamedValue {
            slot: self,
            name: name.into(),
        }))
    }
}

/// An expression yielding the header `name`, or null when it is absent.
pub fn header(name: &str) -> BoxExpression {
    Arc::new(NamedValue {
        slot: Slot::Header,
        name: name.into(),
    })
}

/// An expression yielding the exchange property `name`, or null when it is absent.
pub fn exchange_property(name: &str) -> BoxExpression {
    Arc::new(NamedValue {
        slot: Slot::Property,
        name: name.into(),
    })
}

#[derive(Debug)]
struct NamedValue {
    slot: Slot,
    name: Arc<str>,
}

impl Expression for NamedValue {
    fn evaluate(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        let found = match self.slot {
            Slot::Header => exchange.header(&self.name),
            Slot::Property => exchange.property(&self.name),
        };
        Ok(found.cloned().unwrap_or_default())
    }
}

/// The `header` language for a [`crate::LanguageRegistry`]: the text is a header name
/// (surrounding whitespace ignored). Takes no options.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeaderLanguage;

impl Language for HeaderLanguage {
    fn name(&self) -> &'static str {
        Slot::Header.language()
    }

    fn expression(&self, text: &str, options: &Options) -> Result<BoxExpression, ExpressionError> {
        Slot::Header.compile(text, options)
    }
}

/// Camel's `exchangeProperty` language (registered as `exchange_property`): the text is
/// a property name (surrounding whitespace ignored). Takes no options.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExchangePropertyLanguage;

impl Language for ExchangePropertyLanguage {
    fn name(&self) -> &'static str {
        Slot::Property.language()
    }

    fn expression(&self, text: &str, options: &Options) -> Result<BoxExpression, ExpressionError> {
        Slot::Property.compile(text, options)
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
    fn reads_the_named_property_not_a_header_of_that_name() {
        let mut ex = Exchange::new("").with_header("p", "header");
        let p = ExchangePropertyLanguage
            .expression(" p ", &Options::new())
            .unwrap();
        assert_eq!(p.evaluate(&ex).unwrap(), Value::Null);
        ex.properties.insert("p", 3);
        assert_eq!(p.evaluate(&ex).unwrap(), Value::Int(3));
    }

    #[test]
    fn an_empty_name_is_an_error() {
        let e = HeaderLanguage
            .expression("  ", &Options::new())
            .unwrap_err();
        assert_eq!((e.language.as_str(), e.column), ("header", 1));
        let e = ExchangePropertyLanguage
            .expression("", &Options::new())
            .unwrap_err();
        assert_eq!(e.language.as_str(), "exchange_property");
        assert!(e.to_string().contains("missing property name"), "{e}");
    }
}
