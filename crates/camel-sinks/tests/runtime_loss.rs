//! A batcher that ends abnormally (its runtime shuts down) hands the entries it had only
//! queued back to their callers, who deliver them through a replacement batcher; nothing
//! queued is lost and nothing is sent twice. An entry that would overtake a request of
//! its group whose outcome is unknown fails instead.
//!
//! Every wait is bounded, so a regression fails the test instead of hanging it.

use std::future::Future;
use std::time::Duration;

use std::sync::Arc;

use camel_api::{CamelError, Exchange};
use camel_sinks::memory::{MemoryCodec, MemoryLog};
use camel_sinks::testing::HeaderExpression;
use camel_sinks::{BatchConfig, BatcherRegistry, SinkOptions, SinkProducer};
use tokio::runtime::Runtime;

const LIMIT: Duration = Duration::from_secs(10);

async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

/// A producer on a held memory destination (one entry per request, one request in
/// flight), grouped by the `group` header; a multi-thread runtime that will die, and a
/// current-thread runtime that outlives it. `held` starts the batcher on the first
/// runtime and is held in flight there.
struct Setup {
    producer: SinkProducer<MemoryCodec>,
    log: Arc<MemoryLog>,
    registry: Arc<BatcherRegistry>,
    first: Runtime,
    second: Runtime,
}

fn setup(held: Exchange) -> Setup {
    let codec = MemoryCodec::new("d").gated();
    let log = codec.log();
    let registry = BatcherRegistry::new();
    let config = BatchConfig {
        max_entries: Some(1),
        max_inflight: 1,
        linger: Duration::ZERO,
        ..BatchConfig::default()
    };
    let options = SinkOptions {
        group_key: Some(Arc::new(HeaderExpression("group".into()))),
        ..SinkOptions::default()
    };
    let producer = SinkProducer::new(codec, config, options, registry.clone());
    let first = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let second = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let p1 = producer.clone();
    let _held = first.spawn(async move { p1.deliver(&held).await });
    second.block_on(within("the held request", log.wait_requests(1)));
    Setup {
        producer,
        log,
        registry,
        first,
        second,
    }
}

/// Waits for the second request (the replacement's), lets it answer, and returns the
/// result of the delivery it carried.
async fn second_request_answered<T>(log: &MemoryLog, delivery: impl Future<Output = T>) -> T {
    let (sent, result) = tokio::join!(
        async {
            within("the request through the replacement", log.wait_requests(2)).await;
            log.release(1);
        },
        within("the delivery's result", delivery)
    );
    let () = sent;
    result
}

/// The bodies the destination accepted.
fn accepted(log: &MemoryLog) -> Vec<String> {
    log.accepted()
        .iter()
        .map(|e| String::from_utf8_lossy(&e.payload).to_string())
        .collect()
}

fn grouped(body: &str, group: &str) -> Exchange {
    Exchange::new(body).with_header("group", group)
}

#[test]
fn queued_entries_move_to_the_replacement_when_their_batchers_runtime_ends() {
    let Setup {
        producer,
        log,
        registry,
        first,
        second,
    } = setup(Exchange::new("x1"));

    second.block_on(async {
        // x2's caller lives on the second runtime. Its first poll admits it: it waits
        // behind x1 (one request in flight), in the batcher's channel or queue.
        let x2_exchange = Exchange::new("x2");
        let mut x2 = Box::pin(producer.deliver(&x2_exchange));
        assert!(
            futures::poll!(x2.as_mut()).is_pending(),
            "x2 must wait behind x1"
        );
        let stats = registry.stats();
        assert_eq!(stats.len(), 1);
        assert_eq!(stats[0].requests_in_flight, 1, "{stats:?}");

        first.shutdown_background();
        // x2 comes back to its caller, which hands it to a replacement on this runtime.
        let result = second_request_answered(&log, x2.as_mut()).await;
        result.expect("x2 delivered by the replacement");
    });

    let requests = log.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(requests.iter().all(|r| r.len() == 1), "{requests:?}");
    assert_eq!(accepted(&log), ["x2"], "x2 sent once, by the replacement");
    assert_eq!(
        registry.len(),
        1,
        "the replacement runs on the second runtime"
    );
}

#[test]
fn an_entry_behind_its_groups_interrupted_request_fails_instead_of_overtaking_it() {
    let Setup {
        producer,
        log,
        registry,
        first,
        second,
    } = setup(grouped("g1", "g"));

    second.block_on(async {
        // g2 waits behind g1 (same group); h1 waits for the in-flight limit only.
        let (g2_exchange, h1_exchange) = (grouped("g2", "g"), grouped("h1", "h"));
        let mut g2 = Box::pin(producer.deliver(&g2_exchange));
        let mut h1 = Box::pin(producer.deliver(&h1_exchange));
        assert!(futures::poll!(g2.as_mut()).is_pending());
        assert!(futures::poll!(h1.as_mut()).is_pending());
        assert_eq!(registry.stats()[0].requests_in_flight, 1);

        first.shutdown_background();
        // g1's fate is unknown: g2 must not go out ahead of its retry.
        match within("g2's result", g2.as_mut()).await {
            Err(CamelError::Stopping(m)) => assert!(m.contains("group `g`"), "{m}"),
            other => panic!("g2 must fail with Stopping, got {other:?}"),
        }
        // h1 could not overtake anything of its group: the replacement sends it.
        let result = second_request_answered(&log, h1.as_mut()).await;
        result.expect("h1 delivered by the replacement");
    });

    let bodies: Vec<Vec<String>> = log.requests();
    assert_eq!(bodies.len(), 2, "g1, then h1; never g2: {bodies:?}");
    assert_eq!(accepted(&log), ["h1"]);
}
