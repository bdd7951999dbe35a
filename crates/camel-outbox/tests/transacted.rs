//! The `transacted` step with the outbox component, from a real YAML route: a Rust step's
//! business write and two `outbox:` publishes commit together, or roll back together when
//! a later step fails; an outbox on another database refuses to publish beside the
//! transaction. On a SQLite file, and on PostgreSQL when `CAMEL_TEST_PG_URL` is set.

mod common;

use std::sync::Arc;

use camel_api::{BoxProcessor, CamelError, Exchange};
use camel_core::CamelContext;
use camel_outbox::admin::OutboxAdmin;
use camel_outbox::{Datasource, OutboxComponent, OutboxConfig, RouteTransaction};

/// The business write: one row in `{table}` through the step's transaction.
fn business_write(table: String) -> BoxProcessor {
    BoxProcessor::from_fn(move |ex: Exchange| {
        let table = table.clone();
        async move {
            let tx = RouteTransaction::current()
                .ok_or_else(|| CamelError::processor("not inside a transacted step"))?;
            let mut guard = tx.lock().await;
            let sql = format!("INSERT INTO {table} (note) VALUES ('order')");
            let done = if let Some(conn) = guard.postgres() {
                sqlx::query(&sql).execute(conn).await.map(drop)
            } else if let Some(conn) = guard.sqlite() {
                sqlx::query(&sql).execute(conn).await.map(drop)
            } else {
                return Err(CamelError::processor("transaction already ended"));
            };
            done.map_err(|e| CamelError::external("business write", e))?;
            Ok(ex)
        }
    })
}

fn routes(url: &str, other_url: &str, suffix: &str) -> String {
    format!(
        r#"
- route:
    id: place
    from:
      uri: direct:place
      steps:
        - transacted:
            datasource: "{url}"
            steps:
              - process: {{ ref: business }}
              - to:
                  uri: outbox:orders{suffix}
                  parameters: {{ datasource: "{url}", group_key: "${{header.order}}" }}
              - to:
                  uri: outbox:audit{suffix}
                  parameters: {{ datasource: "{url}" }}
              - filter:
                  simple: "${{header.fail}} == 'yes'"
                  steps:
                    - process: {{ ref: boom }}
- route:
    id: outer
    from:
      uri: direct:outer
      steps:
        - transacted:
            datasource: "{url}"
            steps:
              - to: direct:inner-publish
              - transacted:
                  datasource: "{url}"
                  steps:
                    - to:
                        uri: outbox:audit{suffix}
                        parameters: {{ datasource: "{url}" }}
              - filter:
                  simple: "${{header.fail}} == 'yes'"
                  steps:
                    - process: {{ ref: boom }}
- route:
    id: inner-publish
    from:
      uri: direct:inner-publish
      steps:
        - to:
            uri: outbox:orders{suffix}
            parameters: {{ datasource: "{url}", group_key: "${{header.order}}" }}
- route:
    id: publish-woken
    from:
      uri: direct:woken
      steps:
        - transacted:
            datasource: "{url}"
            steps:
              - to:
                  uri: outbox:woken{suffix}
                  parameters: {{ datasource: "{url}" }}
- route:
    id: relay-woken
    from:
      uri: outbox:woken{suffix}
      parameters: {{ datasource: "{url}", poll_interval: 1h, sweep_interval: 1h }}
      steps:
        - process: {{ ref: seen }}
- route:
    id: elsewhere
    from:
      uri: direct:elsewhere
      steps:
        - transacted:
            datasource: "{url}"
            steps:
              - to:
                  uri: outbox:stray{suffix}
                  parameters: {{ datasource: "{other_url}" }}
"#
    )
}

async fn pending(ds: &Datasource, outbox: &str) -> u64 {
    let admin = OutboxAdmin::from_config(ds.clone(), &OutboxConfig::new(outbox)).unwrap();
    admin.counts().await.unwrap().pending
}

async fn business_rows(ds: &Datasource, table: &str) -> i64 {
    let sql = format!("SELECT count(*) FROM {table}");
    match ds {
        Datasource::Postgres(p) => sqlx::query_scalar(&sql).fetch_one(p).await.unwrap(),
        Datasource::Sqlite(p) => sqlx::query_scalar(&sql).fetch_one(p).await.unwrap(),
        _ => unreachable!("both databases are enabled"),
    }
}

async fn exercise(url: &str, other_url: &str, suffix: &str) {
    let ds = Datasource::connect(url).unwrap();
    let table = format!("business{suffix}");
    let ddl = format!("CREATE TABLE {table} (note TEXT NOT NULL)");
    match &ds {
        Datasource::Postgres(p) => sqlx::query(&ddl).execute(p).await.map(drop).unwrap(),
        Datasource::Sqlite(p) => sqlx::query(&ddl).execute(p).await.map(drop).unwrap(),
        _ => unreachable!(),
    }

    let ctx = CamelContext::new();
    ctx.add_component(Arc::new(OutboxComponent::new()));
    ctx.add_resource("business", Arc::new(business_write(table.clone())));
    ctx.add_resource(
        "boom",
        Arc::new(BoxProcessor::sync(|_| {
            Err(CamelError::processor("payment refused"))
        })),
    );
    let (seen_tx, mut seen_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    ctx.add_resource(
        "seen",
        Arc::new(BoxProcessor::sync(move |ex: Exchange| {
            let _ = seen_tx.send(ex.message.body.as_text().unwrap_or_default().to_string());
            Ok(ex)
        })),
    );
    let defs = camel_core::yaml::load_str(&routes(url, other_url, suffix), "tx.yaml").unwrap();
    ctx.add_routes(defs).await.unwrap();
    ctx.start().await.unwrap();

    // Success: the business row and both messages commit together.
    let ok = Exchange::new("{}")
        .with_header("order", "o-1")
        .with_header("fail", "no");
    let out = ctx.request("direct:place", ok).await.unwrap();
    assert!(out.header(camel_outbox::headers::ID).is_some());
    assert_eq!(business_rows(&ds, &table).await, 1);
    assert_eq!(pending(&ds, &format!("orders{suffix}")).await, 1);
    assert_eq!(pending(&ds, &format!("audit{suffix}")).await, 1);

    // A later step fails: nothing of this exchange stays.
    let bad = Exchange::new("{}")
        .with_header("order", "o-2")
        .with_header("fail", "yes");
    let err = ctx.request("direct:place", bad).await.unwrap_err();
    assert!(err.to_string().contains("payment refused"), "{err}");
    assert_eq!(
        business_rows(&ds, &table).await,
        1,
        "business write rolled back"
    );
    assert_eq!(
        pending(&ds, &format!("orders{suffix}")).await,
        1,
        "publish rolled back"
    );
    assert_eq!(
        pending(&ds, &format!("audit{suffix}")).await,
        1,
        "publish rolled back"
    );

    // Many exchanges at once: each commits its own write and messages (on SQLite they
    // take turns as the file's writer).
    let calls = (0..16).map(|i| {
        let ex = Exchange::new("{}")
            .with_header("order", format!("c-{i}"))
            .with_header("fail", "no");
        ctx.request("direct:place", ex)
    });
    for result in futures::future::join_all(calls).await {
        result.unwrap();
    }
    assert_eq!(business_rows(&ds, &table).await, 17);
    assert_eq!(pending(&ds, &format!("orders{suffix}")).await, 17);

    // `direct:` calls and a nested `transacted` on the same database are inside the
    // outer transaction: they commit with it, or roll back with it.
    let ok = Exchange::new("{}")
        .with_header("order", "d-1")
        .with_header("fail", "no");
    ctx.request("direct:outer", ok).await.unwrap();
    assert_eq!(pending(&ds, &format!("orders{suffix}")).await, 18);
    assert_eq!(pending(&ds, &format!("audit{suffix}")).await, 18);
    let bad = Exchange::new("{}")
        .with_header("order", "d-2")
        .with_header("fail", "yes");
    ctx.request("direct:outer", bad).await.unwrap_err();
    assert_eq!(
        pending(&ds, &format!("orders{suffix}")).await,
        18,
        "rolled back"
    );
    assert_eq!(
        pending(&ds, &format!("audit{suffix}")).await,
        18,
        "rolled back"
    );

    // The commit wakes the local relay: with polling and sweeping an hour apart, nothing
    // else could make it deliver.
    ctx.request("direct:woken", Exchange::new("wake up"))
        .await
        .unwrap();
    let got = tokio::time::timeout(std::time::Duration::from_secs(10), seen_rx.recv()).await;
    assert_eq!(
        got.ok().flatten().as_deref(),
        Some("wake up"),
        "relay not woken by the commit"
    );

    // An outbox on another database does not publish beside the transaction.
    let err = ctx
        .request("direct:elsewhere", Exchange::new("{}"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("different databases"), "{err}");
    let other = Datasource::connect(other_url).unwrap();
    assert_eq!(pending(&other, &format!("stray{suffix}")).await, 0);

    ctx.stop().await;
}

#[tokio::test]
async fn sqlite_business_write_and_publishes_commit_or_roll_back_together() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("app.db").display());
    let other = format!("sqlite://{}", dir.path().join("other.db").display());
    exercise(&url, &other, "").await;
}

#[tokio::test]
async fn postgres_business_write_and_publishes_commit_or_roll_back_together() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let other = format!("sqlite://{}", dir.path().join("other.db").display());
    let suffix = format!("_{}", common::unique("tx"));
    exercise(&url, &other, &suffix).await;
    let ds = Datasource::connect(&url).unwrap();
    if let Datasource::Postgres(p) = &ds {
        let _ = sqlx::query(&format!("DROP TABLE IF EXISTS business{suffix}"))
            .execute(p)
            .await;
    }
    common::drop_tables(&ds, &format!("camel_outbox_orders{suffix}")).await;
    common::drop_tables(&ds, &format!("camel_outbox_audit{suffix}")).await;
    common::drop_tables(&ds, &format!("camel_outbox_woken{suffix}")).await;
}

#[tokio::test]
async fn a_bad_datasource_is_a_route_error_at_the_step() {
    let ctx = CamelContext::new();
    ctx.add_component(Arc::new(OutboxComponent::new()));
    let yaml = r#"
- route:
    id: broken
    from:
      uri: direct:x
      steps:
        - transacted:
            datasource: "mysql://app:hunter2@127.0.0.1/nope"
            steps: [ { log: "x" } ]
"#;
    let err = ctx
        .add_routes(camel_core::yaml::load_str(yaml, "bad.yaml").unwrap())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("bad.yaml:8"), "{err}");
    assert!(err.contains("transacted"), "{err}");
    assert!(
        !err.contains("hunter2"),
        "the password must not be shown: {err}"
    );
}

#[test]
fn the_builder_makes_the_same_definition_as_yaml() {
    let yaml = r#"
- route:
    id: r
    from:
      uri: direct:in
      steps:
        - transacted:
            datasource: "sqlite://app.db"
            steps:
              - process: { ref: business }
"#;
    let from_yaml = camel_core::yaml::load_str(yaml, "r.yaml")
        .unwrap()
        .remove(0);
    let built = camel_core::builder::RouteBuilder::from("direct:in")
        .transacted(Some("sqlite://app.db"), |s| s.process_ref("business"))
        .id("r")
        .build();
    assert_eq!(from_yaml, built);
}

/// A Rust step that holds the transaction's guard while a producer publishes through the
/// same transaction gets an error after the bounded wait, not a hang.
#[tokio::test]
async fn holding_the_guard_while_publishing_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("app.db").display());
    let ctx = CamelContext::new();
    ctx.add_component(Arc::new(OutboxComponent::new()));
    let yaml = format!(
        r#"
- route:
    id: greedy
    from:
      uri: direct:greedy
      steps:
        - transacted:
            datasource: "{url}"
            steps:
              - process: {{ ref: greedy }}
"#
    );
    let defs = camel_core::yaml::load_str(&yaml, "greedy.yaml").unwrap();
    let publish = ctx
        .producer(&format!("outbox:held?datasource={url}"))
        .unwrap();
    ctx.add_resource(
        "greedy",
        Arc::new(BoxProcessor::from_fn(move |ex: Exchange| {
            let publish = publish.clone();
            async move {
                let tx = RouteTransaction::current().expect("inside transacted");
                let _guard = tx.lock().await;
                publish.process(ex).await
            }
        })),
    );
    ctx.add_routes(defs).await.unwrap();
    ctx.start().await.unwrap();
    let started = std::time::Instant::now();
    let err = ctx
        .request("direct:greedy", Exchange::new("x"))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("RouteTransaction::lock()"),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    ctx.stop().await;
}

/// `sqlite:PATH` and `sqlite://PATH` name one database: a producer under one spelling
/// joins a `transacted` step under the other.
#[tokio::test]
async fn two_spellings_of_one_sqlite_file_share_the_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.db");
    let ctx = CamelContext::new();
    ctx.add_component(Arc::new(OutboxComponent::new()));
    let yaml = format!(
        r#"
- route:
    id: spelled
    from:
      uri: direct:spelled
      steps:
        - transacted:
            datasource: "sqlite://{p}"
            steps:
              - to:
                  uri: outbox:spelled
                  parameters: {{ datasource: "sqlite:{p}" }}
              - process: {{ ref: boom }}
"#,
        p = path.display()
    );
    ctx.add_resource(
        "boom",
        Arc::new(BoxProcessor::sync(|_| Err(CamelError::processor("no")))),
    );
    ctx.add_routes(camel_core::yaml::load_str(&yaml, "spelled.yaml").unwrap())
        .await
        .unwrap();
    ctx.start().await.unwrap();
    let err = ctx
        .request("direct:spelled", Exchange::new("x"))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no",
        "the producer joined; the later step failed"
    );
    let ds = Datasource::connect(&format!("sqlite:{}", path.display())).unwrap();
    assert_eq!(
        pending(&ds, "spelled").await,
        0,
        "rolled back with the step"
    );
    ctx.stop().await;
}
