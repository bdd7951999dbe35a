//! The batching sinks of `camel run` through the admin API, for the console's sinks page:
//! per destination, what waits in its queue, the requests in flight, and the deliveries
//! refused at once (back-pressure).
//!
//! Live figures come from the process-wide batcher registry the sink components share
//! (`camel_sinks::BatcherRegistry::global`); a batcher stops when idle and leaves it, so
//! the refusal totals are read from the metrics (`camel_sink_batch_refused_total`, by
//! reason), which outlive it until `--sink-metrics-expiry`.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::Admin;

/// One destination as the page shows it.
#[derive(Debug, Default)]
struct Destination {
    live: bool,
    queued: u64,
    queued_bytes: u64,
    requests_in_flight: u64,
    refused: BTreeMap<String, u64>,
}

/// `GET /sinks`: `[{"sink","live","queued","queued_bytes","requests_in_flight",
/// "refused","refused_by_reason":{…}}]`, by sink label.
pub(super) async fn list(State(admin): State<Admin>) -> Response {
    let mut all: BTreeMap<String, Destination> = BTreeMap::new();
    for stats in camel_sinks::BatcherRegistry::global().stats() {
        let d = all.entry(stats.sink).or_default();
        d.live = true;
        d.queued += stats.queued as u64;
        d.queued_bytes += stats.queued_bytes as u64;
        d.requests_in_flight += stats.requests_in_flight as u64;
    }
    let scrape = crate::inspect::Scrape::parse(&admin.metrics.render());
    for (labels, value) in scrape.samples_of("camel_sink_batch_refused_total") {
        let (Some(sink), Some(reason)) = (labels.get("sink"), labels.get("reason")) else {
            continue;
        };
        let d = all.entry(sink.clone()).or_default();
        *d.refused.entry(reason.clone()).or_default() += value as u64;
    }
    let rows: Vec<Value> = all
        .into_iter()
        .map(|(sink, d)| {
            json!({
                "sink": sink,
                "live": d.live,
                "queued": d.queued,
                "queued_bytes": d.queued_bytes,
                "requests_in_flight": d.requests_in_flight,
                "refused": d.refused.values().sum::<u64>(),
                "refused_by_reason": d.refused,
            })
        })
        .collect();
    Json(Value::Array(rows)).into_response()
}
