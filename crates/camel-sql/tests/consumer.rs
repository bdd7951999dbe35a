//! The `sql:` consumer on a SQLite file: rows are polled, handed to the route one by
//! one, marked by `on_consume` only after the route succeeded; a failing row stays for
//! the next poll and `on_consume_failed` records the failure.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use camel_api::{BoxProcessor, CamelError, Exchange};
use common::*;
use serde_json::json;

fn routes(url: &str, t: &str) -> String {
    format!(
        r#"{run}
- route:
    id: poll
    from:
      uri: "sql:select id, name from {t} where done = 0 order by id"
      parameters:
        datasource: "{url}"
        delay: 10ms
        initial_delay: 0
        max_messages_per_poll: 10
        on_consume: "update {t} set done = 1 where id = :#id"
        on_consume_failed: "update {t} set failures = failures + 1 where id = :#id"
      steps:
        - process: {{ ref: work }}
"#,
        run = run_route(url)
    )
}

#[tokio::test]
async fn rows_are_marked_only_after_the_route_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("jobs.db").display());
    let t = "jobs";
    let pool = sqlx::SqlitePool::connect(&format!("{url}?mode=rwc"))
        .await
        .unwrap();
    sqlx::query(&format!(
        "CREATE TABLE {t} (id INTEGER PRIMARY KEY, name TEXT, done INTEGER NOT NULL DEFAULT 0, \
         failures INTEGER NOT NULL DEFAULT 0)"
    ))
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query(&format!(
        "INSERT INTO {t} (id, name) VALUES (1, 'a'), (2, 'flaky'), (3, 'c')"
    ))
    .execute(&pool)
    .await
    .unwrap();

    // Each exchange reports its row's id and the table as the route sees it.
    let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel::<(i64, Vec<(i64, i64, i64)>)>();
    let failed_once = Arc::new(AtomicBool::new(false));
    let work = {
        let pool = pool.clone();
        BoxProcessor::from_fn(move |ex: Exchange| {
            let pool = pool.clone();
            let seen_tx = seen_tx.clone();
            let failed_once = failed_once.clone();
            async move {
                let id = ex.message.body.to_json()?["id"].as_i64().unwrap_or(-1);
                let table: Vec<(i64, i64, i64)> =
                    sqlx::query_as("SELECT id, done, failures FROM jobs ORDER BY id")
                        .fetch_all(&pool)
                        .await
                        .map_err(|e| CamelError::external("snapshot", e))?;
                let _ = seen_tx.send((id, table));
                if id == 2 && !failed_once.swap(true, Ordering::SeqCst) {
                    return Err(CamelError::processor("flaky row fails once"));
                }
                Ok(ex)
            }
        })
    };
    let ctx = context(&routes(&url, t), |ctx| {
        ctx.add_resource("work", Arc::new(work))
    })
    .await;

    let (id, table) = seen.recv().await.unwrap();
    assert_eq!(
        (id, table),
        (1, vec![(1, 0, 0), (2, 0, 0), (3, 0, 0)]),
        "nothing marked before the route ran"
    );
    let (id, table) = seen.recv().await.unwrap();
    assert_eq!(
        (id, table),
        (2, vec![(1, 1, 0), (2, 0, 0), (3, 0, 0)]),
        "row 1 marked after its success"
    );
    let (id, table) = seen.recv().await.unwrap();
    assert_eq!(
        (id, table),
        (3, vec![(1, 1, 0), (2, 0, 1), (3, 0, 0)]),
        "on_consume_failed ran, row 2 left"
    );
    let (id, table) = seen.recv().await.unwrap();
    assert_eq!(
        (id, table),
        (2, vec![(1, 1, 0), (2, 0, 1), (3, 1, 0)]),
        "row 2 polled again"
    );
    ctx.stop().await;

    let table: Vec<(i64, i64, i64)> =
        sqlx::query_as("SELECT id, done, failures FROM jobs ORDER BY id")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(table, vec![(1, 1, 0), (2, 1, 1), (3, 1, 0)]);
    assert!(
        seen.try_recv().is_err(),
        "no row routed twice after success"
    );
    let _ = json!(null);
}

/// Two partitions of one poll (as a partitioned route runs them on two processes): each
/// row goes to the partition its `partition_key` hashes to, none to both.
#[tokio::test]
async fn partitions_split_the_rows_by_the_key_column() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("parts.db").display());
    let pool = sqlx::SqlitePool::connect(&format!("{url}?mode=rwc"))
        .await
        .unwrap();
    sqlx::query("CREATE TABLE parts (id INTEGER PRIMARY KEY, done INTEGER NOT NULL DEFAULT 0)")
        .execute(&pool)
        .await
        .unwrap();
    for id in 1..=40 {
        sqlx::query("INSERT INTO parts (id) VALUES (?)")
            .bind(id)
            .execute(&pool)
            .await
            .unwrap();
    }
    let route = |k: u32| {
        format!(
            r#"
- route:
    id: part{k}
    from:
      uri: "sql:select id from parts where done = 0 order by id"
      parameters:
        datasource: "{url}"
        delay: 10ms
        initial_delay: 0
        on_consume: "update parts set done = 1 where id = :#id"
        partition_key: id
        partition: {k}
        partitions: 2
      steps:
        - process: {{ ref: seen{k} }}
"#
        )
    };
    let (tx, mut seen) = tokio::sync::mpsc::unbounded_channel::<(u32, i64)>();
    let recorder = |k: u32| {
        let tx = tx.clone();
        BoxProcessor::from_fn(move |ex: Exchange| {
            let tx = tx.clone();
            async move {
                let id = ex.message.body.to_json()?["id"].as_i64().unwrap_or(-1);
                let _ = tx.send((k, id));
                Ok(ex)
            }
        })
    };
    let yaml = format!("{}{}{}", run_route(&url), route(0), route(1));
    let ctx = context(&yaml, |ctx| {
        ctx.add_resource("seen0", Arc::new(recorder(0)));
        ctx.add_resource("seen1", Arc::new(recorder(1)));
    })
    .await;
    let mut by_id = std::collections::BTreeMap::new();
    while by_id.len() < 40 {
        let (k, id) = tokio::time::timeout(std::time::Duration::from_secs(10), seen.recv())
            .await
            .expect("every row routed within 10 s")
            .unwrap();
        assert!(by_id.insert(id, k).is_none(), "row {id} routed twice");
        assert_eq!(
            k,
            camel_cluster::partition_of(&id.to_string(), 2),
            "row {id}"
        );
    }
    ctx.stop().await;
    assert!(by_id.values().any(|k| *k == 0) && by_id.values().any(|k| *k == 1));
    // A partition without its key column is refused at load.
    let bad = camel_core::yaml::load_str(
        &format!(
            "- route:\n    from:\n      uri: \"sql:select 1?datasource={url}&partition=0&partitions=2\"\n      steps: [{{log: x}}]\n"
        ),
        "bad.yaml",
    )
    .unwrap();
    let ctx = camel_core::CamelContext::new();
    ctx.add_component(Arc::new(camel_sql::SqlComponent::new()));
    let e = ctx.add_routes(bad).await.expect_err("refused");
    assert!(e.to_string().contains("partition_key"), "{e}");
}
