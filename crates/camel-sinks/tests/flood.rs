//! A flood of 1,000,000 deliveries at a destination that never answers: the batcher
//! holds at most its bounds, refuses the excess at once with `RetryAfter`, and the
//! process's memory stays bounded (peak RSS printed from /proc/self/status).
//!
//! Its own test binary, so the peak RSS is this test's alone.

use std::sync::Arc;
use std::task::Poll;

use camel_api::{CamelError, Exchange, Process};
use camel_sinks::memory::MemoryCodec;
use camel_sinks::testing::HeaderExpression;
use camel_sinks::{BatchConfig, BatcherRegistry, SinkOptions, SinkProducer};

const DELIVERIES: usize = 1_000_000;

/// A line of /proc/self/status in kB (`VmHWM`: peak resident set; `VmRSS`: current).
fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[tokio::test]
async fn a_million_deliveries_at_a_dead_destination_stay_bounded() {
    let codec = MemoryCodec::new("dead").never_answer();
    let log = codec.log();
    let config = BatchConfig::default();
    let bound = config.queue_max + config.max_inflight * 10;
    let options = SinkOptions {
        tenant: Some(Arc::new(HeaderExpression("tenant".into()))),
        ..SinkOptions::default()
    };
    let registry = BatcherRegistry::new();
    let producer = SinkProducer::new(codec, config, options, registry.clone());
    let before = status_kb("VmHWM:").unwrap_or(0);
    let payload: Arc<str> = Arc::from("x".repeat(512));
    let tenants: Vec<String> = (0..8).map(|t| format!("t{t}")).collect();

    let mut waiting = Vec::new();
    let mut refused = 0usize;
    let mut reasons = std::collections::HashMap::new();
    for i in 0..DELIVERIES {
        let ex = Exchange::new(payload.clone()).with_header("tenant", tenants[i % 8].as_str());
        let mut call = producer.process(ex);
        match futures::poll!(&mut call) {
            Poll::Ready(Err(CamelError::RetryAfter { ms, reason })) => {
                assert!(ms <= 1000);
                *reasons.entry(reason.to_string()).or_insert(0usize) += 1;
                refused += 1;
            }
            Poll::Ready(other) => panic!("a dead destination answered: {other:?}"),
            Poll::Pending => waiting.push(call),
        }
        if i % 256 == 0 {
            // Let the batcher take what was admitted into requests.
            tokio::task::yield_now().await;
        }
    }
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    let peak = status_kb("VmHWM:").unwrap_or(0);
    let stats = registry.stats();
    println!(
        "flood: {DELIVERIES} deliveries, {} waiting, {refused} refused {reasons:?}, {} requests in flight, peak RSS {peak} kB (before {before} kB)",
        waiting.len(),
        log.request_count()
    );

    assert_eq!(waiting.len() + refused, DELIVERIES);
    assert!(
        waiting.len() <= bound,
        "{} admitted, bound {bound}",
        waiting.len()
    );
    assert!(refused >= DELIVERIES - bound);
    assert_eq!(stats[0].queued, 4096, "the queue is full, not over");
    assert!(stats[0].requests_in_flight <= 8);
    assert!(reasons.contains_key("entries"), "{reasons:?}");
    assert!(
        peak.saturating_sub(before) < 64 * 1024,
        "peak RSS grew by {} kB",
        peak - before
    );
}
