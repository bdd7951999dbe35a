//! Recipient list: sends a copy of the exchange to every endpoint an expression names,
//! then combines the replies with an aggregation strategy (Camel's default: the latest
//! reply, in the order the URIs were listed, also when sent in parallel).
//!
//! Every URI is resolved before anything is sent, so a URI naming no endpoint fails the
//! exchange (or, with `ignore_invalid_endpoints`, is skipped) without a partial send.
//! A failing recipient fails the exchange after the others got their copy; with
//! `stop_on_exception` the remaining recipients are not sent to. `timeout` bounds all
//! recipients together: those not done in time are cancelled and left out of the
//! aggregation (Camel's behaviour; we apply it to sequential lists too).
//!
//! ```
//! use std::sync::Arc;
//! use camel_api::{Body, BoxProcessor, CamelError, Endpoint, Exchange};
//! use camel_eip::dynamic::{CacheSize, EndpointCache, EndpointResolver};
//! use camel_eip::recipient_list::{RecipientList, RecipientListOptions};
//!
//! #[derive(Debug)]
//! struct Upper(String);
//! impl Endpoint for Upper {
//!     fn uri(&self) -> &str { &self.0 }
//!     fn producer(&self) -> Result<BoxProcessor, CamelError> {
//!         let tag = self.0.clone();
//!         Ok(BoxProcessor::sync(move |mut ex: Exchange| {
//!             ex.message.body = Body::from(tag.clone());
//!             Ok(ex)
//!         }))
//!     }
//! }
//! #[derive(Debug)]
//! struct Resolver;
//! impl EndpointResolver for Resolver {
//!     fn endpoint(&self, uri: &str) -> Result<Arc<dyn Endpoint>, CamelError> {
//!         Ok(Arc::new(Upper(uri.to_string())))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let to = camel_language::simple("${header.to}").unwrap();
//! let cache = Arc::new(EndpointCache::producers(Arc::new(Resolver), CacheSize::default()));
//! let strategy = camel_eip::aggregation::builtin("grouped_body");
//! let list = RecipientList::new(to, cache, strategy, RecipientListOptions::default());
//! let out = list
//!     .into_processor()
//!     .process(Exchange::new("x").with_header("to", "a:1,b:2"))
//!     .await
//!     .unwrap();
//! assert_eq!(out.message.body, Body::from(serde_json::json!(["a:1", "b:2"])));
//! # }
//! ```

use std::sync::Arc;
use std::time::Duration;

use camel_api::{
    BoxExpression, BoxProcessor, CamelError, Exchange, Process, ProcessorFuture, Value,
};
use futures::stream::{FuturesUnordered, StreamExt};
use tokio::time::Instant;

use crate::aggregation::{fold, SharedStrategy};
use crate::dynamic::{
    producer_or_skip, uris, EndpointCache, Memo, DEFAULT_DELIMITER, RECIPIENT_LIST_ENDPOINT,
};
use crate::layer::StepLayer;

/// How a recipient list sends (see the module docs).
#[derive(Clone, Debug)]
pub struct RecipientListOptions {
    /// Between two URIs in a text value (`false`: do not split).
    pub delimiter: String,
    /// Send to all at once.
    pub parallel: bool,
    /// Stop at the first failure.
    pub stop_on_exception: bool,
    /// Skip URIs naming no endpoint.
    pub ignore_invalid_endpoints: bool,
    /// Time for all recipients together.
    pub timeout: Option<Duration>,
}

impl Default for RecipientListOptions {
    fn default() -> Self {
        RecipientListOptions {
            delimiter: DEFAULT_DELIMITER.to_string(),
            parallel: false,
            stop_on_exception: false,
            ignore_invalid_endpoints: false,
            timeout: None,
        }
    }
}

/// The recipient list step.
#[derive(Clone)]
pub struct RecipientList {
    expression: BoxExpression,
    cache: Arc<EndpointCache<BoxProcessor>>,
    strategy: Option<SharedStrategy>,
    options: Arc<RecipientListOptions>,
    /// The recipients of the last text value, resolved.
    memo: Arc<Memo<Targets>>,
}

/// Resolved recipients in list order: the URI (also the copy's property) and its producer.
type Targets = Arc<[(Arc<str>, BoxProcessor)]>;

impl std::fmt::Debug for RecipientList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecipientList")
            .field("expression", &self.expression)
            .field("options", &self.options)
            .field("strategy", &self.strategy.is_some())
            .finish_non_exhaustive()
    }
}

impl RecipientList {
    /// A recipient list over the URIs `expression` gives; `strategy` `None` keeps the
    /// latest reply.
    pub fn new(
        expression: BoxExpression,
        cache: Arc<EndpointCache<BoxProcessor>>,
        strategy: Option<SharedStrategy>,
        options: RecipientListOptions,
    ) -> Self {
        RecipientList {
            expression,
            cache,
            strategy,
            options: Arc::new(options),
            memo: Arc::default(),
        }
    }

    /// The recipient list as a route step.
    pub fn into_processor(self) -> BoxProcessor {
        BoxProcessor::new(self).named("recipient_list")
    }

    /// The recipient list as a tower layer: the inner service gets the aggregated exchange.
    pub fn layer(self) -> StepLayer {
        StepLayer::new(self.into_processor())
    }

    async fn run(self, original: Exchange) -> Result<Exchange, CamelError> {
        let value = self.expression.evaluate(&original)?;
        let targets = self.targets(&value).await?;
        if targets.is_empty() {
            return Ok(original);
        }
        let deadline = self.options.timeout.map(|t| Instant::now() + t);
        let replies = if self.options.parallel {
            self.parallel(&original, targets, deadline).await?
        } else {
            self.sequential(&original, targets, deadline).await?
        };
        let replies = replies.into_iter().flatten();
        let aggregated = match &self.strategy {
            Some(strategy) => fold(&**strategy, replies, Some(&original))?,
            None => replies.last(),
        };
        Ok(match aggregated {
            Some(result) => continue_with(result, &original),
            None => original,
        })
    }

    /// The recipients `value` names, resolved: remembered from the last exchange when its
    /// value was the same text (and the cache still holds what it resolved), else
    /// resolved through the cache and remembered when every URI resolved.
    async fn targets(&self, value: &Value) -> Result<Targets, CamelError> {
        let miss = match self.memo.recall(&self.cache, value) {
            Ok(targets) => return Ok(targets),
            Err(miss) => miss,
        };
        let list = uris(value, &self.options.delimiter);
        let named = list.len();
        let mut targets = Vec::with_capacity(named);
        for uri in list {
            if let Some(p) =
                producer_or_skip(&self.cache, &uri, self.options.ignore_invalid_endpoints).await?
            {
                targets.push((Arc::from(uri), p));
            }
        }
        let targets: Targets = targets.into();
        // A skipped URI is looked up again next time: it may name an endpoint by then.
        if targets.len() == named {
            self.memo.remember(miss, targets.clone());
        }
        Ok(targets)
    }

    /// One slot per recipient, in list order: `None` for one cut off by the timeout.
    async fn sequential(
        &self,
        original: &Exchange,
        targets: Targets,
        deadline: Option<Instant>,
    ) -> Result<Vec<Option<Exchange>>, CamelError> {
        let mut replies = Vec::with_capacity(targets.len());
        let mut failure = None;
        for (uri, producer) in targets.iter() {
            let call = producer.process(copy_for(original, uri));
            let result = match deadline {
                None => call.await,
                Some(d) => match tokio::time::timeout_at(d, call).await {
                    Ok(r) => r,
                    Err(_) => {
                        tracing::debug!(uri = %camel_api::redact_url(uri), "recipient timed out");
                        break;
                    }
                },
            };
            match result {
                Ok(reply) => replies.push(Some(reply)),
                Err(e) if self.options.stop_on_exception => return Err(e),
                Err(e) => {
                    failure.get_or_insert(e);
                    replies.push(None);
                }
            }
        }
        failure.map_or(Ok(replies), Err)
    }

    async fn parallel(
        &self,
        original: &Exchange,
        targets: Targets,
        deadline: Option<Instant>,
    ) -> Result<Vec<Option<Exchange>>, CamelError> {
        let mut replies: Vec<Option<Exchange>> = vec![None; targets.len()];
        let mut failures: Vec<Option<CamelError>> = vec![None; targets.len()];
        let mut calls: FuturesUnordered<_> = targets
            .iter()
            .enumerate()
            .map(|(i, (uri, producer))| {
                let call = producer.process(copy_for(original, uri));
                async move { (i, call.await) }
            })
            .collect();
        loop {
            let next = match deadline {
                None => calls.next().await,
                Some(d) => match tokio::time::timeout_at(d, calls.next()).await {
                    Ok(next) => next,
                    Err(_) => {
                        tracing::debug!(left = calls.len(), "recipients timed out");
                        break;
                    }
                },
            };
            let Some((i, result)) = next else { break };
            match result {
                Ok(reply) => replies[i] = Some(reply),
                Err(e) if self.options.stop_on_exception => return Err(e),
                Err(e) => failures[i] = Some(e),
            }
        }
        match failures.into_iter().flatten().next() {
            Some(e) => Err(e),
            None => Ok(replies),
        }
    }
}

/// The copy a recipient gets: the exchange, with the recipient's URI as a property.
fn copy_for(original: &Exchange, uri: &Arc<str>) -> Exchange {
    let mut copy = original.clone();
    copy.properties
        .insert(RECIPIENT_LIST_ENDPOINT, Value::Text(uri.clone()));
    copy
}

/// The aggregated reply as the exchange the route carries on with: the original's id
/// and pattern, and a `stop` inside one recipient does not stop the route.
pub(crate) fn continue_with(result: Exchange, original: &Exchange) -> Exchange {
    let mut ex = Exchange::continuing(original, result.message);
    ex.properties = result.properties;
    ex.properties.remove(RECIPIENT_LIST_ENDPOINT);
    ex
}

impl Process for RecipientList {
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        ProcessorFuture::boxed(self.clone().run(exchange))
    }
}
