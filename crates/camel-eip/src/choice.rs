//! Choice (content-based router): the first `when` whose predicate holds runs its steps;
//! otherwise the `otherwise` steps run, if any.
//!
//! As a tower layer, [`ChoiceLayer`] holds the `when` branches and the inner service it
//! wraps is the `otherwise` branch: an exchange no `when` takes goes on to it.

use std::sync::Arc;
use std::task::{Context, Poll};

use camel_api::{BoxPredicate, BoxProcessor, CamelError, Exchange, Process, ProcessorFuture};
use tower::{Layer, Service};

use crate::layer::EipFuture;

type Whens = Arc<[(BoxPredicate, BoxProcessor)]>;

/// The choice service: `whens` in order, then `otherwise`.
#[derive(Debug, Clone)]
pub struct Choice<S = BoxProcessor> {
    whens: Whens,
    otherwise: S,
}

/// Builds a choice from `(predicate, steps)` branches and an optional fallback.
pub fn choice(
    whens: Vec<(BoxPredicate, BoxProcessor)>,
    otherwise: Option<BoxProcessor>,
) -> BoxProcessor {
    let otherwise = otherwise.unwrap_or_else(BoxProcessor::identity);
    BoxProcessor::new(Choice {
        whens: whens.into(),
        otherwise,
    })
    .named("choice")
}

/// Which branch an exchange takes.
enum Branch<'a> {
    When(&'a BoxProcessor),
    Otherwise,
}

impl<S> Choice<S> {
    fn branch(&self, ex: &Exchange) -> Result<Branch<'_>, CamelError> {
        for (predicate, steps) in self.whens.iter() {
            if predicate.matches(ex)? {
                return Ok(Branch::When(steps));
            }
        }
        Ok(Branch::Otherwise)
    }
}

impl Process for Choice<BoxProcessor> {
    fn process(&self, ex: Exchange) -> ProcessorFuture {
        match self.branch(&ex) {
            Ok(Branch::When(steps)) => steps.process(ex),
            Ok(Branch::Otherwise) => self.otherwise.process(ex),
            Err(e) => ProcessorFuture::ready(Err(e)),
        }
    }
}

impl<S> Service<Exchange> for Choice<S>
where
    S: Service<Exchange, Response = Exchange, Error = CamelError>,
{
    type Response = Exchange;
    type Error = CamelError;
    type Future = EipFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), CamelError>> {
        // The `when` branches are processors, always ready; only `otherwise` can hold back.
        self.otherwise.poll_ready(cx)
    }

    fn call(&mut self, ex: Exchange) -> Self::Future {
        match self.branch(&ex) {
            Ok(Branch::When(steps)) => EipFuture::step(steps.process(ex)),
            Ok(Branch::Otherwise) => EipFuture::inner(self.otherwise.call(ex)),
            Err(e) => EipFuture::ready(Err(e)),
        }
    }
}

/// Wraps a service (the `otherwise` branch) in a [`Choice`].
#[derive(Debug, Clone, Default)]
pub struct ChoiceLayer {
    whens: Vec<(BoxPredicate, BoxProcessor)>,
}

impl ChoiceLayer {
    /// A choice with no `when` yet (every exchange goes to the inner service).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a branch taken when `predicate` holds (the first matching branch wins).
    pub fn when(mut self, predicate: BoxPredicate, steps: BoxProcessor) -> Self {
        self.whens.push((predicate, steps));
        self
    }
}

impl<S> Layer<S> for ChoiceLayer {
    type Service = Choice<S>;

    fn layer(&self, otherwise: S) -> Choice<S> {
        Choice {
            whens: self.whens.clone().into(),
            otherwise,
        }
    }
}
