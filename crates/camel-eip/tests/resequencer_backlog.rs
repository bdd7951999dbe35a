//! A slow continuation behind a fast source (issue 24, item 7): what is acknowledged and
//! not yet delivered is bounded, callers wait once the bound is reached, a stop delivers
//! everything within its deadline or counts what it cuts off, and a swap hands over what
//! the old continuation did not reach. All in paused time.

mod resequencer_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::{BoxProcessor, Exchange, ShutdownReason, Value};
use camel_eip::resequencer::{ResequenceConfig, Resequencer};
use resequencer_support::*;
use tokio::time::Instant;

/// Per exchange, as the tester's `delay: 20`.
const STEP: Duration = Duration::from_millis(20);

/// A continuation taking [`STEP`] per exchange, recording the `seq` of each it finishes.
fn slow(done: &Arc<Mutex<Vec<i64>>>) -> BoxProcessor {
    let done = done.clone();
    BoxProcessor::from_fn(move |ex: Exchange| {
        let done = done.clone();
        async move {
            tokio::time::sleep(STEP).await;
            let seq = ex.header("seq").and_then(Value::as_i64).unwrap_or(-1);
            done.lock().unwrap().push(seq);
            Ok(ex)
        }
    })
}

fn config(channel: usize, backlog: usize) -> ResequenceConfig {
    let mut cfg = stream_config(Some(1), 1000, 60_000);
    cfg.channel_capacity = channel;
    cfg.continuation_backlog = backlog;
    cfg
}

/// Feeds `1..=n` as fast as the resequencer accepts, checking the bound after each.
async fn feed(r: &Resequencer, n: u64, done: &Arc<Mutex<Vec<i64>>>, bound: u64) -> u64 {
    let mut widest = 0;
    for seq in 1..=n {
        r.processor.process(ex(seq)).await.unwrap();
        let undelivered = r.stats.accepted() - done.lock().unwrap().len() as u64;
        assert!(
            undelivered <= bound,
            "{undelivered} acknowledged and undelivered, bound {bound}"
        );
        widest = widest.max(undelivered);
    }
    widest
}

#[tokio::test(start_paused = true)]
async fn callers_wait_once_the_channel_and_the_backlog_are_full() {
    let done = Arc::default();
    let r = build(&config(8, 4), slow(&done), None);
    r.lifecycle.start().await.unwrap();
    let t = Instant::now();
    // Channel, backlog, and the one the actor took while the backlog had no room.
    let widest = feed(&r, 200, &done, 8 + 4 + 1).await;
    assert_eq!(widest, 8 + 4 + 1, "the bound is reached, not undershot");
    // The source ran at the continuation's pace: 200 in, at most 13 not yet through.
    assert!(t.elapsed() >= STEP * (200 - 13), "{:?}", t.elapsed());
    let drained = r
        .lifecycle
        .shutdown_by(
            ShutdownReason::RouteStop,
            Instant::now() + Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert_eq!(drained.lost, 0);
    assert_eq!(*done.lock().unwrap(), (1..=200).collect::<Vec<i64>>());
}

#[tokio::test(start_paused = true)]
async fn a_stop_delivers_everything_acknowledged_before_its_deadline() {
    let done = Arc::default();
    let r = build(&config(64, 32), slow(&done), None);
    r.lifecycle.start().await.unwrap();
    feed(&r, 500, &done, 64 + 32 + 1).await;
    let accepted = r.stats.accepted();
    let t = Instant::now();
    // The backlog takes (64 + 32 + 1) × 20 ms at most: well inside a 30 s deadline, and
    // far longer than the old fixed 5 s would have needed to cut it short.
    let drained = r
        .lifecycle
        .shutdown_by(ShutdownReason::RouteStop, t + Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(drained.lost, 0);
    assert!(t.elapsed() <= STEP * 97, "{:?}", t.elapsed());
    assert_eq!(done.lock().unwrap().len() as u64, accepted);
    assert_eq!(r.stats.lost(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_stop_deadline_counts_every_acknowledged_exchange_it_cuts_off() {
    let done = Arc::default();
    let r = build(&config(64, 32), slow(&done), None);
    r.lifecycle.start().await.unwrap();
    feed(&r, 300, &done, 64 + 32 + 1).await;
    let accepted = r.stats.accepted();
    let t = Instant::now();
    // Room for 25 deliveries and a half.
    let deadline = t + STEP * 25 + STEP / 2;
    let drained = r
        .lifecycle
        .shutdown_by(ShutdownReason::RouteStop, deadline)
        .await
        .unwrap();
    assert_eq!(t.elapsed(), deadline - t, "ends at the deadline, not later");
    let delivered = done.lock().unwrap().len() as u64;
    assert!(drained.lost > 0);
    assert_eq!(
        delivered + drained.lost,
        accepted,
        "each is delivered or counted"
    );
    assert_eq!(r.stats.lost(), drained.lost);
    // What was delivered is a prefix, in order: nothing after a lost one went through.
    assert_eq!(
        *done.lock().unwrap(),
        (1..=delivered as i64).collect::<Vec<i64>>()
    );
}

#[tokio::test(start_paused = true)]
async fn a_swap_deadline_hands_what_the_old_continuation_did_not_reach_to_the_new_one() {
    let old_done = Arc::default();
    let old = build(&config(64, 32), slow(&old_done), None);
    old.lifecycle.start().await.unwrap();
    feed(&old, 300, &old_done, 64 + 32 + 1).await;
    let accepted = old.stats.accepted();
    // Mid-way through a call of the old continuation.
    let deadline = Instant::now() + STEP * 10 + STEP / 2;
    let drained = old
        .lifecycle
        .shutdown_by(ShutdownReason::HotSwap, deadline)
        .await
        .unwrap();
    assert_eq!(drained.lost, 0, "a swap loses nothing");
    let handover = old.lifecycle.take_state().expect("a hand-over");
    let new_sink = Recorder::default();
    let new = build(&config(64, 32), new_sink.processor(), None);
    new.lifecycle.adopt_state(handover);
    new.lifecycle.start().await.unwrap();
    // The new numbering goes on after the last released number.
    new.processor.process(ex(301)).await.unwrap();
    // The call the deadline found in progress finishes on the old continuation.
    tokio::time::sleep(STEP).await;
    let old_delivered = old_done.lock().unwrap().clone();
    new_sink
        .wait_for(accepted as usize + 1 - old_delivered.len())
        .await;
    assert!(old_delivered.len() > 10 && old_delivered.len() < 300);
    let mut all = old_delivered.clone();
    all.extend(new_sink.seqs());
    assert_eq!(
        all,
        (1..=301).collect::<Vec<i64>>(),
        "each exactly once, old continuation first, then the new one in order"
    );
    new.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
}
