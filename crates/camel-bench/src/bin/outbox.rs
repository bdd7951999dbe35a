//! Scenario `outbox`, on PostgreSQL (`CAMEL_TEST_PG_URL`), each case beside raw SQL doing
//! the same work in the same run:
//!
//! - `relay`, 1 and 8 partitions: the `outbox:` consumer drains a backlog into a no-op
//!   route (rows deleted once confirmed); `relay_async`, 8 partitions: the same into a
//!   route that waits once per exchange, so every delivery runs on its own task; the baseline is one task per partition looping
//!   `DELETE … WHERE (partition_no, id) IN (SELECT … ORDER BY id LIMIT n FOR UPDATE SKIP
//!   LOCKED) RETURNING …` (claim-and-delete) until the table is empty, with `n` the
//!   relay's own batch size (500 by default), so both make the same number of round trips.
//! - `publish`, 8 clients: each client runs single-message transactions through
//!   `Outbox::publish`; the baseline runs the same transactions with a hand-written INSERT.
//!
//! Counts: `OUTBOX_RELAY_ROWS` (default 100000), `OUTBOX_RELAY_RUNS` (default 3: the
//! relay cases print the median of that many alternating runs), `OUTBOX_PUBLISH_TX` per
//! client (default 1000).

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use camel_api::{
    BoxExpression, BoxPredicate, BoxProcessor, CamelError, Component, ComponentContext,
    ConsumerContext, EndpointUri,
};
use camel_bench::{count_from_env, median, per_second, result_line};
use camel_outbox::{Datasource, NewMessage, Outbox, OutboxComponent, OutboxConfig};
use sqlx::PgPool;
use tokio::sync::Notify;

const GROUPS: usize = 1000;

/// The component needs no expressions or resources here.
struct BenchContext;

impl ComponentContext for BenchContext {
    fn expression(&self, _: &str, _: &str) -> Result<BoxExpression, CamelError> {
        Err(CamelError::processor("no expressions in the bench"))
    }
    fn predicate(&self, _: &str, _: &str) -> Result<BoxPredicate, CamelError> {
        Err(CamelError::processor("no predicates in the bench"))
    }
    fn producer(&self, uri: &str) -> Result<BoxProcessor, CamelError> {
        Err(CamelError::processor(format!("no producer for {uri}")))
    }
    fn resource(&self, _: &str) -> Option<Arc<dyn Any + Send + Sync>> {
        None
    }
    fn route_id(&self) -> Option<&str> {
        Some("bench")
    }
}

fn name(case: &str) -> String {
    format!("bench_{case}_{}", std::process::id())
}

async fn drop_outbox(pool: &PgPool, table: &str) {
    for t in [
        table.to_string(),
        format!("{table}_dead"),
        format!("{table}_meta"),
    ] {
        let _ = sqlx::query(&format!("DROP TABLE IF EXISTS {t}"))
            .execute(pool)
            .await;
    }
}

/// Opens an outbox named `name` with `partitions` and fills it with `rows` messages.
async fn filled(
    ds: &Datasource,
    pool: &PgPool,
    name: &str,
    partitions: u32,
    rows: usize,
) -> Outbox {
    let mut config = OutboxConfig::new(name);
    config.partitions = partitions;
    let outbox = Outbox::open(ds.clone(), config).await.expect("open outbox");
    let mut published = 0;
    while published < rows {
        let n = (rows - published).min(10_000);
        let batch = (published..published + n)
            .map(|i| {
                NewMessage::bytes(vec![7u8; 64])
                    .group(format!("g{}", i % GROUPS))
                    .header("i", i)
            })
            .collect();
        let mut tx = pool.begin().await.expect("begin");
        outbox.publish_batch(&mut tx, batch).await.expect("publish");
        tx.commit().await.expect("commit");
        published += n;
    }
    let _ = sqlx::query(&format!("VACUUM ANALYZE {}", outbox.table()))
        .execute(pool)
        .await;
    outbox
}

async fn relay_ours(
    url: &str,
    ds: &Datasource,
    pool: &PgPool,
    partitions: u32,
    rows: usize,
    asynchronous: bool,
) -> f64 {
    let name = name(&format!("relay{partitions}"));
    let outbox = filled(ds, pool, &name, partitions, rows).await;
    let component = OutboxComponent::new();
    let uri = EndpointUri::parse(&format!("outbox:{name}"))
        .expect("uri")
        .with_parameters([
            ("datasource", url.to_string()),
            ("partitions", partitions.to_string()),
        ]);
    let consumer = component
        .endpoint(uri, &BenchContext)
        .expect("endpoint")
        .consumer()
        .expect("consumer");
    // The no-op route counts and signals the last exchange itself: waiting through
    // `ExchangeStats::wait_for` was measured to slow this loop several times over.
    let seen = Arc::new(AtomicUsize::new(0));
    let all_done = Arc::new(Notify::new());
    let count = {
        let (seen, all_done) = (seen.clone(), all_done.clone());
        move || {
            if seen.fetch_add(1, Ordering::Relaxed) + 1 == rows {
                all_done.notify_one();
            }
        }
    };
    let route = if asynchronous {
        // A route that waits once (as one calling a broker would): every delivery then
        // runs on its own task.
        BoxProcessor::from_fn(move |ex| {
            let count = count.clone();
            async move {
                tokio::task::yield_now().await;
                count();
                Ok(ex)
            }
        })
    } else {
        BoxProcessor::sync(move |ex| {
            count();
            Ok(ex)
        })
    };
    let ctx = ConsumerContext::for_pipeline("bench", route);
    let started = Instant::now();
    let running = tokio::spawn(consumer.run(ctx.clone()));
    all_done.notified().await;
    ctx.cancellation().cancel();
    running.await.expect("relay task").expect("relay");
    let elapsed = started.elapsed();
    let left: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM {}", outbox.table()))
        .fetch_one(pool)
        .await
        .expect("count");
    assert_eq!(left, 0, "every confirmed row deleted");
    drop_outbox(pool, outbox.table().as_str()).await;
    per_second(rows as u64, elapsed)
}

async fn relay_baseline(ds: &Datasource, pool: &PgPool, partitions: u32, rows: usize) -> f64 {
    let outbox = filled(
        ds,
        pool,
        &name(&format!("base{partitions}")),
        partitions,
        rows,
    )
    .await;
    let table = outbox.table().to_string();
    let started = Instant::now();
    let workers: Vec<_> = (0..partitions as i32)
        .map(|p| {
            let (pool, table) = (pool.clone(), table.clone());
            let batch = outbox.config().batch_size;
            tokio::spawn(async move {
                let sql = format!(
                    "DELETE FROM {table} WHERE (partition_no, id) IN (
                        SELECT partition_no, id FROM {table} WHERE partition_no = $1
                        ORDER BY id LIMIT {batch} FOR UPDATE SKIP LOCKED)
                     RETURNING id, group_key, headers::text, payload"
                );
                loop {
                    let claimed = sqlx::query(&sql)
                        .bind(p)
                        .fetch_all(&pool)
                        .await
                        .expect("claim");
                    if claimed.is_empty() {
                        break;
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.await.expect("worker");
    }
    let elapsed = started.elapsed();
    drop_outbox(pool, &table).await;
    per_second(rows as u64, elapsed)
}

async fn publish_ours(ds: &Datasource, pool: &PgPool, clients: usize, per_client: usize) -> f64 {
    let outbox = Outbox::open(ds.clone(), OutboxConfig::new(&name("pub")))
        .await
        .expect("open");
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (outbox, pool) = (outbox.clone(), pool.clone());
            tokio::spawn(async move {
                for i in 0..per_client {
                    let mut tx = pool.begin().await.expect("begin");
                    let m = NewMessage::bytes(vec![7u8; 64])
                        .group(format!("g{}", (c * per_client + i) % GROUPS));
                    outbox.publish(&mut tx, m).await.expect("publish");
                    tx.commit().await.expect("commit");
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("client");
    }
    let elapsed = started.elapsed();
    drop_outbox(pool, outbox.table().as_str()).await;
    per_second((clients * per_client) as u64, elapsed)
}

async fn publish_baseline(
    ds: &Datasource,
    pool: &PgPool,
    clients: usize,
    per_client: usize,
) -> f64 {
    let outbox = Outbox::open(ds.clone(), OutboxConfig::new(&name("pubbase")))
        .await
        .expect("open");
    let table = outbox.table().to_string();
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (pool, table) = (pool.clone(), table.clone());
            tokio::spawn(async move {
                let sql = format!(
                    "INSERT INTO {table} (partition_no, group_key, headers, payload, kind, created_at)
                     VALUES (0, $1, '{{}}', $2, 1, 0) RETURNING id"
                );
                for i in 0..per_client {
                    let mut tx = pool.begin().await.expect("begin");
                    let _: i64 = sqlx::query_scalar(&sql)
                        .bind(format!("g{}", (c * per_client + i) % GROUPS))
                        .bind(vec![7u8; 64])
                        .fetch_one(&mut *tx)
                        .await
                        .expect("insert");
                    tx.commit().await.expect("commit");
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("client");
    }
    let elapsed = started.elapsed();
    drop_outbox(pool, &table).await;
    per_second((clients * per_client) as u64, elapsed)
}

fn report(case: &str, key: (&str, String), ours: f64, baseline: f64) {
    result_line(
        "outbox",
        &[
            ("case", case.to_string()),
            key,
            ("ours_per_s", format!("{ours:.0}")),
            ("baseline_per_s", format!("{baseline:.0}")),
            ("ratio", format!("{:.2}", ours / baseline.max(1e-9))),
        ],
    );
}

#[tokio::main]
async fn main() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let ds = Datasource::connect(&url).expect("postgres URL");
    let Datasource::Postgres(pool) = ds.clone() else {
        eprintln!("CAMEL_TEST_PG_URL must be a postgres:// URL");
        return;
    };
    let rows = count_from_env("OUTBOX_RELAY_ROWS", 100_000) as usize;
    let runs = count_from_env("OUTBOX_RELAY_RUNS", 3).max(1);
    // `OUTBOX_ONLY=relay_async` (or `relay1`, `relay8`, `publish`) runs one case, and
    // `OUTBOX_SIDE=ours|baseline` one side of a relay case, once: for callgrind.
    let only = std::env::var("OUTBOX_ONLY").ok();
    let side = std::env::var("OUTBOX_SIDE").unwrap_or_default();
    for (case, partitions, asynchronous) in [
        ("relay", 1u32, false),
        ("relay", 8, false),
        ("relay_async", 8, true),
    ] {
        let name = if asynchronous {
            case.to_string()
        } else {
            format!("{case}{partitions}")
        };
        if only.as_ref().is_some_and(|o| *o != name) {
            continue;
        }
        if side == "ours" || side == "baseline" {
            let per_s = if side == "ours" {
                relay_ours(&url, &ds, &pool, partitions, rows, asynchronous).await
            } else {
                relay_baseline(&ds, &pool, partitions, rows).await
            };
            println!("{name} {side}: {per_s:.0}/s");
            continue;
        }
        // A relay run lasts under a second here: alternate the two, report the medians.
        let (mut baseline, mut ours) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            baseline.push(relay_baseline(&ds, &pool, partitions, rows).await);
            ours.push(relay_ours(&url, &ds, &pool, partitions, rows, asynchronous).await);
        }
        let (baseline, ours) = (median(baseline), median(ours));
        report(case, ("partitions", partitions.to_string()), ours, baseline);
    }
    if only.as_ref().is_some_and(|o| o != "publish") {
        return;
    }
    let per_client = count_from_env("OUTBOX_PUBLISH_TX", 1000) as usize;
    let baseline = publish_baseline(&ds, &pool, 8, per_client).await;
    let ours = publish_ours(&ds, &pool, 8, per_client).await;
    report("publish", ("clients", "8".to_string()), ours, baseline);
}
