use std::fmt;
use std::sync::Arc;

use crate::{CamelError, Exchange, ExpressionError, Value};

thread_local! {
    static COMPILING_ROUTE: std::cell::RefCell<Option<Arc<str>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` (which compiles expressions) as part of route `route_id`: a language can fix
/// facts of the route into an expression, as the simple language does for `${routeId}`.
/// The route compiler calls this around every language it invokes.
///
/// ```
/// use camel_api::{compiling_route, current_route};
/// assert_eq!(current_route(), None);
/// let seen = compiling_route("orders", current_route);
/// assert_eq!(seen.as_deref(), Some("orders"));
/// ```
pub fn compiling_route<R>(route_id: &str, f: impl FnOnce() -> R) -> R {
    let previous = COMPILING_ROUTE.with(|c| c.replace(Some(route_id.into())));
    struct Restore(Option<Arc<str>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            COMPILING_ROUTE.with(|c| *c.borrow_mut() = previous);
        }
    }
    let _restore = Restore(previous);
    f()
}

/// The route whose expressions are being compiled on this thread, if any.
pub fn current_route() -> Option<Arc<str>> {
    COMPILING_ROUTE.with(|c| c.borrow().clone())
}

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
