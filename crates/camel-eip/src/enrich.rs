//! Content enricher: `enrich` sends a copy of the exchange (InOut) to an endpoint and
//! merges the reply in; `poll_enrich` takes one message from a pollable endpoint
//! (`seda:` here; other components cannot be polled yet) and merges it in.
//!
//! The endpoint's URI comes from an expression (`constant:` for a fixed one). Merging:
//! without an aggregation strategy the reply's message (body and headers) replaces the
//! exchange's message, keeping its id, pattern and properties (Camel's default); with
//! one, the strategy gets the exchange first and the reply second. When the endpoint
//! fails the exchange fails, unless `aggregate_on_exception` is set and a strategy is
//! given: the strategy then gets a copy of the exchange carrying the error
//! (`${exception.message}`). `poll_enrich` with nothing to take within `timeout` leaves
//! the exchange as it was.
//!
//! ```
//! use std::sync::Arc;
//! use camel_api::{Body, BoxProcessor, CamelError, Endpoint, Exchange};
//! use camel_eip::dynamic::{CacheSize, EndpointCache, EndpointResolver};
//! use camel_eip::enrich::Enricher;
//!
//! #[derive(Debug)]
//! struct Prices;
//! impl Endpoint for Prices {
//!     fn uri(&self) -> &str { "prices:eu" }
//!     fn producer(&self) -> Result<BoxProcessor, CamelError> {
//!         Ok(BoxProcessor::sync(|mut ex: Exchange| {
//!             ex.message.body = Body::from("42");
//!             Ok(ex)
//!         }))
//!     }
//! }
//! #[derive(Debug)]
//! struct Resolver;
//! impl EndpointResolver for Resolver {
//!     fn endpoint(&self, _uri: &str) -> Result<Arc<dyn Endpoint>, CamelError> {
//!         Ok(Arc::new(Prices))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let cache = Arc::new(EndpointCache::producers(Arc::new(Resolver), CacheSize::default()));
//! let enrich = Enricher::enrich(camel_language::constant("prices:eu"), cache, None);
//! let out = enrich.into_processor().process(Exchange::new("item")).await.unwrap();
//! assert_eq!(out.message.body, Body::from("42"));
//! # }
//! ```

use std::sync::Arc;
use std::time::Duration;

use camel_api::{
    BoxExpression, BoxProcessor, CamelError, Exchange, ExchangePattern, Poller, Process,
    ProcessorFuture,
};

use crate::aggregation::SharedStrategy;
use crate::dynamic::{skippable, EndpointCache};
use crate::layer::StepLayer;

/// Where the resource comes from.
#[derive(Clone, Debug)]
enum Source {
    /// `enrich`: a request-reply call.
    Call(Arc<EndpointCache<BoxProcessor>>),
    /// `poll_enrich`: one message taken, waiting at most this long (`None`: forever).
    Poll(Arc<EndpointCache<Arc<dyn Poller>>>, Option<Duration>),
}

/// `enrich` or `poll_enrich`.
#[derive(Clone)]
pub struct Enricher {
    uri: BoxExpression,
    source: Source,
    strategy: Option<SharedStrategy>,
    aggregate_on_exception: bool,
    ignore_invalid_endpoint: bool,
}

impl std::fmt::Debug for Enricher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Enricher")
            .field("uri", &self.uri)
            .field("source", &self.source)
            .field("strategy", &self.strategy.is_some())
            .finish_non_exhaustive()
    }
}

impl Enricher {
    /// `enrich`: calls the endpoint `uri` names.
    pub fn enrich(
        uri: BoxExpression,
        cache: Arc<EndpointCache<BoxProcessor>>,
        strategy: Option<SharedStrategy>,
    ) -> Self {
        Enricher {
            uri,
            source: Source::Call(cache),
            strategy,
            aggregate_on_exception: false,
            ignore_invalid_endpoint: false,
        }
    }

    /// `poll_enrich`: takes one message from the endpoint `uri` names, waiting at most
    /// `wait` (`None`: as long as it takes).
    pub fn poll_enrich(
        uri: BoxExpression,
        cache: Arc<EndpointCache<Arc<dyn Poller>>>,
        wait: Option<Duration>,
        strategy: Option<SharedStrategy>,
    ) -> Self {
        Enricher {
            uri,
            source: Source::Poll(cache, wait),
            strategy,
            aggregate_on_exception: false,
            ignore_invalid_endpoint: false,
        }
    }

    /// Calls the strategy also when the endpoint failed.
    pub fn aggregate_on_exception(mut self, yes: bool) -> Self {
        self.aggregate_on_exception = yes;
        self
    }

    /// Leaves the exchange unchanged when the URI names no endpoint.
    pub fn ignore_invalid_endpoint(mut self, yes: bool) -> Self {
        self.ignore_invalid_endpoint = yes;
        self
    }

    /// The step as a route processor.
    pub fn into_processor(self) -> BoxProcessor {
        let name = match self.source {
            Source::Call(_) => "enrich",
            Source::Poll(..) => "poll_enrich",
        };
        BoxProcessor::new(self).named(name)
    }

    /// The step as a tower layer: the inner service gets the enriched exchange.
    pub fn layer(self) -> StepLayer {
        StepLayer::new(self.into_processor())
    }

    /// The resource: `Ok(None)` when there is none (an ignored invalid endpoint, or a
    /// poll that timed out).
    async fn resource(&self, ex: &Exchange) -> Result<Option<Exchange>, CamelError> {
        let uri = self.uri.evaluate(ex)?.to_string();
        let uri = uri.trim();
        let skip = |e: CamelError| {
            if self.ignore_invalid_endpoint && skippable(&e) {
                tracing::debug!(uri = %camel_api::redact_url(uri), error = %e, "invalid endpoint skipped");
                Ok(None)
            } else {
                Err(e)
            }
        };
        match &self.source {
            Source::Call(cache) => {
                let producer = match cache.get(uri).await {
                    Ok(p) => p,
                    Err(e) => return skip(e),
                };
                let mut request = ex.clone();
                request.pattern = ExchangePattern::InOut;
                producer.process(request).await.map(Some)
            }
            Source::Poll(cache, wait) => {
                let poller = match cache.get(uri).await {
                    Ok(p) => p,
                    Err(e) => return skip(e),
                };
                poller.poll(*wait).await
            }
        }
    }

    async fn run(self, original: Exchange) -> Result<Exchange, CamelError> {
        let reply = match self.resource(&original).await {
            Ok(None) => return Ok(original),
            Ok(Some(reply)) => reply,
            Err(e) => match (&self.strategy, self.aggregate_on_exception) {
                (Some(_), true) => {
                    let mut failed = original.clone();
                    failed.set_caught_error(Some(Arc::new(e)));
                    failed
                }
                _ => return Err(e),
            },
        };
        let (id, pattern) = (original.id, original.pattern);
        let mut merged = match &self.strategy {
            None => {
                let mut merged = original;
                merged.message = reply.message;
                merged
            }
            Some(strategy) => {
                let aggregated = strategy.aggregate(Some(original), reply)?;
                strategy.on_completion(aggregated, None)
            }
        };
        merged.id = id;
        merged.pattern = pattern;
        Ok(merged)
    }
}

impl Process for Enricher {
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        ProcessorFuture::boxed(self.clone().run(exchange))
    }
}
