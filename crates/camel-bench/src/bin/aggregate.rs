//! Scenario `aggregate`: 1,000,000 exchanges over 100 correlation keys aggregated into
//! groups of 100 (grouped body, completion size), in memory, against a hand-written loop
//! (a `HashMap` of vectors of bodies) doing the same grouping of the same `Exchange`s; and,
//! with `CAMEL_TEST_PG_URL`, the PostgreSQL repository against raw SQL doing the same
//! versioned read and upsert per exchange.
//!
//! ```text
//! cargo run --release -p camel-bench --bin aggregate
//! ```
//! `AGGREGATE_EXCHANGES` (default 1,000,000) and `AGGREGATE_PG_EXCHANGES` (default 20,000)
//! change the counts. `AGGREGATE_SIDE=ours|baseline` runs one in-memory pass of that side
//! only and prints no `RESULT` (for instruction counts under callgrind, see
//! `scripts/callgrind-aggregate.sh`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use camel_api::{Body, BoxProcessor, CamelError, Exchange, Expression, ShutdownReason, Value};
use camel_bench::{count_from_env, median, per_second, result_line};
use camel_eip::aggregate::{Aggregator, AggregatorOptions, AggregatorParts, SharedRepository};
use camel_eip::aggregation::builtin;
use camel_eip::state::StoreFactory;

const KEYS: u64 = 100;
const GROUP: usize = 100;

#[derive(Debug)]
struct KeyHeader;

impl Expression for KeyHeader {
    fn evaluate(&self, ex: &Exchange) -> Result<Value, CamelError> {
        Ok(ex.header("key").cloned().unwrap_or_default())
    }
}

fn exchange(i: u64) -> Exchange {
    Exchange::new(i.to_string()).with_header("key", format!("k{}", i % KEYS))
}

async fn ours(n: u64, repository: Option<SharedRepository>) -> (f64, u64) {
    let groups = Arc::new(AtomicU64::new(0));
    let counter = groups.clone();
    let steps = BoxProcessor::sync(move |ex: Exchange| {
        counter.fetch_add(1, Ordering::Relaxed);
        Ok(ex)
    });
    let agg = Aggregator::build(
        "bench",
        "aggregate",
        AggregatorOptions {
            completion_size: Some(GROUP),
            ..Default::default()
        },
        AggregatorParts {
            correlation: Arc::new(KeyHeader),
            strategy: builtin("grouped_body").expect("built-in"),
            completion_size: None,
            completion_timeout: None,
            completion_predicate: None,
            repository,
            steps,
            dead_letter: None,
        },
    );
    agg.lifecycle.start().await.expect("start");
    let started = Instant::now();
    for i in 0..n {
        agg.processor.process(exchange(i)).await.expect("aggregate");
    }
    let rate = per_second(n, started.elapsed());
    agg.lifecycle
        .shutdown(ShutdownReason::RouteStop)
        .await
        .expect("stop");
    (rate, groups.load(Ordering::Relaxed))
}

/// The same grouping by hand: bodies collected per key, a JSON array exchange emitted
/// with the aggregate's properties at 100.
fn baseline(n: u64) -> (f64, u64) {
    let mut open: HashMap<String, Vec<serde_json::Value>> = HashMap::new();
    let mut groups = 0u64;
    let started = Instant::now();
    for i in 0..n {
        let ex = exchange(i);
        let Some(key) = ex.header("key").and_then(Value::as_str).map(str::to_string) else {
            continue;
        };
        let items = open.entry(key.clone()).or_default();
        items.push(camel_eip::aggregation::body_json(&ex.message.body));
        if items.len() == GROUP {
            let items = std::mem::take(items);
            let mut out = ex;
            out.message.body = Body::from(serde_json::Value::Array(items));
            out.properties.insert("CamelAggregatedSize", GROUP as i64);
            out.properties.insert("CamelAggregatedCorrelationKey", key);
            std::hint::black_box(&out);
            groups += 1;
        }
    }
    (per_second(n, started.elapsed()), groups)
}

/// Raw SQL doing what the repository does per exchange: read the group's version and
/// exchange, append the body, write it back conditionally on the version.
async fn raw_sql(pool: &sqlx::PgPool, n: u64, name: &str) -> f64 {
    let started = Instant::now();
    for i in 0..n {
        let ex = exchange(i);
        let key = format!("k{}", i % KEYS);
        let row: Option<(i64, String)> = sqlx::query_as(
            "SELECT version, exchange FROM camel_aggregation
             WHERE repository = $1 AND completion_id = '' AND correlation_key = $2",
        )
        .bind(name)
        .bind(&key)
        .fetch_optional(pool)
        .await
        .expect("select");
        let body = camel_eip::aggregation::body_json(&ex.message.body);
        let (items, version) = match row {
            Some((v, text)) => {
                let mut doc: serde_json::Value = serde_json::from_str(&text).expect("json");
                if let Some(a) = doc["body"]["json"].as_array_mut() {
                    a.push(body);
                }
                (doc, Some(v))
            }
            None => (serde_json::json!({"body": {"json": [body]}}), None),
        };
        let size = items["body"]["json"].as_array().map_or(0, Vec::len);
        let text = items.to_string();
        if size == GROUP {
            sqlx::query(
                "UPDATE camel_aggregation SET completion_id = $1, exchange = $2, version = version + 1
                 WHERE repository = $3 AND completion_id = '' AND correlation_key = $4 AND version = $5",
            )
            .bind(format!("c{i}"))
            .bind(&text)
            .bind(name)
            .bind(&key)
            .bind(version.unwrap_or(0))
            .execute(pool)
            .await
            .expect("complete");
            sqlx::query(
                "DELETE FROM camel_aggregation WHERE repository = $1 AND completion_id = $2",
            )
            .bind(name)
            .bind(format!("c{i}"))
            .execute(pool)
            .await
            .expect("confirm");
            continue;
        }
        match version {
            None => sqlx::query(
                "INSERT INTO camel_aggregation (repository, completion_id, correlation_key, version, exchange, updated_at)
                 VALUES ($1, '', $2, 1, $3, 0) ON CONFLICT DO NOTHING",
            )
            .bind(name)
            .bind(&key)
            .bind(&text)
            .execute(pool)
            .await
            .expect("insert"),
            Some(v) => sqlx::query(
                "UPDATE camel_aggregation SET exchange = $1, version = version + 1
                 WHERE repository = $2 AND completion_id = '' AND correlation_key = $3 AND version = $4",
            )
            .bind(&text)
            .bind(name)
            .bind(&key)
            .bind(v)
            .execute(pool)
            .await
            .expect("update"),
        };
    }
    per_second(n, started.elapsed())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let n = count_from_env("AGGREGATE_EXCHANGES", 1_000_000);
    match std::env::var("AGGREGATE_SIDE").as_deref() {
        Ok("ours") => {
            let (rate, groups) = ours(n, None).await;
            println!("ours {rate:.0}/s, {groups} groups");
            return;
        }
        Ok("baseline") => {
            let (rate, groups) = baseline(n);
            println!("baseline {rate:.0}/s, {groups} groups");
            return;
        }
        Ok(other) => panic!("AGGREGATE_SIDE is `ours` or `baseline`, not `{other}`"),
        Err(_) => {}
    }
    let mut ratios = Vec::new();
    for run in 0..3 {
        let (base, base_groups) = baseline(n);
        let (mine, groups) = ours(n, None).await;
        assert_eq!(groups, base_groups, "both emit every group");
        ratios.push(mine / base);
        println!("run {run}: ours {mine:.0}/s, baseline {base:.0}/s");
    }
    result_line(
        "aggregate_memory",
        &[
            ("exchanges", n.to_string()),
            ("group", GROUP.to_string()),
            ("ratio", format!("{:.2}", median(ratios))),
        ],
    );

    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let n = count_from_env("AGGREGATE_PG_EXCHANGES", 20_000);
    let stores = camel_state::StateStores::default();
    let pool = sqlx::PgPool::connect(&url).await.expect("connect");
    let mut ratios = Vec::new();
    for run in 0..3 {
        let name = format!("bench-{}-{run}", std::process::id());
        let repo = stores.aggregation(&url, &name).expect("repository");
        let (mine, _) = ours(n, Some(repo)).await;
        let base = raw_sql(&pool, n, &format!("{name}-raw")).await;
        ratios.push(mine / base);
        println!("run {run}: ours {mine:.0}/s, raw SQL {base:.0}/s");
        for r in [name.clone(), format!("{name}-raw")] {
            sqlx::query("DELETE FROM camel_aggregation WHERE repository = $1")
                .bind(r)
                .execute(&pool)
                .await
                .expect("clean up");
        }
    }
    result_line(
        "aggregate_postgres",
        &[
            ("exchanges", n.to_string()),
            ("group", GROUP.to_string()),
            ("ratio", format!("{:.2}", median(ratios))),
        ],
    );
}
