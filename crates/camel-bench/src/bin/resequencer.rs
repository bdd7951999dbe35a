//! Scenario `resequencer`: `direct:start` → `resequence` → end, with 1,000,000 exchanges
//! numbered 1..n and shuffled within windows of 100, in stream and in batch mode; against a
//! hand-written tokio loop (a bounded channel into one reordering task) doing the same work
//! on the same `Exchange` type.
//!
//! ```text
//! cargo run --release -p camel-bench --bin resequencer
//! ```
//! `RESEQUENCER_EXCHANGES` changes the number of exchanges (default 1,000,000; rounded
//! down to whole windows).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use camel_api::{BoxProcessor, Exchange};
use camel_bench::{count_from_env, peak_rss_kb, per_second, result_line};
use camel_core::CamelContext;
use tokio::sync::{mpsc, Notify};

const WINDOW: u64 = 100;

/// Counts delivered exchanges and wakes the waiter when all `n` have arrived.
#[derive(Clone)]
struct Sink {
    seen: Arc<AtomicU64>,
    done: Arc<Notify>,
    n: u64,
}

impl Sink {
    fn new(n: u64) -> Self {
        Sink {
            seen: Arc::default(),
            done: Arc::default(),
            n,
        }
    }

    fn take(&self, _ex: Exchange) {
        if self.seen.fetch_add(1, Ordering::Relaxed) + 1 == self.n {
            self.done.notify_one();
        }
    }

    fn processor(&self) -> BoxProcessor {
        let me = self.clone();
        BoxProcessor::sync(move |ex| {
            me.take(ex);
            Ok(Exchange::default())
        })
    }
}

/// 1..=n shuffled within windows of [`WINDOW`] by a fixed xorshift stream. Exchanges are
/// made by the feeders, inside the timed part (as a consumer would), so the peak memory
/// reflects what the resequencer holds rather than a pre-built input.
fn order(n: u64) -> Vec<u64> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut seqs: Vec<u64> = (1..=n).collect();
    for chunk in seqs.chunks_mut(WINDOW as usize) {
        for i in (1..chunk.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            chunk.swap(i, (state % (i as u64 + 1)) as usize);
        }
    }
    seqs
}

fn exchange(seq: u64) -> Exchange {
    Exchange::default().with_header("seq", seq)
}

const STREAM_YAML: &str = r#"
- route:
    id: bench
    from:
      uri: direct:start
      steps:
        - resequence:
            stream: { sequence: "${header.seq}", initial_sequence: 1, capacity: 1000 }
        - process: { ref: sink }
"#;

const BATCH_YAML: &str = r#"
- route:
    id: bench
    from:
      uri: direct:start
      steps:
        - resequence:
            batch: { sort: "${header.seq}", size: 100, allow_duplicates: true }
        - process: { ref: sink }
"#;

/// Our route: returns the time from the first send to the last delivery.
async fn ours(yaml: &str, input: Vec<u64>) -> Duration {
    let sink = Sink::new(input.len() as u64);
    let mut routes =
        camel_core::yaml::load_str(yaml, "bench.yaml").expect("the bench route parses");
    for route in &mut routes {
        route.processors.insert("sink".into(), sink.processor());
    }
    let ctx = CamelContext::new();
    ctx.add_routes(routes)
        .await
        .expect("the bench route compiles");
    ctx.start().await.expect("the bench route starts");
    let producer = ctx.producer("direct:start").expect("a direct producer");
    let done = sink.done.notified();
    let start = Instant::now();
    // Fed from a spawned task, not the runtime's main thread.
    tokio::spawn(async move {
        for s in input {
            if let Err(e) = producer.process(exchange(s)).await {
                panic!("exchange refused: {e}");
            }
        }
    })
    .await
    .expect("the feeder finishes");
    done.await;
    let elapsed = start.elapsed();
    ctx.stop().await;
    elapsed
}

/// The same work by hand: a bounded channel into one task that reorders and delivers.
async fn baseline(batch: bool, input: Vec<u64>) -> Duration {
    let sink = Sink::new(input.len() as u64);
    let (tx, mut rx) = mpsc::channel::<(u64, Exchange)>(1024);
    let deliver = sink.clone();
    let worker = tokio::spawn(async move {
        let mut next = 1u64;
        let mut held = BTreeMap::new();
        let mut batch_buf: Vec<(u64, Exchange)> = Vec::with_capacity(WINDOW as usize);
        while let Some((s, ex)) = rx.recv().await {
            if batch {
                batch_buf.push((s, ex));
                if batch_buf.len() == WINDOW as usize {
                    batch_buf.sort_by_key(|e| e.0);
                    batch_buf.drain(..).for_each(|(_, ex)| deliver.take(ex));
                }
                continue;
            }
            held.insert(s, ex);
            while let Some(ex) = held.remove(&next) {
                deliver.take(ex);
                next += 1;
            }
        }
    });
    let done = sink.done.notified();
    let start = Instant::now();
    tokio::spawn(async move {
        for s in input {
            if tx.send((s, exchange(s))).await.is_err() {
                panic!("baseline worker stopped");
            }
        }
    })
    .await
    .expect("the feeder finishes");
    done.await;
    let elapsed = start.elapsed();
    worker.await.expect("the worker finishes");
    elapsed
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let n = count_from_env("RESEQUENCER_EXCHANGES", 1_000_000) / WINDOW * WINDOW;
        for (mode, yaml) in [("stream", STREAM_YAML), ("batch", BATCH_YAML)] {
            let is_batch = mode == "batch";
            // Warm up both paths.
            ours(yaml, order(n / 10)).await;
            baseline(is_batch, order(n / 10)).await;

            let base = per_second(n, baseline(is_batch, order(n)).await);
            let ours = per_second(n, ours(yaml, order(n)).await);
            result_line(
                "resequencer",
                &[
                    ("mode", mode.to_string()),
                    ("messages", n.to_string()),
                    ("ours_per_s", format!("{ours:.0}")),
                    ("baseline_per_s", format!("{base:.0}")),
                    ("ratio", format!("{:.2}", ours / base)),
                    ("rss_kb", peak_rss_kb().to_string()),
                ],
            );
        }
    });
}
