//! `reject_old` gives one answer per number, decided by the actor before the caller is
//! acknowledged: a number below the watermark is always a `RejectedOld` error to its
//! caller, never an acknowledgement followed by a silent drop.

mod resequencer_support;

use camel_api::{CamelError, ShutdownReason};
use camel_eip::resequencer::{ResequenceError, Resequencer};
use futures::future::{join, join_all};
use resequencer_support::*;

fn reject_old_resequencer(rec: &Recorder) -> Resequencer {
    let mut cfg = stream_config(Some(1), 1000, 1000);
    stream_mut(&mut cfg).reject_old = true;
    build(&cfg, rec.processor(), None)
}

/// The sequence number a call was refused for, or `None` when it was acknowledged.
async fn refused(r: &Resequencer, n: u64) -> Option<u64> {
    match r.processor.process(ex(n)).await {
        Ok(_) => None,
        Err(e) => match ResequenceError::from_camel(&e) {
            Some(ResequenceError::RejectedOld { sequence, .. }) => Some(*sequence),
            _ => panic!("unexpected error for {n}: {e}"),
        },
    }
}

// Current-thread: on the old code the actor never ran between two calls, so this failed
// for every number (an acknowledgement, then a drop as `old`).
#[tokio::test]
async fn n_then_n_again_is_refused_every_time() {
    let rec = Recorder::default();
    let r = reject_old_resequencer(&rec);
    r.lifecycle.start().await.unwrap();
    for n in 1..=200 {
        assert_eq!(refused(&r, n).await, None, "first {n} is accepted");
        let err = r.processor.process(ex(n)).await.unwrap_err();
        assert_eq!(
            ResequenceError::from_camel(&err),
            Some(&ResequenceError::RejectedOld {
                sequence: n,
                last_delivered: n
            }),
            "second {n}"
        );
    }
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(rec.seqs(), (1..=200).collect::<Vec<i64>>());
    assert_eq!(r.stats.accepted(), 200);
    assert_eq!(
        r.stats.dropped(),
        0,
        "no acknowledged exchange dropped as old"
    );
    assert_eq!(r.stats.rejected_old(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_repeats_all_get_the_same_refusal() {
    const N: u64 = 200;
    const REPEATS: u64 = 4;
    let rec = Recorder::default();
    let r = reject_old_resequencer(&rec);
    r.lifecycle.start().await.unwrap();
    // Each number's repeats go in at once, together with the next number's first call.
    // The first call's acknowledgement means the actor has settled the number, so every
    // repeat must be refused, whatever the interleaving.
    let mut acknowledged = Vec::new();
    assert_eq!(refused(&r, 1).await, None);
    for n in 1..=N {
        let repeats = join_all((0..REPEATS).map(|_| refused(&r, n)));
        let next = async {
            match n < N {
                true => refused(&r, n + 1).await,
                false => None,
            }
        };
        let (outcomes, next) = join(repeats, next).await;
        assert_eq!(next, None, "first {} is accepted", n + 1);
        acknowledged.extend(outcomes.into_iter().filter(|o| *o != Some(n)).map(|_| n));
    }
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert!(
        acknowledged.is_empty(),
        "{} of {} repeats were acknowledged instead of refused",
        acknowledged.len(),
        N * REPEATS
    );
    assert_eq!(rec.seqs(), (1..=N as i64).collect::<Vec<i64>>());
    assert_eq!(r.stats.dropped(), 0);
    assert_eq!(r.stats.rejected_old(), N * REPEATS);
}

#[tokio::test]
async fn a_caller_waiting_for_its_verdict_is_answered_by_a_stop_or_a_drop() {
    // Called before start: the verdict comes from the drain of a shutdown...
    let rec = Recorder::default();
    let r = reject_old_resequencer(&rec);
    let waiting = tokio::spawn(r.processor.process(ex(1)));
    tokio::task::yield_now().await;
    assert!(!waiting.is_finished(), "no verdict before the actor runs");
    r.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert!(waiting.await.unwrap().is_ok());
    assert_eq!(rec.seqs(), [1]);

    // ...or, when the resequencer is dropped unstarted, is a refusal: it never took it.
    let rec = Recorder::default();
    let Resequencer {
        processor,
        lifecycle,
        ..
    } = reject_old_resequencer(&rec);
    let waiting = tokio::spawn(processor.process(ex(1)));
    tokio::task::yield_now().await;
    drop(lifecycle);
    let err = waiting.await.unwrap().unwrap_err();
    assert!(matches!(err, CamelError::Stopping(_)), "{err}");
    assert!(rec.seqs().is_empty());
}
