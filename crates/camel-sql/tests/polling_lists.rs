//! The `sql:` consumer with `use_iterator=false` on every database: one exchange per
//! poll with the whole list, `on_consume` per row after it succeeded, empty polls routed
//! with `route_empty_result_set`, and `on_consume_batch_complete` after each poll.

mod common;

use std::sync::Arc;

use camel_api::{BoxProcessor, Exchange};
use common::*;
use serde_json::json;

fn routes(url: &str, t: &str) -> String {
    format!(
        r#"{run}
- route:
    id: lists
    from:
      uri: "sql:select id from {t} where done = 0 order by id"
      parameters:
        datasource: "{url}"
        delay: 10ms
        initialDelay: 0
        useIterator: false
        routeEmptyResultSet: true
        onConsume: "update {t} set done = 1 where id = :#id"
        onConsumeBatchComplete: "update {t} set polls = polls + 1 where id = 1"
      steps:
        - process: {{ ref: lists }}
"#,
        run = run_route(url)
    )
}

async fn exercise(url: &str, name: &str) {
    let t = table(&format!("sql_lists_{name}"));
    let (tx, mut lists) = tokio::sync::mpsc::unbounded_channel::<serde_json::Value>();
    let lists_step = BoxProcessor::sync(move |ex: Exchange| {
        let _ = tx.send(ex.message.body.to_json()?);
        Ok(ex)
    });
    let ctx = context(&routes(url, &t), |ctx| {
        ctx.add_resource("lists", Arc::new(lists_step))
    })
    .await;
    exec(&ctx, &format!("DROP TABLE IF EXISTS {t}")).await;
    exec(
        &ctx,
        &format!("CREATE TABLE {t} (id INTEGER PRIMARY KEY, done INTEGER NOT NULL, polls INTEGER NOT NULL)"),
    )
    .await;
    exec(
        &ctx,
        &format!("INSERT INTO {t} (id, done, polls) VALUES (1, 0, 0), (2, 0, 0), (3, 0, 0)"),
    )
    .await;

    // Polls before the rows existed routed empty lists (or failed on the missing table).
    let full = loop {
        let list = lists.recv().await.unwrap();
        if list != json!([]) {
            break list;
        }
    };
    assert_eq!(full, json!([{"id": 1}, {"id": 2}, {"id": 3}]));
    // The next poll finds every row marked: an empty list is routed.
    assert_eq!(lists.recv().await.unwrap(), json!([]));
    ctx.stop().await;

    let client = context(&run_route(url), |_| {}).await;
    let rows = exec(
        &client,
        &format!("select id, done, polls from {t} order by id"),
    )
    .await;
    let rows = body(&rows);
    assert_eq!(rows[0]["done"], json!(1));
    assert_eq!(rows[1]["done"], json!(1));
    assert_eq!(rows[2]["done"], json!(1));
    assert!(rows[0]["polls"].as_i64().unwrap() >= 2, "{rows}");
    exec(&client, &format!("DROP TABLE {t}")).await;
    client.stop().await;
}

test_on!(exercise: sqlite_file, postgres, mysql);
