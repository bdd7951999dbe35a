//! The outbox's metrics, named as the issue gives them, labelled by outbox (and partition
//! where a figure belongs to one worker). Handles are made once per worker, not per message.

use metrics::{counter, gauge, Counter, Gauge};

/// Published messages.
pub(crate) fn published(outbox: &str) -> Counter {
    counter!("camel_outbox_published_total", "outbox" => outbox.to_string())
}

/// Messages published without a group because their `group_key` evaluated to null or
/// empty (they are relayed unordered).
pub(crate) fn ungrouped(outbox: &str) -> Counter {
    counter!("camel_outbox_ungrouped_total", "outbox" => outbox.to_string())
}

/// Counters of one partition worker.
#[derive(Clone, Debug)]
pub(crate) struct WorkerMetrics {
    pub(crate) relayed: Counter,
    pub(crate) failures: Counter,
    /// Deliveries refused with `RetryAfter` (back-pressure; not attempts).
    pub(crate) refusals: Counter,
    pub(crate) dead: Counter,
    /// How long committed rows have waited behind the visibility horizon (0 when none).
    pub(crate) horizon_wait: Gauge,
}

impl WorkerMetrics {
    pub(crate) fn new(outbox: &str, partition: u32) -> Self {
        let labels = [
            ("outbox", outbox.to_string()),
            ("partition", partition.to_string()),
        ];
        WorkerMetrics {
            relayed: counter!("camel_outbox_relayed_total", &labels),
            failures: counter!("camel_outbox_failures_total", &labels),
            refusals: counter!("camel_outbox_refusals_total", &labels),
            dead: counter!("camel_outbox_dead_total", &labels),
            horizon_wait: gauge!("camel_outbox_horizon_wait_seconds", &labels),
        }
    }
}

/// The backlog gauges of an outbox, refreshed from `counts`.
pub(crate) fn backlog(outbox: &str) -> (Gauge, Gauge) {
    (
        gauge!("camel_outbox_pending", "outbox" => outbox.to_string()),
        gauge!("camel_outbox_oldest_pending_age_seconds", "outbox" => outbox.to_string()),
    )
}
