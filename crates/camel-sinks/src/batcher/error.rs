//! The batcher's own failures, turned into [`CamelError`] at the producer boundary.

use std::time::Duration;

use camel_api::{CamelError, RetryReason};

/// Why a delivery through a batcher failed, apart from the destination's own answer.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SinkError {
    /// A bound of the queue was reached; nothing was queued.
    #[error("batch queue of {sink} is full ({reason}); retry after {retry_after_ms} ms")]
    QueueFull {
        /// The sink label.
        sink: String,
        /// Which bound.
        reason: RetryReason,
        /// Suggested wait (full jitter).
        retry_after_ms: u64,
    },
    /// The send task panicked; its entries' fate is unknown.
    #[error("send of a batch to {sink} panicked")]
    SendPanicked {
        /// The sink label.
        sink: String,
    },
    /// One request took longer than the send timeout.
    #[error("send of a batch to {sink} took longer than {timeout:?}")]
    SendTimedOut {
        /// The sink label.
        sink: String,
        /// The send timeout.
        timeout: Duration,
    },
    /// The codec answered with a different number of results than entries.
    #[error("{sink} answered {got} results for {expected} entries")]
    ResultCountMismatch {
        /// The sink label.
        sink: String,
        /// Entries sent.
        expected: usize,
        /// Results received.
        got: usize,
    },
    /// The batcher went away before answering (it was shut down or crashed).
    #[error("the batcher of {sink} stopped before answering")]
    BatcherGone {
        /// The sink label.
        sink: String,
    },
    /// The batcher ended abnormally while the entry waited behind a request of its
    /// group (or behind an older entry of it): it was not sent, so the group's order
    /// holds when the caller retries.
    #[error("the batcher of {sink} ended before sending the entry of group `{group}`; not handed to a replacement, which could overtake the group's earlier messages")]
    GroupInterrupted {
        /// The sink label.
        sink: String,
        /// The entry's group.
        group: String,
    },
    /// An earlier entry of the same group in the same batch failed, so this one fails
    /// too: a success here would put it ahead of the failed entry's retry. `sent` tells
    /// whether it was in the request the destination answered (the destination may hold
    /// it; the retry carries the same deduplication id) or was withheld from the
    /// requests that followed (it was not sent). Only codecs that keep a group's order
    /// strictly ([`BatchCodec::strict_group_order`](crate::BatchCodec::strict_group_order),
    /// an SQS FIFO queue) answer it.
    #[error("{}", earlier_entry_failed(sink, group, *sent))]
    EarlierEntryFailed {
        /// The sink label.
        sink: String,
        /// The entry's group.
        group: String,
        /// Whether the entry was in a request the destination answered.
        sent: bool,
    },
    /// The entry is larger than one request may carry.
    #[error("entry of {size} bytes exceeds the {limit}-byte limit of {sink}")]
    EntryTooLarge {
        /// The sink label.
        sink: String,
        /// The entry's size.
        size: usize,
        /// The limit.
        limit: usize,
    },
}

fn earlier_entry_failed(sink: &str, group: &str, sent: bool) -> String {
    if sent {
        format!("failed because an earlier entry of group `{group}` in the same request to {sink} failed: order first, so it is retried after that entry (the destination may have accepted it; the retry carries the same deduplication id)")
    } else {
        format!("not sent to {sink}: an earlier entry of group `{group}` in the same batch failed, and sending this one would overtake it")
    }
}

impl From<SinkError> for CamelError {
    fn from(e: SinkError) -> Self {
        match e {
            SinkError::QueueFull {
                reason,
                retry_after_ms,
                ..
            } => CamelError::RetryAfter {
                ms: retry_after_ms,
                reason,
            },
            SinkError::SendTimedOut { .. } => CamelError::Timeout(e.to_string().into()),
            SinkError::BatcherGone { .. } | SinkError::GroupInterrupted { .. } => {
                CamelError::Stopping(e.to_string().into())
            }
            other => CamelError::external("batching sink", other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_full_becomes_retry_after() {
        let e: CamelError = SinkError::QueueFull {
            sink: "s".into(),
            reason: RetryReason::Tenant,
            retry_after_ms: 12,
        }
        .into();
        assert!(matches!(
            e,
            CamelError::RetryAfter {
                ms: 12,
                reason: RetryReason::Tenant
            }
        ));
    }
}
