//! The multicast processor.

use std::sync::Arc;

use camel_api::names::CORRELATION_ID;
use camel_api::{BoxProcessor, CamelError, Exchange, ExchangeId, Process, ProcessorFuture, Value};
use futures::future::join_all;

use super::aggregate::aggregate;
use super::config::MulticastConfig;

/// Sends each exchange to every branch and aggregates the results.
///
/// Each branch gets a copy of the exchange; with [`Multicast::with_branch_ids`], a copy
/// with its own id and the property `CamelCorrelationId` naming the incoming exchange,
/// as in Camel.
///
/// Sequential: branches run in declaration order and the first failure ends the multicast
/// with that error. Parallel: all branches run concurrently on the calling task (no task
/// is spawned, so there is nothing to leak or drain) and, if any failed, the error of the
/// first failing branch in declaration order is returned.
#[derive(Clone, Debug)]
pub struct Multicast {
    branches: Arc<[BoxProcessor]>,
    config: MulticastConfig,
    /// `CamelCorrelationId`, allocated once, when branches get their own ids.
    correlation: Option<Arc<str>>,
}

impl Multicast {
    /// A multicast over `branches`.
    pub fn new(branches: Vec<BoxProcessor>, config: MulticastConfig) -> Self {
        Multicast {
            branches: branches.into(),
            config,
            correlation: None,
        }
    }

    /// Each branch gets its own exchange id and `CamelCorrelationId` (the incoming
    /// exchange's id): how a branch's error channel names the multicast it belongs to
    /// (ADR 0092). Off by default: it costs an id and a property per branch.
    pub fn with_branch_ids(mut self) -> Self {
        self.correlation = Some(CORRELATION_ID.into());
        self
    }

    /// The multicast as a route step.
    pub fn into_processor(self) -> BoxProcessor {
        BoxProcessor::new(self).named("multicast")
    }

    pub(super) async fn run(self, exchange: Exchange) -> Result<Exchange, CamelError> {
        let parent = self
            .correlation
            .as_ref()
            .map(|name| (name, Value::from(exchange.id.to_string())));
        let copy = || {
            let mut branch = exchange.clone();
            if let Some((name, parent)) = &parent {
                branch.id = ExchangeId::next();
                branch.properties.set(name, parent.clone());
            }
            branch
        };
        let results = if self.config.parallel {
            let calls = self.branches.iter().map(|b| b.process(copy()));
            join_all(calls)
                .await
                .into_iter()
                .collect::<Result<Vec<_>, _>>()?
        } else {
            let mut results = Vec::with_capacity(self.branches.len());
            for branch in self.branches.iter() {
                results.push(branch.process(copy()).await?);
            }
            results
        };
        Ok(aggregate(self.config.strategy, exchange, results))
    }
}

impl Process for Multicast {
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        ProcessorFuture::boxed(self.clone().run(exchange))
    }
}
