//! Scenario `outbox_replication`, on PostgreSQL (`CAMEL_TEST_PG_URL`, wal_level=logical):
//! the relay woken by logical replication (`logical_replication=true`) against the
//! polling relay (defaults: `poll_interval` 500 ms, no `NOTIFY`) in the same run.
//!
//! Messages are committed by other "processes": plain `COMMIT`s on connections of their
//! own, which wake nothing in this one, as a publisher in another service would.
//!
//! - `latency`: one message every 20 ms (`OUTBOX_REPLICATION_MESSAGES`, default 300),
//!   each carrying the instant it was committed; p50/p99 from commit to the handler.
//! - `throughput`: `OUTBOX_REPLICATION_BULK` messages (default 20000, 64 groups) committed
//!   50 a transaction as fast as one connection can, while the relay drains: messages
//!   per second from the first commit to the last delivery, and how long the commits
//!   took (`commit_ms`): what is left after them is the relay catching up.
//! - `publishers`: the same number of messages committed by `OUTBOX_REPLICATION_PUBLISHERS`
//!   publishers at once (default 4), each on its own connection with 16 groups of its
//!   own, 50 a transaction, while the relay drains.
//! - `backlog`: the same publishers commit everything first; then the relay starts and
//!   drains it (`drain_ms`: from the relay's start to the last delivery). Rows committed
//!   before a relay starts are not in its stream (its slot is made at start): both relays
//!   drain them by reading, so this case measures the read path alone.
//!
//! Every case checks each group's order: the payload carries the message's number within
//! its group, and a message that does not come right after the group's previous one is
//! an order violation (printed, and counted in `order_violations`, which must be 0).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use camel_bench::{count_from_env, per_second, result_line, Latencies};
use camel_outbox::{Datasource, NewMessage, Outbox, OutboxConfig, Relay, StoredMessage};
use sqlx::PgPool;
use tokio::sync::Notify;

/// How many violations are printed in full (all are counted).
const PRINTED_VIOLATIONS: usize = 10;

/// What the handler records.
struct Sink {
    start: Instant,
    latencies: Mutex<Latencies>,
    delivered: Mutex<u64>,
    /// Per group: the number the next message must carry.
    next_in_group: Mutex<HashMap<String, u64>>,
    violations: Mutex<Vec<String>>,
    all: Notify,
    expected: u64,
}

impl Sink {
    fn new(expected: u64) -> Self {
        Sink {
            start: Instant::now(),
            latencies: Mutex::new(Latencies::with_capacity(expected as usize)),
            delivered: Mutex::new(0),
            next_in_group: Mutex::new(HashMap::new()),
            violations: Mutex::new(Vec::new()),
            all: Notify::new(),
            expected,
        }
    }

    /// The payload is `<commit instant in ns since start> <number within the group>`.
    fn payload(&self, seq: u64) -> String {
        format!("{} {seq}", self.start.elapsed().as_nanos())
    }

    fn deliver(&self, m: &StoredMessage) {
        let text = std::str::from_utf8(&m.payload).unwrap_or("");
        let mut fields = text.split(' ').map(str::parse::<u64>);
        if let Some(Ok(nanos)) = fields.next() {
            let committed = self.start + Duration::from_nanos(nanos);
            self.latencies
                .lock()
                .expect("lock")
                .record(committed.elapsed());
        }
        let group = m.group_key.clone().unwrap_or_default();
        match fields.next() {
            Some(Ok(seq)) => {
                let mut next = self.next_in_group.lock().expect("lock");
                let expected = next.entry(group.clone()).or_insert(0);
                if seq != *expected {
                    self.violations.lock().expect("lock").push(format!(
                        "group {group}: message {seq} (id {}) delivered where {expected} was due",
                        m.id
                    ));
                }
                *expected = (*expected).max(seq + 1);
            }
            _ => self
                .violations
                .lock()
                .expect("lock")
                .push(format!("id {}: payload without a number: {text:?}", m.id)),
        }
        let mut n = self.delivered.lock().expect("lock");
        *n += 1;
        if *n == self.expected {
            self.all.notify_one();
        }
    }
}

/// How a case commits its messages.
#[derive(Clone, Copy)]
struct Load {
    messages: u64,
    publishers: u64,
    groups_per_publisher: u64,
    per_tx: u64,
    /// One message every 20 ms instead of as fast as possible.
    paced: bool,
    /// Everything is committed before the relay starts.
    backlog: bool,
}

/// What a case measured.
struct Measured {
    latencies: Latencies,
    /// From the first commit to the last delivery.
    total: Duration,
    /// From the first commit to the last commit.
    committed: Duration,
    /// From the relay's start (backlog) or the last commit (otherwise) to the last
    /// delivery.
    drain: Duration,
    violations: Vec<String>,
}

/// Publisher `who` commits its share of the messages on a connection of its own.
async fn publish(pool: PgPool, outbox: Outbox, sink: Arc<Sink>, who: u64, load: Load) {
    let mine = load.messages / load.publishers + u64::from(who < load.messages % load.publishers);
    let mut conn = pool.acquire().await.expect("a connection");
    let mut i = 0u64;
    while i < mine {
        let mut tx = sqlx::Connection::begin(&mut *conn).await.expect("begin");
        let mut batch = Vec::new();
        for _ in 0..load.per_tx.min(mine - i) {
            let group = format!("p{who}g{}", i % load.groups_per_publisher);
            // Stamped just before the commit.
            let payload = sink.payload(i / load.groups_per_publisher);
            batch.push(NewMessage::text(payload).group(group));
            i += 1;
        }
        outbox.publish_batch(&mut tx, batch).await.expect("publish");
        tx.commit().await.expect("commit");
        if load.paced {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn publish_all(pool: &PgPool, outbox: &Outbox, sink: &Arc<Sink>, load: Load) {
    let publishers: Vec<_> = (0..load.publishers)
        .map(|who| {
            tokio::spawn(publish(
                pool.clone(),
                outbox.clone(),
                sink.clone(),
                who,
                load,
            ))
        })
        .collect();
    for p in publishers {
        p.await.expect("a publisher");
    }
}

async fn run_case(ds: &Datasource, replication: bool, load: Load) -> Measured {
    let Datasource::Postgres(pool) = ds else {
        unreachable!("a PostgreSQL datasource")
    };
    let name = camel_bench::unique_name("orepl", '_');
    let mut config = OutboxConfig::new(&name);
    config.logical_replication = replication;
    config.partitions = 4;
    let outbox = Outbox::open(ds.clone(), config)
        .await
        .expect("open the outbox");
    let sink = Arc::new(Sink::new(load.messages));
    let began = Instant::now();
    if load.backlog {
        publish_all(pool, &outbox, &sink, load).await;
    }
    let committed = began.elapsed();
    let handler_sink = sink.clone();
    let relay_started = Instant::now();
    let relay = Relay::new(outbox.clone(), move |m| {
        handler_sink.deliver(&m);
        async { Ok(()) }
    })
    .spawn();
    let (began, committed) = if load.backlog {
        (began, committed)
    } else {
        // Let the relay start (and its replication stream attach) before timing anything.
        tokio::time::sleep(Duration::from_secs(1)).await;
        let began = Instant::now();
        publish_all(pool, &outbox, &sink, load).await;
        (began, began.elapsed())
    };
    let last_commit = Instant::now();
    tokio::time::timeout(Duration::from_secs(300), sink.all.notified())
        .await
        .expect("every message delivered within 300 s");
    let drain = if load.backlog {
        relay_started.elapsed()
    } else {
        last_commit.elapsed()
    };
    let total = began.elapsed();
    relay.shutdown().await.expect("shutdown");
    let table = format!("camel_outbox_{name}");
    for statement in [
        format!("DROP PUBLICATION IF EXISTS {table}_wake"),
        format!("DROP TABLE IF EXISTS {table}, {table}_dead, {table}_meta"),
    ] {
        let _ = sqlx::query(&statement).execute(pool).await;
    }
    let latencies = std::mem::take(&mut *sink.latencies.lock().expect("lock"));
    let violations = std::mem::take(&mut *sink.violations.lock().expect("lock"));
    Measured {
        latencies,
        total,
        committed,
        drain,
        violations,
    }
}

fn report_violations(case: &str, relay: &str, violations: &[String]) {
    for v in violations.iter().take(PRINTED_VIOLATIONS) {
        eprintln!("ORDER VIOLATION case={case} relay={relay}: {v}");
    }
    if violations.len() > PRINTED_VIOLATIONS {
        eprintln!(
            "… and {} more order violations",
            violations.len() - PRINTED_VIOLATIONS
        );
    }
}

fn ms(d: Duration) -> String {
    d.as_millis().to_string()
}

#[tokio::main]
async fn main() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let ds = Datasource::connect(&url).expect("a PostgreSQL URL");
    let messages = count_from_env("OUTBOX_REPLICATION_MESSAGES", 300);
    let bulk = count_from_env("OUTBOX_REPLICATION_BULK", 20_000);
    let publishers = count_from_env("OUTBOX_REPLICATION_PUBLISHERS", 4).max(1);
    let relays = [("polling", false), ("replication", true)];
    let mut violations = 0;
    for (kind, replication) in relays {
        let load = Load {
            messages,
            publishers: 1,
            groups_per_publisher: 64,
            per_tx: 1,
            paced: true,
            backlog: false,
        };
        let mut m = run_case(&ds, replication, load).await;
        report_violations("latency", kind, &m.violations);
        violations += m.violations.len();
        let lat = &mut m.latencies;
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
                ("order_violations", m.violations.len().to_string()),
            ],
        );
    }
    let bulk_cases = [
        ("throughput", 1, 64, false),
        ("publishers", publishers, 16, false),
        ("backlog", publishers, 16, true),
    ];
    for (case, publishers, groups_per_publisher, backlog) in bulk_cases {
        for (kind, replication) in relays {
            let load = Load {
                messages: bulk,
                publishers,
                groups_per_publisher,
                per_tx: 50,
                paced: false,
                backlog,
            };
            let m = run_case(&ds, replication, load).await;
            report_violations(case, kind, &m.violations);
            violations += m.violations.len();
            let rate = if backlog {
                per_second(bulk, m.drain)
            } else {
                per_second(bulk, m.total)
            };
            result_line(
                "outbox_replication",
                &[
                    ("case", case.into()),
                    ("relay", kind.into()),
                    ("messages", bulk.to_string()),
                    ("publishers", publishers.to_string()),
                    ("msgs_per_s", format!("{rate:.0}")),
                    ("commit_ms", ms(m.committed)),
                    ("drain_ms", ms(m.drain)),
                    ("total_ms", ms(m.total)),
                    ("order_violations", m.violations.len().to_string()),
                ],
            );
        }
    }
    if violations > 0 {
        eprintln!("{violations} order violations");
        std::process::exit(1);
    }
}
