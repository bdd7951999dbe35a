//! Expression languages: `simple` (also as `csimple`), `jsonpath`, `jq`, `tokenize`,
//! `header`, `exchange_property` (Camel's `exchangeProperty`) and `constant`.
//!
//! Routes compute values (a header to set, a body to build) and decide (filter, choice)
//! with expressions. Each language compiles its text once, when the route is compiled,
//! into a [`camel_api::Expression`] / [`camel_api::Predicate`]; evaluating one against
//! an exchange never parses again. A context finds languages by name in a
//! [`LanguageRegistry`]; the free functions compile one directly.
//!
//! ```
//! use camel_api::{Exchange, Value};
//! use camel_language::{simple, simple_predicate, LanguageRegistry};
//!
//! let ex = Exchange::new("world").with_header("priority", "10");
//!
//! // A template builds text; a lone function yields its value untouched.
//! let greeting = simple("Hello ${body}").unwrap();
//! assert_eq!(greeting.evaluate(&ex).unwrap(), Value::from("Hello world"));
//!
//! // Conditions compare numbers as numbers, even when they arrive as text.
//! let urgent = simple_predicate("${header.priority} > 9").unwrap();
//! assert!(urgent.matches(&ex).unwrap());
//!
//! // Mistakes are reported with the column where they are.
//! let error = simple("${hedaer.priority}").unwrap_err();
//! assert_eq!(error.column, 3);
//!
//! // A registry looks languages up by the name a route uses.
//! let registry = LanguageRegistry::default();
//! let jsonpath = registry.get("jsonpath").unwrap();
//! let mut options = serde_json::Map::new();
//! options.insert("suppress_exceptions".into(), true.into());
//! let id = jsonpath.expression("$.id", &options).unwrap();
//! assert_eq!(id.evaluate(&ex).unwrap(), Value::Null);
//! ```

mod constant;
mod header;
mod jq;
mod jsonpath;
mod options;
mod problem;
mod registry;
mod result_type;
mod simple;
mod source;
mod tokenize;

pub use constant::{constant, ConstantLanguage};
pub use header::{exchange_property, header, ExchangePropertyLanguage, HeaderLanguage};
pub use jq::{jq, JqLanguage, MAX_OUTPUTS as JQ_MAX_OUTPUTS};
pub use jsonpath::{jsonpath, JsonPathLanguage};
pub use registry::LanguageRegistry;
pub use simple::{simple, simple_predicate, simple_uri, SimpleLanguage};
pub use tokenize::{tokenizer, Scanner, TokenizeLanguage, Tokenizer};

/// The user guide to the languages (`docs/languages.md`), with its examples run as doc
/// tests. Only in doc-test builds: a packaged crate has no `docs/` folder beside it.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/languages.md")]
pub struct LanguageGuideDoctests;
