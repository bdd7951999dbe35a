//! Small stand-ins for tests, examples and benchmarks of sinks.
//!
//! The real expression languages live in another crate; a sink's tests only need "read
//! this header", so [`HeaderExpression`] does that, and [`HeaderContext`] is a
//! [`ComponentContext`] that compiles `${header.NAME}` (and literals) with it.
//!
//! ```
//! use camel_api::{ComponentContext, Exchange};
//! use camel_sinks::testing::HeaderContext;
//! let ctx = HeaderContext { route_id: None };
//! let expr = ctx.expression("simple", "${header.k}").unwrap();
//! let ex = Exchange::new("x").with_header("k", "v");
//! assert_eq!(expr.evaluate(&ex).unwrap().to_string(), "v");
//! ```

use std::any::Any;
use std::sync::Arc;

use camel_api::{
    BoxExpression, BoxPredicate, BoxProcessor, CamelError, ComponentContext, Exchange, Expression,
    Value,
};

use crate::codec::BatchCodec;
use crate::producer::SinkProducer;

/// Evaluates to one header of the exchange (null when absent).
#[derive(Debug, Clone)]
pub struct HeaderExpression(pub Arc<str>);

impl Expression for HeaderExpression {
    fn evaluate(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        Ok(exchange.header(&self.0).cloned().unwrap_or(Value::Null))
    }
}

/// Evaluates to a fixed text.
#[derive(Debug, Clone)]
pub struct Literal(pub Arc<str>);

impl Expression for Literal {
    fn evaluate(&self, _exchange: &Exchange) -> Result<Value, CamelError> {
        Ok(Value::Text(self.0.clone()))
    }
}

/// A component context for tests: `${header.NAME}` reads a header, anything else is a
/// literal; no predicates, producers or resources.
#[derive(Debug, Clone)]
pub struct HeaderContext {
    /// The route id it reports.
    pub route_id: Option<String>,
}

impl ComponentContext for HeaderContext {
    fn expression(&self, language: &str, text: &str) -> Result<BoxExpression, CamelError> {
        if language != "simple" {
            return Err(CamelError::processor(format!(
                "language `{language}` is not available here"
            )));
        }
        match text
            .strip_prefix("${header.")
            .and_then(|t| t.strip_suffix('}'))
        {
            Some(name) => Ok(Arc::new(HeaderExpression(name.into()))),
            None => Ok(Arc::new(Literal(text.into()))),
        }
    }

    fn predicate(&self, _language: &str, text: &str) -> Result<BoxPredicate, CamelError> {
        Err(CamelError::processor(format!(
            "no predicates here: `{text}`"
        )))
    }

    fn producer(&self, uri: &str) -> Result<BoxProcessor, CamelError> {
        Err(CamelError::processor(format!("no producers here: `{uri}`")))
    }

    fn resource(&self, _name: &str) -> Option<Arc<dyn Any + Send + Sync>> {
        None
    }

    fn route_id(&self) -> Option<&str> {
        self.route_id.as_deref()
    }
}

/// Delivers every exchange concurrently (one task each, spawned in order) and returns
/// each caller's result in the same order.
pub async fn deliver_all<C: BatchCodec>(
    producer: &SinkProducer<C>,
    exchanges: Vec<Exchange>,
) -> Vec<Result<(), CamelError>> {
    let calls: Vec<_> = exchanges
        .into_iter()
        .map(|ex| {
            let p = producer.clone();
            tokio::spawn(async move { p.deliver(&ex).await })
        })
        .collect();
    let mut results = Vec::with_capacity(calls.len());
    for call in calls {
        results.push(
            call.await.unwrap_or_else(|e| {
                Err(CamelError::processor(format!("delivery task failed: {e}")))
            }),
        );
    }
    results
}
