//! Swapping a resequencer five times while 10,000 exchanges, shuffled within windows of
//! 100, stream through it — the controller's restart path done by hand: pause intake,
//! drain the old step, hand its state over, start the new one, resume.

mod resequencer_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use camel_api::ShutdownReason;
use camel_eip::resequencer::{OnSwap, ResequenceConfig, Resequencer};
use resequencer_support::*;
use tokio::sync::{Notify, RwLock};

const N: u64 = 10_000;
const SWAPS: usize = 5;

async fn run(on_swap: OnSwap) -> Vec<i64> {
    let sink = Recorder::default();
    let mut cfg = stream_config(Some(1), 1000, 60_000);
    cfg.on_swap = on_swap;
    let make = |cfg: &ResequenceConfig| build(cfg, sink.processor(), None);
    let first = make(&cfg);
    first.lifecycle.start().await.unwrap();
    // The route's current step; the write lock is the paused intake.
    let current: Arc<RwLock<Resequencer>> = Arc::new(RwLock::new(first));
    let sent = Arc::new(AtomicUsize::new(0));
    let progress = Arc::new(Notify::new());

    let feeder = {
        let (current, sent, progress) = (current.clone(), sent.clone(), progress.clone());
        tokio::spawn(async move {
            for s in shuffled_in_windows(N, 100, 7) {
                let step = current.read().await;
                step.processor.process(ex(s)).await.expect("accepted");
                drop(step);
                if sent.fetch_add(1, Ordering::Relaxed) % 500 == 0 {
                    progress.notify_one();
                }
            }
            progress.notify_one();
        })
    };

    for k in 1..=SWAPS {
        let at = k * N as usize / (SWAPS + 1);
        while sent.load(Ordering::Relaxed) < at {
            progress.notified().await;
        }
        let mut step = current.write().await;
        let next = make(&cfg);
        step.lifecycle
            .shutdown(ShutdownReason::HotSwap)
            .await
            .unwrap();
        if let Some(state) = step.lifecycle.take_state() {
            next.lifecycle.adopt_state(state);
        }
        next.lifecycle.start().await.unwrap();
        *step = next;
    }
    feeder.await.unwrap();
    let last = current.write().await;
    last.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    sink.seqs()
}

fn inversions(seqs: &[i64]) -> usize {
    seqs.windows(2).filter(|w| w[1] < w[0]).count()
}

fn assert_exactly_once(seqs: &[i64]) {
    let mut sorted = seqs.to_vec();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        (1..=N as i64).collect::<Vec<_>>(),
        "lost or duplicated"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handoff_keeps_every_message_once_and_in_order() {
    let seqs = run(OnSwap::Handoff).await;
    assert_exactly_once(&seqs);
    assert_eq!(inversions(&seqs), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flush_keeps_every_message_once() {
    let seqs = run(OnSwap::Flush).await;
    assert_exactly_once(&seqs);
    println!(
        "SWAP on_swap=flush swaps={SWAPS} messages={N} inversions={}",
        inversions(&seqs)
    );
}
