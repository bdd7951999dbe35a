//! `sql:` and `outbox:` in one `transacted` step: the row and the message commit
//! together, or both roll back when a later step fails. On a SQLite file, and on
//! PostgreSQL with `CAMEL_TEST_PG_URL`.

mod common;

use std::sync::Arc;

use camel_api::{BoxProcessor, CamelError, Exchange};
use camel_core::CamelContext;
use camel_outbox::admin::OutboxAdmin;
use camel_outbox::{Datasource, OutboxComponent, OutboxConfig, OutboxError};
use common::*;
use serde_json::json;

/// `direct:place`: in one `transacted` step, an insert into `t`, then `also` (a step's
/// YAML), a count of `t`'s rows into the header `seen`, and a failure when the header
/// `fail` is `yes`.
fn routes(url: &str, t: &str, also: &str) -> String {
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
{also}
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

/// A context with `yaml`'s routes, the outbox component, and `boom`: a step that fails as
/// a refused payment.
async fn shop(yaml: &str) -> CamelContext {
    context(yaml, |ctx| {
        ctx.add_component(Arc::new(OutboxComponent::new()));
        ctx.add_resource(
            "boom",
            Arc::new(BoxProcessor::sync(|_| {
                Err(CamelError::processor("payment refused"))
            })),
        );
    })
    .await
}

/// An order for `direct:place`, failing after its statements when `fail`.
fn order(id: i64, note: &str, fail: bool) -> Exchange {
    Exchange::new(json!({ "note": note }))
        .with_header("id", id)
        .with_header("fail", if fail { "yes" } else { "no" })
}

/// Creates the table `t` afresh, with `options` after its columns.
async fn orders_table(ctx: &CamelContext, t: &str, options: &str) {
    exec(ctx, &format!("DROP TABLE IF EXISTS {t}")).await;
    let create = format!("CREATE TABLE {t} (id INTEGER PRIMARY KEY, note TEXT){options}");
    exec(ctx, &create).await;
}

/// Sends the order that fails and checks the failure is the refused payment.
async fn refused(ctx: &CamelContext) {
    let err = ctx
        .request("direct:place", order(2, "refused", true))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("payment refused"), "{err}");
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
    let publish = format!(
        r#"                  uri: outbox:{outbox}
                  parameters: {{ datasource: "{url}", group_key: "${{header.id}}" }}"#
    );
    let ctx = shop(&routes(url, &t, &publish)).await;
    orders_table(&ctx, &t, "").await;
    let before = pending(url, &outbox).await;

    let out = ctx
        .request("direct:place", order(1, "paid", false))
        .await
        .unwrap();
    assert_eq!(int_header(&out, camel_sql::headers::UPDATE_COUNT), 1);
    assert_eq!(
        out.header("seen").unwrap().as_i64(),
        Some(1),
        "the select sees the insert of its transaction"
    );
    assert!(out.header(camel_outbox::headers::ID).is_some());
    assert_eq!(pending(url, &outbox).await, before + 1);

    refused(&ctx).await;
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

test_on!(exercise: sqlite_file, postgres);

/// On MySQL/MariaDB the transaction is `sql:`'s own (the outbox has no MySQL store): two
/// inserts commit together, or both roll back when a later step fails.
#[tokio::test]
async fn mysql_sql_only() {
    let Some(db) = TestDatabase::mysql() else {
        return;
    };
    let url = &db.url;
    let t = table("sql_tx_my");
    let audit = format!(
        r#"                  uri: "sql:insert into {t} (id, note) values (:#id + 1000, 'audit')"
                  parameters: {{ datasource: "{url}" }}"#
    );
    // As the binary has it: the outbox too, which must leave MySQL to `sql:`.
    let ctx = shop(&routes(url, &t, &audit)).await;
    orders_table(&ctx, &t, " ENGINE=InnoDB").await;

    let out = ctx
        .request("direct:place", order(1, "paid", false))
        .await
        .unwrap();
    assert_eq!(
        out.header("seen").unwrap().as_i64(),
        Some(2),
        "the select sees both inserts of its transaction"
    );

    refused(&ctx).await;
    let rows = exec(&ctx, &format!("select id from {t} order by id")).await;
    assert_eq!(
        body(&rows),
        json!([{"id": 1}, {"id": 1001}]),
        "both inserts of the failed exchange rolled back"
    );
    exec(&ctx, &format!("DROP TABLE {t}")).await;
    ctx.stop().await;
}
