//! The Camel `simple` language: text templates with `${...}` functions, and conditions.
//!
//! The text is parsed once, into a tree that evaluation walks without parsing again.
//! A text that is exactly one function (`${header.x}`) yields that value untouched; text
//! mixed with functions yields one string; operators (`==`, `contains`, `regex`, `in`,
//! `&&`, …) yield a boolean. Functions take arguments and nest
//! (`${substringAfter(${header.path},'/')}`), and values take indexes and method calls
//! (`${body[items][0]}`, `${header.id.toUpperCase()}`). See `docs/languages.md` for the
//! full syntax and `docs/compatibility.md` for how it differs from Camel's.
//!
//! ```
//! use camel_api::{Exchange, Value};
//! use camel_language::{simple, simple_predicate};
//!
//! let ex = Exchange::new("world").with_header("n", 10);
//! let greeting = simple("Hello ${body} (${header.n})").unwrap();
//! assert_eq!(greeting.evaluate(&ex).unwrap(), Value::from("Hello world (10)"));
//!
//! let big = simple_predicate("${header.n} > 9 && ${body} contains 'or'").unwrap();
//! assert!(big.matches(&ex).unwrap());
//!
//! let error = simple("${header.n} == ").unwrap_err();
//! assert_eq!(error.column, 15);
//! ```

mod ast;
mod compare;
mod dynamic_regex;
mod function;
mod lexer;
mod parser;
mod uri;

use std::fmt;
use std::sync::Arc;

use camel_api::{
    BoxExpression, BoxPredicate, CamelError, Exchange, Expression, ExpressionError, Language,
    Predicate, Value,
};

use crate::options::{reject_options, trimmed};
use crate::result_type::{ResultType, RESULT_TYPE};
use ast::Node;
use parser::Mode;
pub use uri::simple_uri;

const LANGUAGE: &str = "simple";

/// Compiles a `simple` expression: a template, a single value, or a condition
/// (which evaluates to a boolean).
pub fn simple(text: &str) -> Result<BoxExpression, ExpressionError> {
    Ok(Arc::new(compile(text, Mode::Expression)?))
}

/// Compiles a `simple` predicate: a condition, or a value tested for truthiness
/// (`true`, or the text `"true"`).
pub fn simple_predicate(text: &str) -> Result<BoxPredicate, ExpressionError> {
    Ok(Arc::new(compile(text, Mode::Predicate)?))
}

fn compile(text: &str, mode: Mode) -> Result<SimpleExpression, ExpressionError> {
    let node = parser::parse(text, mode).map_err(|p| p.into_error(LANGUAGE, text))?;
    Ok(SimpleExpression {
        text: text.into(),
        node,
        result_type: None,
    })
}

/// A compiled simple expression.
struct SimpleExpression {
    text: Arc<str>,
    node: Node,
    /// Camel's `resultType`: the value converted before it is handed on.
    result_type: Option<ResultType>,
}

impl fmt::Debug for SimpleExpression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "simple({:?})", self.text)
    }
}

impl Expression for SimpleExpression {
    fn evaluate(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        // Without a `resultType` the node's result is returned as it is: no match on it,
        // no move of the value (this is on every step's path; see docs/benchmarks.md).
        match self.result_type {
            None => self.node.evaluate(exchange),
            Some(to) => self.converted(to, exchange),
        }
    }
}

impl SimpleExpression {
    #[inline(never)]
    fn converted(&self, to: ResultType, exchange: &Exchange) -> Result<Value, CamelError> {
        let value = self.node.evaluate(exchange)?;
        to.convert(value)
            .map_err(|message| crate::problem::located(LANGUAGE, &self.text, 0, message).into())
    }
}

impl Predicate for SimpleExpression {
    fn matches(&self, exchange: &Exchange) -> Result<bool, CamelError> {
        self.node.matches(exchange)
    }
}

/// The `simple` language for a [`crate::LanguageRegistry`]. Options: `result_type`
/// (alias `resultType`, a Java type name the value is converted to) and `trim`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimpleLanguage;

impl Language for SimpleLanguage {
    fn name(&self) -> &'static str {
        LANGUAGE
    }

    fn expression(
        &self,
        text: &str,
        options: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<BoxExpression, ExpressionError> {
        reject_options(LANGUAGE, text, options, &[RESULT_TYPE])?;
        let result_type = ResultType::from_options(LANGUAGE, text, options)?;
        Ok(Arc::new(SimpleExpression {
            result_type,
            ..compile(trimmed(text, options), Mode::Expression)?
        }))
    }

    fn predicate(
        &self,
        text: &str,
        options: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<BoxPredicate, ExpressionError> {
        // A predicate yields a boolean: `resultType` has nothing to convert.
        reject_options(LANGUAGE, text, options, &[RESULT_TYPE])?;
        ResultType::from_options(LANGUAGE, text, options)?;
        simple_predicate(trimmed(text, options))
    }
}

#[cfg(test)]
mod function_tests;
#[cfg(test)]
mod function_tests_more;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod variable_tests;
