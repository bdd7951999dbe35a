//! Draining a resequencer on route stop: order, idempotence, and how long it takes.

mod resequencer_support;

use std::time::{Duration, Instant};

use camel_api::{CamelError, ShutdownReason};
use camel_eip::resequencer::ResequenceConfig;
use resequencer_support::*;

/// Waits (by yielding, not sleeping) until the actor reports `n` held exchanges.
async fn until_held(r: &camel_eip::resequencer::Resequencer, n: u64) {
    let give_up = Instant::now() + Duration::from_secs(10);
    while r.stats.held() != n {
        assert!(Instant::now() < give_up, "held stuck at {}", r.stats.held());
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_flushes_held_exchanges_in_order() {
    let rec = Recorder::default();
    let r = build(&stream_config(Some(1), 100, 60_000), rec.processor(), None);
    r.lifecycle.start().await.unwrap();
    for n in [1, 7, 4, 9, 5, 12] {
        r.processor.process(ex(n)).await.unwrap();
    }
    until_held(&r, 5).await;
    rec.wait_for(1).await;
    assert_eq!(rec.seqs(), [1]);
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(rec.seqs(), [1, 4, 5, 7, 9, 12]);
    assert_eq!(r.stats.held(), 0);
}

#[tokio::test]
async fn batch_stop_flushes_open_batches_sorted() {
    let rec = Recorder::default();
    let r = build(
        &ResequenceConfig::batch("${header.seq}"),
        rec.processor(),
        None,
    );
    r.lifecycle.start().await.unwrap();
    for n in [10, 9, 100, 1] {
        r.processor.process(ex(n)).await.unwrap();
    }
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(rec.seqs(), [1, 9, 10, 100]);
}

#[tokio::test]
async fn shutdown_is_idempotent_and_final() {
    let rec = Recorder::default();
    let r = build(&stream_config(Some(1), 10, 1000), rec.processor(), None);
    r.lifecycle.start().await.unwrap();
    r.processor.process(ex(2)).await.unwrap();
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    r.lifecycle.shutdown(ShutdownReason::HotSwap).await.unwrap();
    assert_eq!(rec.seqs(), [2], "flushed exactly once");
    assert!(matches!(
        r.lifecycle.start().await,
        Err(CamelError::Stopping(_))
    ));
}

#[tokio::test]
async fn shutdown_before_start_still_delivers_what_was_accepted() {
    let rec = Recorder::default();
    let r = build(&stream_config(Some(1), 10, 1000), rec.processor(), None);
    for n in [3, 1, 2] {
        r.processor.process(ex(n)).await.unwrap();
    }
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(rec.seqs(), [1, 2, 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_is_prompt_idle_and_with_1000_held() {
    let rec = Recorder::default();
    let r = build(&stream_config(Some(1), 2000, 60_000), rec.processor(), None);
    r.lifecycle.start().await.unwrap();
    let t = Instant::now();
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    let idle = t.elapsed();

    let r = build(&stream_config(Some(1), 2000, 60_000), rec.processor(), None);
    r.lifecycle.start().await.unwrap();
    // 1 never comes: 2..=1001 are all held.
    for n in 2..=1001 {
        r.processor.process(ex(n)).await.unwrap();
    }
    until_held(&r, 1000).await;
    let t = Instant::now();
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    let held = t.elapsed();
    println!(
        "DRAIN idle_stop_us={} held_1000_stop_us={}",
        idle.as_micros(),
        held.as_micros()
    );
    assert_eq!(rec.seqs(), (2..=1001).collect::<Vec<i64>>());
    assert!(idle < Duration::from_millis(100), "idle stop took {idle:?}");
    assert!(
        held < Duration::from_millis(100),
        "stop with 1000 held took {held:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_stuck_continuation_is_cut_off_at_the_stop_deadline_and_its_exchanges_counted() {
    let stuck = camel_api::BoxProcessor::from_fn(|_| std::future::pending());
    let r = build(&stream_config(Some(1), 10, 1000), stuck, None);
    r.lifecycle.start().await.unwrap();
    for n in [1, 3, 2] {
        r.processor.process(ex(n)).await.unwrap();
    }
    let t = tokio::time::Instant::now();
    let deadline = t + Duration::from_secs(7);
    let drained = r
        .lifecycle
        .shutdown_by(ShutdownReason::RouteStop, deadline)
        .await
        .unwrap();
    assert_eq!(
        t.elapsed(),
        Duration::from_secs(7),
        "the stop's own deadline"
    );
    assert_eq!(
        drained.lost, 3,
        "the one in the continuation and the two behind it"
    );
    assert_eq!(r.stats.lost(), 3);
    // Still idempotent afterwards.
    let again = r
        .lifecycle
        .shutdown_by(ShutdownReason::RouteStop, deadline)
        .await
        .unwrap();
    assert_eq!(again.lost, 0);
}

#[tokio::test(start_paused = true)]
async fn shutdown_without_a_deadline_reports_a_loss_as_an_error() {
    let stuck = camel_api::BoxProcessor::from_fn(|_| std::future::pending());
    let r = build(&stream_config(Some(1), 10, 1000), stuck, None);
    r.lifecycle.start().await.unwrap();
    r.processor.process(ex(1)).await.unwrap();
    let t = tokio::time::Instant::now();
    let err = r
        .lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap_err();
    assert!(matches!(err, CamelError::Timeout(_)), "{err}");
    assert!(err.to_string().contains("1 acknowledged"), "{err}");
    assert_eq!(t.elapsed(), Duration::from_secs(30));
}
