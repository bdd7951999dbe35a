//! Batcher behaviour under paused time: every flush trigger, the in-flight limit,
//! tenant fairness, group order, the bounds, the sweep and idle stop. Failures and
//! telemetry have their own files.

mod failures;
mod hot_group;
mod telemetry;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use camel_api::{CamelError, Exchange, RetryReason};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::{BatchConfig, BatcherRegistry};
use crate::memory::{MemoryCodec, MemoryLog, Verdict};
use crate::testing::HeaderExpression;
use crate::{SinkOptions, SinkProducer};

/// Holds a batcher that has decided it is idle before it closes its intake, once armed:
/// the window in which, on a multi-threaded runtime, another thread's delivery can still
/// reach its channel.
#[derive(Debug, Default)]
pub(crate) struct IdleGate {
    armed: AtomicBool,
    /// Notified when the batcher is held.
    pub(crate) reached: Notify,
    /// Lets the held batcher go on.
    pub(crate) resume: Notify,
}

impl IdleGate {
    pub(crate) fn arm(&self) {
        self.armed.store(true, Ordering::Release);
    }

    pub(crate) async fn hold(&self) {
        if self.armed.swap(false, Ordering::AcqRel) {
            self.reached.notify_one();
            self.resume.notified().await;
        }
    }
}

pub(crate) fn options() -> SinkOptions {
    SinkOptions {
        group_key: Some(Arc::new(HeaderExpression("group".into()))),
        tenant: Some(Arc::new(HeaderExpression("tenant".into()))),
        idempotency_key: Some(Arc::new(HeaderExpression("key".into()))),
        default_tenant: "route".into(),
    }
}

pub(crate) struct Rig {
    pub(crate) producer: SinkProducer<MemoryCodec>,
    pub(crate) log: Arc<MemoryLog>,
    pub(crate) registry: Arc<BatcherRegistry>,
}

pub(crate) fn rig(codec: MemoryCodec, config: BatchConfig) -> Rig {
    let log = codec.log();
    let registry = BatcherRegistry::new();
    let producer = SinkProducer::new(codec, config, options(), registry.clone());
    Rig {
        producer,
        log,
        registry,
    }
}

/// A memory destination that gives `verdict` to the entry keyed `key`, accepting the rest.
pub(crate) fn judged(key: &'static str, verdict: Verdict) -> MemoryCodec {
    MemoryCodec::new("d").with_verdict(move |e| {
        if &*e.idempotency_key == key {
            verdict
        } else {
            Verdict::Accept
        }
    })
}

pub(crate) fn config(max_entries: usize, linger_ms: u64) -> BatchConfig {
    BatchConfig {
        max_entries: Some(max_entries),
        linger: Duration::from_millis(linger_ms),
        ..BatchConfig::default()
    }
}

pub(crate) fn exchange(key: &str, group: Option<&str>, tenant: &str) -> Exchange {
    let mut ex = Exchange::new(format!("body-{key}"))
        .with_header("key", key)
        .with_header("tenant", tenant);
    if let Some(g) = group {
        ex = ex.with_header("group", g);
    }
    ex
}

impl Rig {
    pub(crate) fn send(
        &self,
        key: &str,
        group: Option<&str>,
        tenant: &str,
    ) -> JoinHandle<Result<(), CamelError>> {
        let p = self.producer.clone();
        let ex = exchange(key, group, tenant);
        tokio::spawn(async move { p.deliver(&ex).await })
    }
}

/// Lets every ready task run without moving the paused clock.
pub(crate) async fn settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn flushes_at_max_entries_without_waiting_for_linger() {
    let r = rig(MemoryCodec::new("d"), config(5, 60_000));
    let calls: Vec<_> = (0..5).map(|i| r.send(&i.to_string(), None, "t")).collect();
    settle().await;
    assert_eq!(r.log.requests(), vec![vec!["0", "1", "2", "3", "4"]]);
    for c in calls {
        c.await.unwrap().unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn flushes_at_max_bytes() {
    let c = BatchConfig {
        max_bytes: Some(20),
        ..config(10, 60_000)
    };
    let r = rig(MemoryCodec::new("d"), c);
    // Each body is "body-N": 6 bytes; the fourth reaches 24 >= 20.
    let calls: Vec<_> = (0..4).map(|i| r.send(&i.to_string(), None, "t")).collect();
    settle().await;
    assert_eq!(r.log.requests(), vec![vec!["0", "1", "2"]]);
    let start = Instant::now();
    for c in calls {
        c.await.unwrap().unwrap();
    }
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(60),
        "the rest waited for linger"
    );
}

#[tokio::test(start_paused = true)]
async fn flushes_after_linger_from_first_entry() {
    let r = rig(MemoryCodec::new("d"), config(10, 50));
    let start = Instant::now();
    let a = r.send("a", None, "t");
    settle().await;
    tokio::time::advance(Duration::from_millis(30)).await;
    let b = r.send("b", None, "t");
    settle().await;
    assert_eq!(r.log.request_count(), 0, "nothing before linger");
    r.log.wait_requests(1).await;
    assert_eq!(start.elapsed(), Duration::from_millis(50));
    assert_eq!(r.log.requests(), vec![vec!["a", "b"]]);
    a.await.unwrap().unwrap();
    b.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn at_most_max_inflight_requests() {
    let c = BatchConfig {
        max_inflight: 2,
        ..config(1, 0)
    };
    let r = rig(MemoryCodec::new("d").gated(), c);
    let calls: Vec<_> = (0..5).map(|i| r.send(&i.to_string(), None, "t")).collect();
    settle().await;
    assert_eq!(r.log.request_count(), 2);
    assert_eq!(r.registry.stats()[0].requests_in_flight, 2);
    r.log.release(1);
    settle().await;
    assert_eq!(r.log.request_count(), 3);
    r.log.release(4);
    for c in calls {
        c.await.unwrap().unwrap();
    }
    assert_eq!(r.log.request_count(), 5);
}

#[tokio::test(start_paused = true)]
async fn a_tenant_backlog_delays_another_tenant_by_at_most_one_batch() {
    let c = BatchConfig {
        max_inflight: 1,
        ..config(10, 0)
    };
    let r = rig(MemoryCodec::new("d").gated(), c);
    let big: Vec<_> = (0..1000)
        .map(|i| r.send(&format!("a{i}"), None, "A"))
        .collect();
    settle().await;
    assert_eq!(
        r.log.request_count(),
        1,
        "the first batch of A is in flight"
    );
    let small = r.send("b0", None, "B");
    settle().await;
    r.log.release(1);
    settle().await;
    let requests = r.log.requests();
    assert!(requests[1].contains(&"b0".to_string()), "{:?}", requests[1]);
    r.log.release(1000);
    small.await.unwrap().unwrap();
    for c in big {
        c.await.unwrap().unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn group_keeps_order_with_one_request_in_flight() {
    let r = rig(MemoryCodec::new("d").gated(), config(1, 0));
    let g1 = r.send("g1", Some("g"), "t");
    settle().await;
    let g2 = r.send("g2", Some("g"), "t");
    settle().await;
    let h1 = r.send("h1", Some("h"), "t");
    settle().await;
    // g2 waits for g1's answer; h1 is not held up by g.
    assert_eq!(r.log.requests(), vec![vec!["g1"], vec!["h1"]]);
    r.log.release(1);
    settle().await;
    assert_eq!(r.log.requests()[2], vec!["g2"]);
    r.log.release(2);
    for c in [g1, g2, h1] {
        c.await.unwrap().unwrap();
    }
}

async fn refused_reason(r: &Rig, key: &str, tenant: &str) -> (u64, RetryReason) {
    match r.send(key, None, tenant).await.unwrap() {
        Err(CamelError::RetryAfter { ms, reason }) => (ms, reason),
        other => panic!("expected RetryAfter, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn refuses_at_once_on_each_bound() {
    let base = config(100, 60_000);
    let entries = rig(
        MemoryCodec::new("d"),
        BatchConfig {
            queue_max: 3,
            ..base.clone()
        },
    );
    let held: Vec<_> = (0..3)
        .map(|i| entries.send(&i.to_string(), None, "t"))
        .collect();
    settle().await;
    let (ms, reason) = refused_reason(&entries, "x", "u").await;
    assert_eq!(reason, RetryReason::Entries);
    assert!(ms <= 1000);
    let capped = rig(
        MemoryCodec::new("d"),
        BatchConfig {
            queue_max: 1,
            retry_after_max: Duration::from_millis(5),
            ..base.clone()
        },
    );
    let held0 = capped.send("0", None, "t");
    settle().await;
    for key in ["x", "y", "z"] {
        assert!(
            refused_reason(&capped, key, "u").await.0 <= 5,
            "capped at 5 ms"
        );
    }
    assert_eq!(
        entries.registry.stats()[0].queued,
        3,
        "nothing more was queued"
    );

    let bytes = rig(
        MemoryCodec::new("d"),
        BatchConfig {
            queue_max_bytes: 13,
            ..base.clone()
        },
    );
    let held2: Vec<_> = (0..2)
        .map(|i| bytes.send(&i.to_string(), None, "t"))
        .collect();
    settle().await;
    assert_eq!(refused_reason(&bytes, "x", "u").await.1, RetryReason::Bytes);

    let tenant = rig(
        MemoryCodec::new("d"),
        BatchConfig {
            tenant_max: 2,
            ..base
        },
    );
    let held3: Vec<_> = (0..2)
        .map(|i| tenant.send(&i.to_string(), None, "t"))
        .collect();
    settle().await;
    assert_eq!(
        refused_reason(&tenant, "x", "t").await.1,
        RetryReason::Tenant
    );
    tenant.send("y", None, "other").abort();
    // Refusals are counted per tenant in the batcher's stats.
    assert_eq!(
        entries.registry.stats()[0].refused_by_tenant,
        vec![("u".to_string(), 1)]
    );
    assert_eq!(
        capped.registry.stats()[0].refused_by_tenant,
        vec![("u".to_string(), 3)]
    );
    assert_eq!(
        tenant.registry.stats()[0].refused_by_tenant,
        vec![("t".to_string(), 1)]
    );
    for c in held.into_iter().chain(held2).chain(held3).chain([held0]) {
        c.await.unwrap().unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn sweep_drops_entries_whose_caller_went_away() {
    let c = BatchConfig {
        max_inflight: 1,
        ..config(1, 0)
    };
    let r = rig(MemoryCodec::new("d").gated(), c);
    let a = r.send("a", None, "t");
    settle().await;
    let b = r.send("b", None, "t");
    let c2 = r.send("c", None, "t");
    settle().await;
    assert_eq!(r.registry.stats()[0].queued, 2);
    b.abort();
    settle().await;
    r.log.release(2);
    a.await.unwrap().unwrap();
    c2.await.unwrap().unwrap();
    assert_eq!(r.log.requests(), vec![vec!["a"], vec!["c"]]);
    assert_eq!(r.registry.stats()[0].queued, 0);
}

#[tokio::test(start_paused = true)]
async fn stops_when_idle_and_restarts_on_next_delivery() {
    let r = rig(MemoryCodec::new("d"), config(1, 0));
    r.send("a", None, "t").await.unwrap().unwrap();
    assert!(r.registry.is_running(r.producer.key()));
    tokio::time::advance(Duration::from_secs(59)).await;
    settle().await;
    assert_eq!(r.registry.len(), 1, "not idle long enough");
    tokio::time::advance(Duration::from_secs(2)).await;
    settle().await;
    assert!(r.registry.is_empty(), "stopped after 60 s idle");
    r.send("b", None, "t").await.unwrap().unwrap();
    assert_eq!(r.registry.len(), 1);
    assert_eq!(r.log.requests(), vec![vec!["a"], vec!["b"]]);
}

#[tokio::test(start_paused = true)]
async fn delivery_racing_an_idle_stop_starts_the_replacement() {
    let r = rig(MemoryCodec::new("d"), config(1, 0));
    r.send("a", None, "t").await.unwrap().unwrap();
    let p = r.producer.clone();
    // Both become runnable at the same instant: the stop and the next delivery.
    tokio::time::advance(Duration::from_secs(60)).await;
    let ex = exchange("b", None, "t");
    p.deliver(&ex).await.unwrap();
    assert_eq!(r.log.requests(), vec![vec!["a"], vec!["b"]]);
}

#[tokio::test(start_paused = true)]
async fn one_group_per_request_when_the_codec_asks() {
    let r = rig(MemoryCodec::new("d").one_group_per_batch(), config(10, 10));
    let calls = [
        r.send("g1", Some("g"), "t"),
        r.send("h1", Some("h"), "t"),
        r.send("g2", Some("g"), "t"),
    ];
    for c in calls {
        c.await.unwrap().unwrap();
    }
    assert_eq!(r.log.requests(), vec![vec!["g1", "g2"], vec!["h1"]]);
}

#[tokio::test(start_paused = true)]
async fn an_entry_that_slips_into_an_idling_batcher_goes_to_the_replacement() {
    // Every request takes 1 s, so a request of the retiring batcher would still be in
    // flight when the replacement sends.
    let codec = MemoryCodec::new("d").with_latency(|_| Duration::from_secs(1));
    let r = rig(codec, config(10, 0));
    r.send("g1", Some("g"), "t").await.unwrap().unwrap();
    let retiring = r.registry.handle_of(r.producer.key()).unwrap();
    retiring.shared.idle_gate.arm();
    // 60 s later the batcher finds itself idle and is held before closing its intake.
    retiring.shared.idle_gate.reached.notified().await;
    let slipped = r.send("g2", Some("g"), "t");
    settle().await;
    assert_eq!(
        r.registry.stats()[0].queued,
        1,
        "g2 is in the retiring batcher's channel"
    );
    retiring.shared.idle_gate.resume.notify_one();
    settle().await;
    // The retiring batcher's intake is closed: the next caller of the group starts (or
    // finds) the replacement.
    let next = r.send("g3", Some("g"), "t");
    slipped.await.unwrap().unwrap();
    next.await.unwrap().unwrap();
    assert_eq!(
        r.log.most_in_flight_per_group(),
        1,
        "two requests of one group in flight: {:?}",
        r.log.requests()
    );
    let accepted: Vec<_> = r
        .log
        .accepted()
        .iter()
        .map(|e| e.idempotency_key.to_string())
        .collect();
    assert_eq!(accepted, ["g1", "g2", "g3"]);
    assert!(retiring.shared.finished.is_cancelled());
    assert_eq!(r.registry.len(), 1);
}
