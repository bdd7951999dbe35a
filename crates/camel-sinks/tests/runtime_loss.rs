//! A batcher that ends abnormally (its runtime shuts down) hands the entries it had only
//! queued back to their callers, who deliver them through a replacement batcher; nothing
//! queued is lost and nothing is sent twice.

use std::time::Duration;

use camel_api::Exchange;
use camel_sinks::memory::MemoryCodec;
use camel_sinks::{BatchConfig, BatcherRegistry, SinkOptions, SinkProducer};

#[test]
fn queued_entries_move_to_the_replacement_when_their_batchers_runtime_ends() {
    let codec = MemoryCodec::new("d").gated();
    let log = codec.log();
    let registry = BatcherRegistry::new();
    let config = BatchConfig {
        max_entries: Some(1),
        max_inflight: 1,
        linger: Duration::ZERO,
        ..BatchConfig::default()
    };
    let producer = SinkProducer::new(codec, config, SinkOptions::default(), registry.clone());
    let first = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let second = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    // x1 starts the batcher on the first runtime and is held in flight there.
    let p1 = producer.clone();
    let _x1 = first.spawn(async move { p1.deliver(&Exchange::new("x1")).await });
    first.block_on(log.wait_requests(1));

    second.block_on(async {
        // x2's caller lives on the second runtime; x2 queues behind x1 (one in flight).
        let p2 = producer.clone();
        let x2 = tokio::spawn(async move { p2.deliver(&Exchange::new("x2")).await });
        while registry.stats().first().map(|s| s.queued) != Some(1) {
            tokio::task::yield_now().await;
        }
        first.shutdown_background();
        log.wait_requests(2).await;
        log.release(1);
        x2.await.unwrap().unwrap();
    });

    let requests = log.requests();
    assert_eq!(
        requests,
        vec![vec![requests[0][0].clone()], vec![requests[1][0].clone()]]
    );
    let accepted: Vec<String> = log
        .accepted()
        .iter()
        .map(|e| String::from_utf8_lossy(&e.payload).to_string())
        .collect();
    assert_eq!(accepted, ["x2"]);
    assert_eq!(
        registry.len(),
        1,
        "the replacement runs on the second runtime"
    );
}
