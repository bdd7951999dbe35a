//! Scenario `sinks`: the batching sink at saturation, against baselines in the same run.
//!
//! - `memory_saturation`: many callers deliver through `SinkProducer` to an in-process
//!   destination that answers at once; the baseline is a hand-written tokio loop that
//!   collects up to `max_entries` callers from a channel and answers them (the least a
//!   batcher must do). Reports entries/s, requests per entry against the ideal
//!   `1/max_entries`, and the overhead per entry.
//! - `nats_jetstream`: the NATS sink (pipelined publishes, acks awaited together)
//!   against one JetStream publish-and-ack per exchange, same callers, same server.
//!
//! Counts: `SINKS_ENTRIES` (default 400000), `SINKS_NATS_ENTRIES` (default 40000).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_nats::jetstream;
use camel_api::{CamelError, Exchange};
use camel_bench::{count_from_env, peak_rss_kb, per_second, result_line};
use camel_sinks::nats::NatsCodec;
use camel_sinks::{
    BatchCodec, BatchConfig, BatchIdentity, BatcherRegistry, Entry, EntryMeta, Limits, Receipt,
    SendOutcome, SinkOptions, SinkProducer,
};
use futures::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

const CALLERS: u64 = 256;
const MAX_ENTRIES: usize = 10;

/// Requests and entries a destination saw.
#[derive(Debug, Default)]
struct Counts {
    requests: AtomicU64,
    entries: AtomicU64,
}

/// A destination that answers every entry at once and counts requests.
#[derive(Debug, Clone, Default)]
struct Counting(Arc<Counts>);

impl BatchCodec for Counting {
    fn name(&self) -> &'static str {
        "counting"
    }
    fn destination(&self) -> String {
        "bench".into()
    }
    fn identity(&self, identity: &mut BatchIdentity) {
        identity.part("bench", "counting");
    }
    fn limits(&self) -> Limits {
        Limits {
            max_entries: MAX_ENTRIES,
            max_request_bytes: 1 << 20,
            max_entry_bytes: 1 << 20,
        }
    }
    fn encode(&self, exchange: &Exchange, meta: EntryMeta) -> Result<Entry, CamelError> {
        Ok(Entry::new(
            exchange.message.body.to_bytes(),
            Vec::new(),
            meta,
        ))
    }
    fn send_batch<'a>(&'a self, entries: &'a [Entry]) -> BoxFuture<'a, SendOutcome> {
        self.0.requests.fetch_add(1, Ordering::Relaxed);
        self.0
            .entries
            .fetch_add(entries.len() as u64, Ordering::Relaxed);
        Box::pin(async move { SendOutcome::Answered(vec![Ok(Receipt::default()); entries.len()]) })
    }
}

/// Runs `per_caller` deliveries on each of `CALLERS` tasks; returns the elapsed time.
async fn drive<F, Fut>(per_caller: u64, call: F) -> Duration
where
    F: Fn(u64) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Result<(), CamelError>> + Send,
{
    let start = Instant::now();
    let tasks: Vec<_> = (0..CALLERS)
        .map(|c| {
            let call = call.clone();
            tokio::spawn(async move {
                for i in 0..per_caller {
                    if let Err(e) = call(c * per_caller + i).await {
                        eprintln!("delivery failed: {e}");
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        let _ = t.await;
    }
    start.elapsed()
}

async fn memory_saturation(total: u64) {
    let per_caller = total / CALLERS;
    let n = per_caller * CALLERS;
    let counting = Counting::default();
    let config = BatchConfig {
        linger: Duration::from_millis(1),
        ..BatchConfig::default()
    };
    let producer = SinkProducer::new(
        counting.clone(),
        config,
        SinkOptions::default(),
        BatcherRegistry::new(),
    );
    let ours = drive(per_caller, move |_| {
        let p = producer.clone();
        async move { p.deliver(&Exchange::new("payload-of-a-message")).await }
    })
    .await;

    // Baseline: the bare minimum of a batcher, a channel and a loop.
    let (tx, mut rx) = mpsc::channel::<(Entry, oneshot::Sender<Result<(), CamelError>>)>(4096);
    let destination = Counting::default();
    let codec = destination.clone();
    let worker = tokio::spawn(async move {
        let mut batch = Vec::with_capacity(MAX_ENTRIES);
        while rx.recv_many(&mut batch, MAX_ENTRIES).await > 0 {
            let (entries, replies): (Vec<_>, Vec<_>) =
                std::mem::take(&mut batch).into_iter().unzip();
            if let SendOutcome::Answered(results) = codec.send_batch(&entries).await {
                for (r, reply) in results.into_iter().zip(replies) {
                    let _ = reply.send(r.map(drop));
                }
            }
        }
    });
    let encoder = Counting::default();
    let base = drive(per_caller, move |i| {
        let (tx, encoder) = (tx.clone(), encoder.clone());
        async move {
            let meta = EntryMeta {
                group: None,
                idempotency_key: i.to_string().into(),
            };
            let entry = encoder.encode(&Exchange::new("payload-of-a-message"), meta)?;
            let (reply, answer) = oneshot::channel();
            tx.send((entry, reply))
                .await
                .map_err(|_| CamelError::processor("closed"))?;
            answer.await.map_err(|_| CamelError::processor("dropped"))?
        }
    })
    .await;
    worker.abort();

    let ours_per_s = per_second(n, ours);
    let base_per_s = per_second(n, base);
    let requests = counting.0.requests.load(Ordering::Relaxed) as f64;
    let overhead_ns = ours.as_nanos() as f64 / n as f64 - base.as_nanos() as f64 / n as f64;
    result_line(
        "sinks",
        &[
            ("case", "memory_saturation".into()),
            ("entries", n.to_string()),
            ("ours_per_s", format!("{ours_per_s:.0}")),
            ("baseline_per_s", format!("{base_per_s:.0}")),
            ("ratio", format!("{:.2}", ours_per_s / base_per_s)),
            ("requests_per_entry", format!("{:.4}", requests / n as f64)),
            (
                "ideal_requests_per_entry",
                format!("{:.4}", 1.0 / MAX_ENTRIES as f64),
            ),
            (
                "baseline_requests_per_entry",
                format!(
                    "{:.4}",
                    destination.0.requests.load(Ordering::Relaxed) as f64 / n as f64
                ),
            ),
            (
                "ns_per_entry",
                format!("{:.0}", ours.as_nanos() as f64 / n as f64),
            ),
            ("overhead_ns_per_entry", format!("{overhead_ns:.0}")),
        ],
    );
}

async fn nats_jetstream(total: u64) -> Result<(), Box<dyn std::error::Error>> {
    let url =
        std::env::var("CAMEL_TEST_NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".into());
    let client = match async_nats::connect(&url).await {
        Ok(c) => c,
        Err(e) => {
            println!("skipped case nats_jetstream: no NATS at {url}: {e}");
            return Ok(());
        }
    };
    let js = jetstream::new(client);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH)?.as_nanos();
    let name = format!("CAMEL_BENCH_SINKS_{nanos}");
    let subject = format!("camel.bench.sinks.{nanos}");
    js.create_stream(jetstream::stream::Config {
        name: name.clone(),
        subjects: vec![subject.clone()],
        storage: jetstream::stream::StorageType::Memory,
        ..Default::default()
    })
    .await?;
    let per_caller = total / CALLERS;
    let n = per_caller * CALLERS;

    let config = BatchConfig {
        linger: Duration::from_millis(1),
        ..BatchConfig::default()
    };
    let producer = SinkProducer::new(
        NatsCodec::new(&subject, &url, true),
        config,
        SinkOptions::default(),
        BatcherRegistry::new(),
    );
    let ours = drive(per_caller, move |_| {
        let p = producer.clone();
        async move { p.deliver(&Exchange::new("payload-of-a-message")).await }
    })
    .await;

    let js2 = js.clone();
    let subject2 = subject.clone();
    let base = drive(per_caller, move |i| {
        let (js, subject) = (js2.clone(), subject2.clone());
        async move {
            let publish = jetstream::context::Publish::build()
                .payload("payload-of-a-message".into())
                .message_id(format!("b{i}"));
            let ack = js
                .send_publish(subject, publish)
                .await
                .map_err(|e| CamelError::external("publish", e))?;
            ack.await
                .map(|_| ())
                .map_err(|e| CamelError::external("ack", e))
        }
    })
    .await;
    js.delete_stream(&name).await?;

    let ours_per_s = per_second(n, ours);
    let base_per_s = per_second(n, base);
    result_line(
        "sinks",
        &[
            ("case", "nats_jetstream".into()),
            ("entries", n.to_string()),
            ("ours_per_s", format!("{ours_per_s:.0}")),
            ("baseline_per_s", format!("{base_per_s:.0}")),
            ("ratio", format!("{:.2}", ours_per_s / base_per_s)),
        ],
    );
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Fed from spawned tasks, never from the main thread (see DESIGN.md's pitfalls).
    let entries = count_from_env("SINKS_ENTRIES", 400_000);
    tokio::spawn(memory_saturation(entries)).await?;
    let nats = count_from_env("SINKS_NATS_ENTRIES", 40_000);
    tokio::spawn(async move { nats_jetstream(nats).await.map_err(|e| e.to_string()) }).await??;
    println!("peak_rss_kb={}", peak_rss_kb());
    Ok(())
}
