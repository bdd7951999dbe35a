//! The batcher's metrics and events, with handles resolved once per batcher.
//!
//! Metric names follow `camel_sink_batch_*`; the only labels are the sink label (codec,
//! safe destination name, short identity digest), the registry's `instance` and the
//! refusal reason — never a credential.

use std::sync::Arc;
use std::time::Duration;

use metrics::{Gauge, Histogram};

/// Cached metric handles of one batcher.
#[derive(Debug)]
pub(crate) struct Telemetry {
    sink: Arc<str>,
    instance: Arc<str>,
    entries: Histogram,
    bytes: Histogram,
    requests: Histogram,
    bisections: Histogram,
    duration: Histogram,
    queued: Gauge,
    queued_bytes: Gauge,
    requests_in_flight: Gauge,
}

/// Measurements of one flushed batch.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Flush {
    pub(crate) entries: usize,
    pub(crate) bytes: usize,
    pub(crate) requests: u64,
    pub(crate) bisections: u64,
    pub(crate) failed: usize,
    pub(crate) duration: Duration,
}

impl Telemetry {
    pub(crate) fn new(sink: Arc<str>, instance: Arc<str>) -> Self {
        metrics::gauge!("camel_sink_batchers").increment(1.0);
        tracing::debug!(sink = %sink, instance = %instance, "batcher started");
        let labels = [
            ("sink", sink.to_string()),
            ("instance", instance.to_string()),
        ];
        Telemetry {
            entries: metrics::histogram!("camel_sink_batch_flush_entries", &labels),
            bytes: metrics::histogram!("camel_sink_batch_flush_bytes", &labels),
            requests: metrics::histogram!("camel_sink_batch_flush_requests", &labels),
            bisections: metrics::histogram!("camel_sink_batch_flush_bisections", &labels),
            duration: metrics::histogram!("camel_sink_batch_flush_duration_seconds", &labels),
            queued: metrics::gauge!("camel_sink_batch_queued_entries", &labels),
            queued_bytes: metrics::gauge!("camel_sink_batch_queued_bytes", &labels),
            requests_in_flight: metrics::gauge!("camel_sink_batch_requests_in_flight", &labels),
            sink,
            instance,
        }
    }

    pub(crate) fn flush(&self, f: Flush) {
        self.entries.record(f.entries as f64);
        self.bytes.record(f.bytes as f64);
        self.requests.record(f.requests as f64);
        self.bisections.record(f.bisections as f64);
        self.duration.record(f.duration.as_secs_f64());
        tracing::debug!(
            sink = %self.sink,
            instance = %self.instance,
            entries = f.entries,
            bytes = f.bytes,
            requests = f.requests,
            bisections = f.bisections,
            failed = f.failed,
            duration_ms = f.duration.as_millis() as u64,
            "batch flushed"
        );
    }

    pub(crate) fn state(&self, queued: usize, queued_bytes: usize, requests_in_flight: usize) {
        self.queued.set(queued as f64);
        self.queued_bytes.set(queued_bytes as f64);
        self.requests_in_flight.set(requests_in_flight as f64);
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        metrics::gauge!("camel_sink_batchers").decrement(1.0);
        self.state(0, 0, 0);
        tracing::debug!(sink = %self.sink, instance = %self.instance, "batcher stopped");
    }
}
