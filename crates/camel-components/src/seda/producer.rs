//! The seda producer: queue the exchange, then wait for its result if asked to.

use std::sync::Arc;
use std::time::Duration;

use camel_api::{CamelError, Exchange, ExchangePattern, Process, ProcessorFuture, RetryReason};
use tokio::sync::oneshot;

use super::queue::{Entry, SedaQueue};
use super::{SedaEndpoint, WaitForResult};

/// How long a refused producer is told to wait before trying again.
const RETRY_HINT_MS: u64 = 10;

pub(super) struct SedaProducer {
    uri: Arc<str>,
    queue: Arc<SedaQueue>,
    block_when_full: bool,
    offer_timeout: Option<Duration>,
    wait: WaitForResult,
    timeout: Option<Duration>,
}

impl SedaProducer {
    pub(super) fn new(endpoint: &SedaEndpoint) -> Self {
        SedaProducer {
            uri: endpoint.uri.clone(),
            queue: endpoint.queue.clone(),
            block_when_full: endpoint.block_when_full,
            offer_timeout: endpoint.offer_timeout,
            wait: endpoint.wait,
            timeout: endpoint.timeout,
        }
    }

    fn waits_for_result(&self, exchange: &Exchange) -> bool {
        match self.wait {
            WaitForResult::Always => true,
            WaitForResult::Never => false,
            WaitForResult::IfReplyExpected => exchange.pattern == ExchangePattern::InOut,
        }
    }

    fn full(&self) -> CamelError {
        tracing::debug!(uri = %self.uri, "seda queue full, exchange refused");
        CamelError::RetryAfter {
            ms: RETRY_HINT_MS,
            reason: RetryReason::Entries,
        }
    }
}

impl Process for SedaProducer {
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        let (reply, answer) = if self.waits_for_result(&exchange) {
            let (tx, rx) = oneshot::channel();
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        // The caller gets its exchange back; the queued copy shares the payload.
        let entry = Entry {
            exchange: exchange.clone(),
            reply,
        };
        let entry = match self.queue.try_push(entry) {
            Ok(()) => None,
            Err(_) if !self.block_when_full => return ProcessorFuture::ready(Err(self.full())),
            Err(entry) => Some(entry),
        };
        if entry.is_none() && answer.is_none() {
            return ProcessorFuture::ready(Ok(exchange));
        }
        let queue = self.queue.clone();
        let uri = self.uri.clone();
        let offer_timeout = self.offer_timeout;
        let timeout = self.timeout;
        ProcessorFuture::boxed(async move {
            if let Some(entry) = entry {
                if queue.push(entry, offer_timeout).await.is_err() {
                    return Err(CamelError::Timeout(
                        format!("`{uri}` stayed full for the whole offer timeout").into(),
                    ));
                }
            }
            let Some(answer) = answer else {
                return Ok(exchange);
            };
            let result = match timeout {
                Some(limit) => tokio::time::timeout(limit, answer).await.map_err(|_| {
                    CamelError::Timeout(format!("no result from `{uri}` in time").into())
                })?,
                None => answer.await,
            };
            result.unwrap_or_else(|_| {
                Err(CamelError::Stopping(
                    format!("`{uri}` dropped the exchange without a result").into(),
                ))
            })
        })
    }
}
