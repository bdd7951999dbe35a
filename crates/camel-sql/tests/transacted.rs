//! `sql:` and `outbox:` in one `transacted` step: the row and the message commit
//! together, or both roll back when a later step fails. On a SQLite file, and on
//! PostgreSQL with `CAMEL_TEST_PG_URL`.

mod common;

use std::sync::Arc;

use camel_api::{BoxProcessor, CamelError, Exchange};
use camel_outbox::admin::OutboxAdmin;
use camel_outbox::{Datasource, OutboxComponent, OutboxConfig, OutboxError};
use common::*;
use serde_json::json;

fn routes(url: &str, t: &str, outbox: &str) -> String {
    format!(
        r#"{run}
- route:
    id: place
    from:
      uri: direct:place
      steps:
        - transacted:
            datasource: "{url}"
            steps:
              - to:
                  uri: "sql:insert into {t} (id, note) values (:#id, :#note)"
                  parameters: {{ datasource: "{url}" }}
              - to:
                  uri: outbox:{outbox}
                  parameters: {{ datasource: "{url}", group_key: "${{header.id}}" }}
              - to:
                  uri: "sql:select count(*) as n from {t}"
                  parameters: {{ datasource: "{url}", output_type: SelectOne, output_header: seen }}
              - filter:
                  simple: "${{header.fail}} == 'yes'"
                  steps:
                    - process: {{ ref: boom }}
"#,
        run = run_route(url)
    )
}

async fn pending(url: &str, outbox: &str) -> u64 {
    let ds = Datasource::connect(url).unwrap();
    let admin = OutboxAdmin::from_config(ds, &OutboxConfig::new(outbox)).unwrap();
    match admin.counts().await {
        Ok(counts) => counts.pending,
        // Not created yet: the first publish creates it.
        Err(OutboxError::NoSuchOutbox { .. }) => 0,
        Err(e) => panic!("{e}"),
    }
}

async fn exercise(url: &str, name: &str) {
    let t = table(&format!("sql_tx_{name}"));
    let outbox = table(&format!("sqltx_{name}"));
    let ctx = context(&routes(url, &t, &outbox), |ctx| {
        ctx.add_component(Arc::new(OutboxComponent::new()));
        ctx.add_resource(
            "boom",
            Arc::new(BoxProcessor::sync(|_| {
                Err(CamelError::processor("payment refused"))
            })),
        );
    })
    .await;
    exec(&ctx, &format!("DROP TABLE IF EXISTS {t}")).await;
    exec(
        &ctx,
        &format!("CREATE TABLE {t} (id INTEGER PRIMARY KEY, note TEXT)"),
    )
    .await;
    let before = pending(url, &outbox).await;

    let ok = Exchange::new(json!({"note": "paid"}))
        .with_header("id", 1i64)
        .with_header("fail", "no");
    let out = ctx.request("direct:place", ok).await.unwrap();
    assert_eq!(int_header(&out, camel_sql::headers::UPDATE_COUNT), 1);
    assert_eq!(
        out.header("seen").unwrap().as_i64(),
        Some(1),
        "the select sees the insert of its transaction"
    );
    assert!(out.header(camel_outbox::headers::ID).is_some());
    assert_eq!(pending(url, &outbox).await, before + 1);

    let bad = Exchange::new(json!({"note": "refused"}))
        .with_header("id", 2i64)
        .with_header("fail", "yes");
    let err = ctx.request("direct:place", bad).await.unwrap_err();
    assert!(err.to_string().contains("payment refused"), "{err}");
    assert_eq!(
        pending(url, &outbox).await,
        before + 1,
        "the message rolled back"
    );
    let rows = exec(&ctx, &format!("select id from {t} order by id")).await;
    assert_eq!(body(&rows), json!([{"id": 1}]), "the row rolled back");

    // Outside a transaction, the same endpoint commits on its own.
    let out = exec(
        &ctx,
        &format!("insert into {t} (id, note) values (3, 'alone')"),
    )
    .await;
    assert_eq!(int_header(&out, camel_sql::headers::UPDATE_COUNT), 1);
    exec(&ctx, &format!("DROP TABLE {t}")).await;
    ctx.stop().await;
}

#[tokio::test]
async fn sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("shop.db").display());
    exercise(&url, "lite").await;
}

#[tokio::test]
async fn postgres() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    exercise(&url, "pg").await;
}

/// On MySQL/MariaDB the transaction is `sql:`'s own (the outbox has no MySQL store): two
/// inserts commit together, or both roll back when a later step fails.
#[tokio::test]
async fn mysql_sql_only() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_MYSQL_URL") else {
        return;
    };
    let t = table("sql_tx_my");
    let yaml = format!(
        r#"{run}
- route:
    id: place
    from:
      uri: direct:place
      steps:
        - transacted:
            datasource: "{url}"
            steps:
              - to:
                  uri: "sql:insert into {t} (id, note) values (:#id, :#note)"
                  parameters: {{ datasource: "{url}" }}
              - to:
                  uri: "sql:insert into {t} (id, note) values (:#id + 1000, 'audit')"
                  parameters: {{ datasource: "{url}" }}
              - to:
                  uri: "sql:select count(*) as n from {t}"
                  parameters: {{ datasource: "{url}", output_type: SelectOne, output_header: seen }}
              - filter:
                  simple: "${{header.fail}} == 'yes'"
                  steps:
                    - process: {{ ref: boom }}
"#,
        run = run_route(&url)
    );
    let ctx = context(&yaml, |ctx| {
        // As the binary has it: the outbox too, which must leave MySQL to `sql:`.
        ctx.add_component(Arc::new(OutboxComponent::new()));
        ctx.add_resource(
            "boom",
            Arc::new(BoxProcessor::sync(|_| {
                Err(CamelError::processor("payment refused"))
            })),
        );
    })
    .await;
    exec(&ctx, &format!("DROP TABLE IF EXISTS {t}")).await;
    exec(
        &ctx,
        &format!("CREATE TABLE {t} (id INTEGER PRIMARY KEY, note TEXT) ENGINE=InnoDB"),
    )
    .await;

    let ok = Exchange::new(json!({"note": "paid"}))
        .with_header("id", 1i64)
        .with_header("fail", "no");
    let out = ctx.request("direct:place", ok).await.unwrap();
    assert_eq!(
        out.header("seen").unwrap().as_i64(),
        Some(2),
        "the select sees both inserts of its transaction"
    );

    let bad = Exchange::new(json!({"note": "refused"}))
        .with_header("id", 2i64)
        .with_header("fail", "yes");
    let err = ctx.request("direct:place", bad).await.unwrap_err();
    assert!(err.to_string().contains("payment refused"), "{err}");
    let rows = exec(&ctx, &format!("select id from {t} order by id")).await;
    assert_eq!(
        body(&rows),
        json!([{"id": 1}, {"id": 1001}]),
        "both inserts of the failed exchange rolled back"
    );
    exec(&ctx, &format!("DROP TABLE {t}")).await;
    ctx.stop().await;
}
