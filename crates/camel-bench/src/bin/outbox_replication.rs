//! Scenario `outbox_replication`, on PostgreSQL (`CAMEL_TEST_PG_URL`, wal_level=logical):
//! the relay woken by logical replication (`logical_replication=true`) against the
//! polling relay (defaults: `poll_interval` 500 ms, no `NOTIFY`) in the same run.
//!
//! Messages are committed by another "process": plain `COMMIT`s on the pool, which wake
//! nothing in this one, as a publisher in another service would.
//!
//! - `latency`: one message every 20 ms (`OUTBOX_REPLICATION_MESSAGES`, default 300),
//!   each carrying the instant it was committed; p50/p99 from commit to the handler.
//! - `throughput`: `OUTBOX_REPLICATION_BULK` messages (default 20000, 64 groups) committed
//!   50 a transaction as fast as one connection can, while the relay drains: messages
//!   per second from the first commit to the last delivery, and how long the commits
//!   took (`commit_ms`): what is left after them is the relay catching up.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use camel_bench::{count_from_env, per_second, result_line, Latencies};
use camel_outbox::{Datasource, NewMessage, Outbox, OutboxConfig, Relay};
use tokio::sync::Notify;

struct Sink {
    start: Instant,
    latencies: Mutex<Latencies>,
    delivered: Mutex<u64>,
    all: Notify,
    expected: u64,
}

async fn run_case(
    ds: &Datasource,
    replication: bool,
    messages: u64,
    paced: bool,
) -> (Latencies, Duration, Duration) {
    let name = camel_bench::unique_name("orepl", '_');
    let mut config = OutboxConfig::new(&name);
    config.logical_replication = replication;
    config.partitions = 4;
    let outbox = Outbox::open(ds.clone(), config)
        .await
        .expect("open the outbox");
    let sink = Arc::new(Sink {
        start: Instant::now(),
        latencies: Mutex::new(Latencies::with_capacity(messages as usize)),
        delivered: Mutex::new(0),
        all: Notify::new(),
        expected: messages,
    });
    let handler_sink = sink.clone();
    let relay = Relay::new(outbox.clone(), move |m| {
        let sink = handler_sink.clone();
        async move {
            if let Ok(nanos) = std::str::from_utf8(&m.payload).unwrap_or("").parse::<u64>() {
                let committed = sink.start + Duration::from_nanos(nanos);
                sink.latencies
                    .lock()
                    .expect("lock")
                    .record(committed.elapsed());
            }
            let mut n = sink.delivered.lock().expect("lock");
            *n += 1;
            if *n == sink.expected {
                sink.all.notify_one();
            }
            Ok(())
        }
    })
    .spawn();
    // Let the relay start (and its replication stream attach) before timing anything.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let Datasource::Postgres(pool) = ds else {
        unreachable!("a PostgreSQL datasource")
    };
    let began = Instant::now();
    let per_tx = if paced { 1 } else { 50 };
    let mut i = 0u64;
    while i < messages {
        let mut tx = pool.begin().await.expect("begin");
        // The payload is the commit instant: stamped just before the commit.
        let stamp = sink.start.elapsed().as_nanos().to_string();
        let mut batch = Vec::new();
        for _ in 0..per_tx.min(messages - i) {
            batch.push(NewMessage::text(stamp.clone()).group(format!("g{}", i % 64)));
            i += 1;
        }
        outbox.publish_batch(&mut tx, batch).await.expect("publish");
        tx.commit().await.expect("commit");
        if paced {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let committed = began.elapsed();
    tokio::time::timeout(Duration::from_secs(120), sink.all.notified())
        .await
        .expect("every message delivered within 120 s");
    let elapsed = began.elapsed();
    relay.shutdown().await.expect("shutdown");
    let table = format!("camel_outbox_{name}");
    for statement in [
        format!("DROP PUBLICATION IF EXISTS {table}_wake"),
        format!("DROP TABLE IF EXISTS {table}, {table}_dead, {table}_meta"),
    ] {
        let _ = sqlx::query(&statement).execute(pool).await;
    }
    let latencies = std::mem::take(&mut *sink.latencies.lock().expect("lock"));
    (latencies, elapsed, committed)
}

#[tokio::main]
async fn main() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let ds = Datasource::connect(&url).expect("a PostgreSQL URL");
    let messages = count_from_env("OUTBOX_REPLICATION_MESSAGES", 300);
    let bulk = count_from_env("OUTBOX_REPLICATION_BULK", 20_000);
    for (kind, replication) in [("polling", false), ("replication", true)] {
        let (mut lat, _, _) = run_case(&ds, replication, messages, true).await;
        result_line(
            "outbox_replication",
            &[
                ("case", "latency".into()),
                ("relay", kind.into()),
                ("messages", messages.to_string()),
                ("p50_ms", format!("{:.1}", lat.percentile_us(50.0) / 1000.0)),
                ("p90_ms", format!("{:.1}", lat.percentile_us(90.0) / 1000.0)),
                ("p99_ms", format!("{:.1}", lat.percentile_us(99.0) / 1000.0)),
                (
                    "max_ms",
                    format!("{:.1}", lat.percentile_us(100.0) / 1000.0),
                ),
            ],
        );
    }
    for (kind, replication) in [("polling", false), ("replication", true)] {
        let (_, elapsed, committed) = run_case(&ds, replication, bulk, false).await;
        result_line(
            "outbox_replication",
            &[
                ("case", "throughput".into()),
                ("relay", kind.into()),
                ("messages", bulk.to_string()),
                ("msgs_per_s", format!("{:.0}", per_second(bulk, elapsed))),
                ("commit_ms", committed.as_millis().to_string()),
                ("total_ms", elapsed.as_millis().to_string()),
            ],
        );
    }
}
