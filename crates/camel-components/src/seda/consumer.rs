//! The seda consumer: `concurrent_consumers` tasks, each taking one exchange at a time
//! from the queue and running the route with it.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use std::time::Duration;

use camel_api::{CamelError, Consumer, ConsumerContext, Exchange, Poller};
use tokio::task::JoinSet;

use super::queue::SedaQueue;

pub(super) struct SedaConsumer {
    uri: Arc<str>,
    queue: Arc<SedaQueue>,
    tasks: usize,
}

impl SedaConsumer {
    pub(super) fn new(uri: Arc<str>, queue: Arc<SedaQueue>, tasks: usize) -> Self {
        SedaConsumer { uri, queue, tasks }
    }
}

impl fmt::Debug for SedaConsumer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SedaConsumer")
            .field("uri", &self.uri)
            .field("tasks", &self.tasks)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Consumer for SedaConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        // The set owns the workers: dropping `run` (an aborted route) aborts them too.
        let mut workers = JoinSet::new();
        for _ in 0..self.tasks {
            workers.spawn(work(self.uri.clone(), self.queue.clone(), ctx.clone()));
        }
        while workers.join_next().await.is_some() {}
        Ok(())
    }
}

/// Takes and runs exchanges until cancelled. An exchange taken is always finished: the
/// cancellation is only looked at between exchanges.
async fn work(uri: Arc<str>, queue: Arc<SedaQueue>, ctx: ConsumerContext) {
    loop {
        let entry = tokio::select! {
            biased;
            () = ctx.cancelled() => return,
            entry = queue.pop() => entry,
        };
        let id = entry.exchange.id;
        match ctx.send(entry.exchange.clone()).await {
            Err(CamelError::Stopping(_)) => {
                // The route closed between the take and the send: the exchange goes back
                // to the head of the queue for the next consumer.
                queue.push_front(entry);
                return;
            }
            result => {
                if let Err(error) = &result {
                    tracing::warn!(uri = %uri, exchange_id = %id, %error, "seda exchange failed");
                }
                if let Some(reply) = entry.reply {
                    // The producer may have given up waiting; nothing to do then.
                    let _ = reply.send(result);
                }
            }
        }
    }
}

/// Takes one exchange from the queue on demand (`poll_enrich`).
#[derive(Debug)]
pub(super) struct SedaPoller {
    uri: Arc<str>,
    queue: Arc<SedaQueue>,
}

impl SedaPoller {
    pub(super) fn new(uri: Arc<str>, queue: Arc<SedaQueue>) -> Self {
        SedaPoller { uri, queue }
    }
}

#[async_trait]
impl Poller for SedaPoller {
    async fn poll(&self, timeout: Option<Duration>) -> Result<Option<Exchange>, CamelError> {
        // `pop` is cancel-safe: a timeout never loses an entry.
        let entry = match timeout {
            None => self.queue.pop().await,
            Some(limit) => match tokio::time::timeout(limit, self.queue.pop()).await {
                Ok(entry) => entry,
                Err(_) => return Ok(None),
            },
        };
        tracing::trace!(uri = %self.uri, exchange_id = %entry.exchange.id, "seda exchange polled");
        if let Some(reply) = entry.reply {
            // A producer waiting for a result gets its exchange back: polling consumed it.
            let _ = reply.send(Ok(entry.exchange.clone()));
        }
        Ok(Some(entry.exchange))
    }
}
