//! A batcher that ends abnormally (its runtime shuts down) hands the entries it had only
//! queued back to their callers, who deliver them through a replacement batcher; nothing
//! queued is lost and nothing is sent twice.
//!
//! Every wait is bounded, so a regression fails the test instead of hanging it.

use std::future::Future;
use std::time::Duration;

use camel_api::Exchange;
use camel_sinks::memory::MemoryCodec;
use camel_sinks::{BatchConfig, BatcherRegistry, SinkOptions, SinkProducer};

const LIMIT: Duration = Duration::from_secs(10);

async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

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
    second.block_on(within("x1's request", log.wait_requests(1)));

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
        let (sent, result) = tokio::join!(
            async {
                within("x2's request through the replacement", log.wait_requests(2)).await;
                log.release(1);
            },
            within("x2's result", x2.as_mut())
        );
        let () = sent;
        result.expect("x2 delivered by the replacement");
    });

    let requests = log.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(requests.iter().all(|r| r.len() == 1), "{requests:?}");
    let accepted: Vec<String> = log
        .accepted()
        .iter()
        .map(|e| String::from_utf8_lossy(&e.payload).to_string())
        .collect();
    assert_eq!(accepted, ["x2"], "x2 sent once, by the replacement");
    assert_eq!(
        registry.len(),
        1,
        "the replacement runs on the second runtime"
    );
}
