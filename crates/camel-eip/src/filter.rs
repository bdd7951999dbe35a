//! Filter: runs its steps only for exchanges that match a predicate.
//!
//! A non-matching exchange continues the route unchanged (Camel's behaviour), with the
//! property `CamelFilterMatched = false`; use `stop` inside the filter to end the route.
//!
//! As a tower layer, [`FilterLayer`] wraps any inner service, which then sees only the
//! matching exchanges; the others come back unchanged without calling it.

use std::task::{Context, Poll};

use camel_api::{
    names, BoxPredicate, BoxProcessor, CamelError, Exchange, Process, ProcessorFuture,
};
use tower::{Layer, Service};

use crate::layer::EipFuture;

/// The filter service: `inner` runs for the exchanges `predicate` matches.
#[derive(Debug, Clone)]
pub struct Filter<S = BoxProcessor> {
    predicate: BoxPredicate,
    inner: S,
}

/// Builds a filter running `steps` when `predicate` holds.
pub fn filter(predicate: BoxPredicate, steps: BoxProcessor) -> BoxProcessor {
    BoxProcessor::new(Filter::new(predicate, steps)).named("filter")
}

impl<S> Filter<S> {
    /// A filter in front of `inner`.
    pub fn new(predicate: BoxPredicate, inner: S) -> Self {
        Filter { predicate, inner }
    }

    /// Evaluates the predicate and records the outcome on the exchange.
    fn matches(&self, ex: &mut Exchange) -> Result<bool, CamelError> {
        let matched = self.predicate.matches(ex)?;
        ex.properties.insert(names::FILTER_MATCHED, matched);
        Ok(matched)
    }
}

impl Process for Filter<BoxProcessor> {
    fn process(&self, mut ex: Exchange) -> ProcessorFuture {
        match self.matches(&mut ex) {
            Err(e) => ProcessorFuture::ready(Err(e)),
            Ok(true) => self.inner.process(ex),
            Ok(false) => ProcessorFuture::ready(Ok(ex)),
        }
    }
}

impl<S> Service<Exchange> for Filter<S>
where
    S: Service<Exchange, Response = Exchange, Error = CamelError>,
{
    type Response = Exchange;
    type Error = CamelError;
    type Future = EipFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), CamelError>> {
        // Readiness is reserved even for an exchange that will not match, as tower's own
        // `Filter` does: the decision needs the exchange, which `poll_ready` does not see.
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut ex: Exchange) -> Self::Future {
        match self.matches(&mut ex) {
            Err(e) => EipFuture::ready(Err(e)),
            Ok(true) => EipFuture::inner(self.inner.call(ex)),
            Ok(false) => EipFuture::ready(Ok(ex)),
        }
    }
}

/// Wraps a service in a [`Filter`].
#[derive(Debug, Clone)]
pub struct FilterLayer {
    predicate: BoxPredicate,
}

impl FilterLayer {
    /// A filter layer passing the exchanges `predicate` matches to the inner service.
    pub fn new(predicate: BoxPredicate) -> Self {
        FilterLayer { predicate }
    }
}

impl<S> Layer<S> for FilterLayer {
    type Service = Filter<S>;

    fn layer(&self, inner: S) -> Filter<S> {
        Filter::new(self.predicate.clone(), inner)
    }
}
