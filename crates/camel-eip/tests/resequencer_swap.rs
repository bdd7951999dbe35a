//! Hot swap by hand, as the route controller does it: `shutdown(HotSwap)` the old
//! resequencer, `take_state`, `adopt_state` on the new one, `start` it.

mod resequencer_support;

use camel_api::{ShutdownReason, StepLifecycle};
use camel_eip::resequencer::{OnSwap, ResequenceConfig, ResequenceError, Resequencer};
use resequencer_support::*;

async fn swap(old: &Resequencer, new: &Resequencer) {
    old.lifecycle
        .shutdown(ShutdownReason::HotSwap)
        .await
        .unwrap();
    if let Some(state) = old.lifecycle.take_state() {
        new.lifecycle.adopt_state(state);
    }
    new.lifecycle.start().await.unwrap();
}

async fn feed(r: &Resequencer, seqs: &[u64]) {
    for &n in seqs {
        r.processor.process(ex(n)).await.unwrap();
    }
}

#[tokio::test]
async fn flush_delivers_held_through_the_old_continuation_and_keeps_numbering() {
    let (old_sink, new_sink) = (Recorder::default(), Recorder::default());
    let cfg = stream_config(Some(1), 100, 60_000);
    let old = build(&cfg, old_sink.processor(), None);
    old.lifecycle.start().await.unwrap();
    feed(&old, &[1, 2, 5, 4]).await;
    let new = build(&cfg, new_sink.processor(), None);
    swap(&old, &new).await;
    assert_eq!(old_sink.seqs(), [1, 2, 4, 5]);
    // The new one continues after 5: 6 goes out at once, and the late 3 too.
    feed(&new, &[6, 3, 8, 7]).await;
    new_sink.wait_for(4).await;
    assert_eq!(new_sink.seqs(), [6, 3, 7, 8]);
    new.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
}

#[tokio::test]
async fn flush_with_reject_old_refuses_a_late_number_after_the_swap() {
    let sink = Recorder::default();
    let mut cfg = stream_config(Some(1), 100, 60_000);
    stream_mut(&mut cfg).reject_old = true;
    let old = build(&cfg, sink.processor(), None);
    old.lifecycle.start().await.unwrap();
    feed(&old, &[1, 3]).await;
    let new = build(&cfg, sink.processor(), None);
    swap(&old, &new).await;
    let err = new.processor.process(ex(2)).await.unwrap_err();
    assert!(matches!(
        ResequenceError::from_camel(&err),
        Some(ResequenceError::RejectedOld {
            sequence: 2,
            last_delivered: 3
        })
    ));
    new.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(sink.seqs(), [1, 3]);
}

#[tokio::test]
async fn handoff_moves_held_exchanges_so_order_survives() {
    let (old_sink, new_sink) = (Recorder::default(), Recorder::default());
    let mut cfg = stream_config(Some(1), 100, 60_000);
    cfg.on_swap = OnSwap::Handoff;
    let old = build(&cfg, old_sink.processor(), None);
    old.lifecycle.start().await.unwrap();
    feed(&old, &[1, 2, 5, 4]).await;
    let new = build(&cfg, new_sink.processor(), None);
    swap(&old, &new).await;
    assert_eq!(old_sink.seqs(), [1, 2]);
    feed(&new, &[3, 6]).await;
    new_sink.wait_for(4).await;
    assert_eq!(new_sink.seqs(), [3, 4, 5, 6]);
    new.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(new.stats.delivered(), 4);
}

#[tokio::test]
async fn batch_handoff_carries_open_batches() {
    let (old_sink, new_sink) = (Recorder::default(), Recorder::default());
    let mut cfg = ResequenceConfig::batch("${header.seq}");
    cfg.on_swap = OnSwap::Handoff;
    let old = build(&cfg, old_sink.processor(), None);
    old.lifecycle.start().await.unwrap();
    feed(&old, &[30, 10]).await;
    let new = build(&cfg, new_sink.processor(), None);
    swap(&old, &new).await;
    feed(&new, &[20]).await;
    new.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert!(old_sink.seqs().is_empty());
    assert_eq!(new_sink.seqs(), [10, 20, 30]);
}

#[tokio::test]
async fn incompatible_handoff_delivers_carried_exchanges_first() {
    let (old_sink, new_sink) = (Recorder::default(), Recorder::default());
    let mut cfg = stream_config(Some(1), 100, 60_000);
    cfg.on_swap = OnSwap::Handoff;
    let old = build(&cfg, old_sink.processor(), None);
    old.lifecycle.start().await.unwrap();
    feed(&old, &[3, 2]).await;
    let new = build(
        &ResequenceConfig::batch("${header.seq}"),
        new_sink.processor(),
        None,
    );
    swap(&old, &new).await;
    new_sink.wait_for(2).await;
    feed(&new, &[1]).await;
    new.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(
        new_sink.seqs(),
        [2, 3, 1],
        "carried first, in their order; nothing lost"
    );
}

#[tokio::test]
async fn a_stop_without_swap_hands_nothing_over() {
    let sink = Recorder::default();
    let mut cfg = stream_config(Some(1), 100, 60_000);
    cfg.on_swap = OnSwap::Handoff;
    let r = build(&cfg, sink.processor(), None);
    r.lifecycle.start().await.unwrap();
    feed(&r, &[2]).await;
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert!(r.lifecycle.take_state().is_none());
    assert_eq!(sink.seqs(), [2], "a route stop always flushes");
}

#[test]
fn lifecycle_is_a_step_lifecycle() {
    fn named(l: &dyn StepLifecycle) -> &str {
        l.name()
    }
    let r = build(
        &stream_config(Some(1), 1, 1),
        camel_api::BoxProcessor::identity(),
        None,
    );
    assert_eq!(named(r.lifecycle.as_ref()), "resequence");
}
