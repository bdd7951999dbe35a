use std::fmt;
use std::sync::Arc;

use crate::{CamelError, Exchange, ExpressionError, Value};

/// A compiled expression: evaluated against an exchange, yields a [`Value`].
///
/// Expressions are parsed once, when a route is compiled; evaluation never parses.
pub trait Expression: Send + Sync + fmt::Debug + 'static {
    /// Evaluates against `exchange`.
    fn evaluate(&self, exchange: &Exchange) -> Result<Value, CamelError>;
}

/// A compiled predicate: evaluated against an exchange, yields a boolean.
pub trait Predicate: Send + Sync + fmt::Debug + 'static {
    /// Tests `exchange`.
    fn matches(&self, exchange: &Exchange) -> Result<bool, CamelError>;
}

/// A shared compiled expression.
pub type BoxExpression = Arc<dyn Expression>;
/// A shared compiled predicate.
pub type BoxPredicate = Arc<dyn Predicate>;

/// An expression language (`simple`, `jsonpath`, `header`, `constant`, …).
pub trait Language: Send + Sync + fmt::Debug + 'static {
    /// The name used in routes (`simple`).
    fn name(&self) -> &'static str;

    /// Compiles an expression. `options` are the language's options from the route
    /// (for example `suppress_exceptions` for jsonpath), keys in snake_case.
    fn expression(
        &self,
        text: &str,
        options: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<BoxExpression, ExpressionError>;

    /// Compiles a predicate. The default evaluates the expression and tests truthiness.
    fn predicate(
        &self,
        text: &str,
        options: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<BoxPredicate, ExpressionError> {
        Ok(Arc::new(Truthy(self.expression(text, options)?)))
    }
}

#[derive(Debug)]
struct Truthy(BoxExpression);

impl Predicate for Truthy {
    fn matches(&self, exchange: &Exchange) -> Result<bool, CamelError> {
        Ok(self.0.evaluate(exchange)?.is_truthy())
    }
}
