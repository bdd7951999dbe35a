//! Camel's `source` option of `jq` and `jsonpath`: run on a header, a property or a
//! variable instead of the body.
//!
//! Camel 4 writes `source: header:NAME`, `property:NAME` (also `exchangeProperty:NAME`)
//! or `variable:NAME`, and a bare name is a variable; Camel 3's `headerName` and
//! `propertyName` options say the same.
//!
//! ```
//! use camel_api::{Exchange, Value};
//! use camel_language::LanguageRegistry;
//!
//! let jq = LanguageRegistry::default().get("jq").unwrap();
//! let mut options = serde_json::Map::new();
//! options.insert("source".into(), "header:order".into());
//! let id = jq.expression(".id", &options).unwrap();
//! let ex = Exchange::new("not json").with_header("order", r#"{"id": 7}"#);
//! assert_eq!(id.evaluate(&ex).unwrap(), Value::Int(7));
//! ```

use std::borrow::Cow;
use std::sync::Arc;

use camel_api::variables::Variable;
use camel_api::{Body, CamelError, Exchange, ExpressionError, Value};

use crate::options::{text_option, Options};
use crate::problem::located;

/// The option names: Camel 4's `source`, Camel 3's `headerName` and `propertyName`.
pub(crate) const SOURCE: (&str, &str) = ("source", "source");
pub(crate) const HEADER_NAME: (&str, &str) = ("header_name", "headerName");
pub(crate) const PROPERTY_NAME: (&str, &str) = ("property_name", "propertyName");

/// Where a query reads its document.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    Header(Arc<str>),
    Property(Arc<str>),
    Variable(Variable),
}

impl Source {
    /// Reads the options; `Ok(None)` means the body.
    pub(crate) fn from_options(
        language: &str,
        text: &str,
        options: &Options,
    ) -> Result<Option<Source>, ExpressionError> {
        let fail = |message: String| located(language, text, 0, message);
        let named = |name: &str, what: &str| {
            let name = name.trim();
            if name.is_empty() {
                Err(fail(format!("missing the {what} name in `source`")))
            } else {
                Ok(Arc::<str>::from(name))
            }
        };
        if let Some(source) = text_option(language, text, options, SOURCE)? {
            let source = source.trim();
            if source.is_empty() || source == "body" {
                return Ok(None);
            }
            if let Some(name) = source.strip_prefix("header:") {
                return Ok(Some(Source::Header(named(name, "header")?)));
            }
            for prefix in ["property:", "exchangeProperty:"] {
                if let Some(name) = source.strip_prefix(prefix) {
                    return Ok(Some(Source::Property(named(name, "property")?)));
                }
            }
            let name = source.strip_prefix("variable:").unwrap_or(source);
            let variable = Variable::parse(&named(name, "variable")?)
                .map_err(|e| fail(format!("`source`: {e}")))?;
            return Ok(Some(Source::Variable(variable)));
        }
        // Camel 3: the header wins when both are given.
        if let Some(name) = text_option(language, text, options, HEADER_NAME)? {
            return Ok(Some(Source::Header(named(name, "header")?)));
        }
        if let Some(name) = text_option(language, text, options, PROPERTY_NAME)? {
            return Ok(Some(Source::Property(named(name, "property")?)));
        }
        Ok(None)
    }

    /// The document: the value read as a body. Absent is an error, as in Camel.
    pub(crate) fn body(
        &self,
        language: &str,
        text: &str,
        exchange: &Exchange,
    ) -> Result<Body, CamelError> {
        match self.value(exchange) {
            Some(v) if !matches!(*v, Value::Null) => Ok(Body::from(v.into_owned())),
            _ => Err(located(language, text, 0, format!("{} is not set", self.describe())).into()),
        }
    }

    /// The value, if set.
    pub(crate) fn value<'a>(&self, exchange: &'a Exchange) -> Option<Cow<'a, Value>> {
        match self {
            Source::Header(name) => exchange.header(name).map(Cow::Borrowed),
            Source::Property(name) => exchange.property(name).map(Cow::Borrowed),
            Source::Variable(variable) => variable.get(exchange),
        }
    }

    fn describe(&self) -> String {
        match self {
            Source::Header(name) => format!("the source header `{name}`"),
            Source::Property(name) => format!("the source property `{name}`"),
            Source::Variable(v) => format!("the source variable `{}`", v.name),
        }
    }
}
