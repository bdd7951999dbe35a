//! The tap's task: takes copies from the queue and sends them, `concurrency` at a time.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use async_trait::async_trait;
use camel_api::{BoxExpression, BoxProcessor, CamelError, Exchange, ShutdownReason, StepLifecycle};
use futures::stream::{FuturesUnordered, StreamExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::service::{Shared, TapCounters};
use crate::dynamic::{producer_or_skip, EndpointCache, Memo};

/// What sending one copy needs. Holds no sender of the queue, so the task also ends when
/// every clone of the step is dropped.
#[derive(Debug)]
pub(super) struct Delivery {
    pub(super) uri: BoxExpression,
    pub(super) cache: Arc<EndpointCache<BoxProcessor>>,
    pub(super) on_prepare: Option<BoxProcessor>,
    pub(super) ignore_invalid: bool,
    pub(super) counters: Arc<TapCounters>,
    pub(super) route_id: String,
    /// The producer of the last URI text (a tap's URI is most often a constant).
    pub(super) memo: Memo<BoxProcessor>,
}

impl Delivery {
    /// The producer for the tap's URI: remembered when the URI is the text of the last
    /// copy's and the cache still holds it, else from the cache.
    async fn producer(&self, tap: &Exchange) -> Result<Option<BoxProcessor>, CamelError> {
        let uri = self.uri.evaluate(tap)?;
        let miss = match self.memo.recall(&self.cache, &uri) {
            Ok(producer) => return Ok(Some(producer)),
            Err(miss) => miss,
        };
        let producer = producer_or_skip(&self.cache, &uri.to_string(), self.ignore_invalid).await?;
        if let Some(p) = &producer {
            self.memo.remember(miss, p.clone());
        }
        Ok(producer)
    }

    async fn send(self: Arc<Self>, mut tap: Exchange) {
        let id = tap.id;
        let result = async {
            if let Some(prepare) = &self.on_prepare {
                tap = prepare.process(tap).await?;
            }
            match self.producer(&tap).await? {
                Some(producer) => producer.process(tap).await.map(|_| true),
                None => Ok(false),
            }
        }
        .await;
        match result {
            Ok(true) => self.counters.count_delivered(),
            Ok(false) => self.counters.count_drop(),
            Err(error) => {
                self.counters.count_failure();
                tracing::warn!(route_id = %self.route_id, exchange_id = %id, %error, "wire tap failed");
            }
        }
    }
}

#[derive(Debug)]
pub(super) struct Worker {
    pub(super) receiver: mpsc::Receiver<Exchange>,
    pub(super) delivery: Arc<Delivery>,
    pub(super) concurrency: usize,
    pub(super) stop: CancellationToken,
}

impl Worker {
    pub(super) async fn run(mut self) {
        let mut sending = FuturesUnordered::new();
        loop {
            tokio::select! {
                biased;
                Some(()) = sending.next(), if !sending.is_empty() => {}
                () = self.stop.cancelled() => break,
                tap = self.receiver.recv(), if sending.len() < self.concurrency => match tap {
                    Some(tap) => sending.push(self.delivery.clone().send(tap)),
                    None => break,
                },
            }
        }
        // Stopping: what was queued is still sent; nothing new is accepted.
        self.receiver.close();
        while let Some(tap) = self.receiver.recv().await {
            while sending.len() >= self.concurrency {
                sending.next().await;
            }
            sending.push(self.delivery.clone().send(tap));
        }
        while sending.next().await.is_some() {}
    }
}

/// The tap's [`StepLifecycle`]: shutdown stops intake, drains the queue and waits.
#[derive(Debug)]
pub(super) struct TapLifecycle {
    pub(super) shared: Arc<Shared>,
}

#[async_trait]
impl StepLifecycle for TapLifecycle {
    fn name(&self) -> &str {
        &self.shared.name
    }

    async fn start(&self) -> Result<(), CamelError> {
        Ok(())
    }

    async fn shutdown(&self, _reason: ShutdownReason) -> Result<(), CamelError> {
        self.shared.closed.store(true, Ordering::Release);
        // A task never spawned has nothing queued worth sending after a stop.
        self.shared
            .worker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        self.shared.stop.cancel();
        let running = self
            .shared
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(handle) = running {
            handle
                .await
                .map_err(|e| CamelError::processor(format!("wire tap task failed: {e}")))?;
        }
        Ok(())
    }
}
