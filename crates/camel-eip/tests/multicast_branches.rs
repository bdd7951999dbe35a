//! Multicast over real processors: order, concurrency, failures and the three strategies.

use std::sync::{Arc, Mutex};

use camel_api::{Body, BoxProcessor, CamelError, Exchange};
use camel_eip::multicast::{AggregationStrategy, Multicast, MulticastConfig};
use tokio::sync::Barrier;

fn recording(log: &Arc<Mutex<Vec<&'static str>>>, name: &'static str) -> BoxProcessor {
    let log = log.clone();
    BoxProcessor::sync(move |mut ex: Exchange| {
        log.lock().unwrap().push(name);
        ex.message.body = Body::from(name);
        Ok(ex)
    })
}

fn multicast(
    branches: Vec<BoxProcessor>,
    parallel: bool,
    strategy: AggregationStrategy,
) -> BoxProcessor {
    Multicast::new(branches, MulticastConfig { parallel, strategy }).into_processor()
}

#[tokio::test]
async fn sequential_runs_in_order_and_last_wins() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let m = multicast(
        vec![
            recording(&log, "a"),
            recording(&log, "b"),
            recording(&log, "c"),
        ],
        false,
        AggregationStrategy::LastWins,
    );
    let input = Exchange::new("in");
    let id = input.id;
    let out = m.process(input).await.unwrap();
    assert_eq!(*log.lock().unwrap(), ["a", "b", "c"]);
    assert_eq!(out.message.body, Body::from("c"));
    assert_eq!(out.id, id);
}

#[tokio::test]
async fn parallel_branches_really_overlap() {
    // Each branch waits for the other at a barrier: only concurrent execution completes.
    let barrier = Arc::new(Barrier::new(2));
    let branch = |text: &'static str| {
        let barrier = barrier.clone();
        BoxProcessor::from_fn(move |mut ex: Exchange| {
            let barrier = barrier.clone();
            async move {
                barrier.wait().await;
                ex.message.body = Body::from(text);
                Ok(ex)
            }
        })
    };
    let m = multicast(
        vec![branch("x"), branch("y")],
        true,
        AggregationStrategy::CollectAll,
    );
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        m.process(Exchange::new("in")),
    )
    .await
    .expect("parallel branches deadlocked")
    .unwrap();
    assert_eq!(out.message.body, Body::from(serde_json::json!(["x", "y"])));
}

#[tokio::test]
async fn original_strategy_returns_the_input_after_every_branch() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let m = multicast(
        vec![recording(&log, "a"), recording(&log, "b")],
        true,
        AggregationStrategy::Original,
    );
    let out = m
        .process(Exchange::new("in").with_header("h", 1))
        .await
        .unwrap();
    assert_eq!(out.message.body, Body::from("in"));
    assert!(out.header("h").is_some());
    assert_eq!(log.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn failures_stop_sequential_and_report_the_first_parallel_one() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let fail = |msg: &'static str| BoxProcessor::sync(move |_| Err(CamelError::processor(msg)));
    let m = multicast(
        vec![recording(&log, "a"), fail("boom"), recording(&log, "c")],
        false,
        AggregationStrategy::LastWins,
    );
    let err = m.process(Exchange::new("in")).await.unwrap_err();
    assert_eq!(err.to_string(), "boom");
    assert_eq!(
        *log.lock().unwrap(),
        ["a"],
        "sequential stops at the failure"
    );

    let log = Arc::new(Mutex::new(Vec::new()));
    let m = multicast(
        vec![fail("first"), recording(&log, "b"), fail("second")],
        true,
        AggregationStrategy::LastWins,
    );
    let err = m.process(Exchange::new("in")).await.unwrap_err();
    assert_eq!(err.to_string(), "first");
    assert_eq!(*log.lock().unwrap(), ["b"], "parallel runs every branch");
}
