//! XML for routes: the `xpath` expression language and the `xslt:` component, on the
//! pure-Rust xee stack (XPath 3.1, XSLT 3.0; ADR 0112). No C library is linked.
//!
//! Everything read from a message is bounded before it is evaluated: at most
//! [`MAX_XML_BYTES`] of text and [`MAX_DEPTH`] levels of nesting (a deeper document
//! fails the exchange instead of recursing), and no external entity or DTD is loaded.
//!
//! Register both in a context: the language under `xpath`, the component under `xslt`.
//!
//! ```
//! use std::sync::Arc;
//! use camel_api::{Exchange, Language};
//! use camel_xml::XPathLanguage;
//!
//! let xpath = XPathLanguage;
//! let id = xpath.expression("/order/@id", &Default::default()).unwrap();
//! let ex = Exchange::new(r#"<order id="7"><item>book</item></order>"#);
//! assert_eq!(id.evaluate(&ex).unwrap().to_string(), "7");
//! let big = xpath.predicate("count(/order/item) > 1", &Default::default()).unwrap();
//! assert!(!big.matches(&ex).unwrap());
//! ```

mod document;
mod xpath;
mod xslt;

pub use document::{XmlError, MAX_DEPTH, MAX_XML_BYTES};
pub use xpath::XPathLanguage;
pub use xslt::XsltComponent;
