//! One pool per database in a context (ADR 0085): `sql:` endpoints, a `transacted` step,
//! `outbox:` producers and the outbox's relay on one database URL share the context's
//! pool for it. A route stop and start or a hot swap keeps it; the context's stop closes
//! it; a context started again makes a new one. On a SQLite file, on PostgreSQL with
//! `CAMEL_TEST_PG_URL` (counting the backend connections in `pg_stat_activity`), and
//! `sql:` alone on MariaDB with `CAMEL_TEST_MYSQL_URL`.

mod common;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use camel_api::pools::SharedPool;
use camel_api::{BoxProcessor, Exchange, Value};
use camel_core::CamelContext;
use camel_outbox::{Datasource, OutboxComponent};
use common::*;
use serde_json::json;
use tokio::sync::mpsc;

/// Routes on `url`: `place` runs a statement outside any transaction (`slow`), then an
/// insert and a publish in one `transacted` step; `relay` hands each message to the
/// resource `seen`.
fn routes(url: &str, t: &str, outbox: &str, slow: &str) -> String {
    format!(
        r#"{run}
- route:
    id: place
    from:
      uri: direct:place
      steps:
        - to:
            uri: "sql:{slow}"
            parameters: {{ datasource: "{url}", output_header: slow }}
        - transacted:
            datasource: "{url}"
            steps:
              - to:
                  uri: "sql:insert into {t} (id, note) values (:#id, 'placed')"
                  parameters: {{ datasource: "{url}" }}
              - to:
                  uri: outbox:{outbox}
                  parameters: {{ datasource: "{url}", group_key: "${{header.id}}" }}
{relay}"#,
        run = run_route(url),
        relay = relay(url, outbox, "v1"),
    )
}

/// The relay route; `v2` spells its source differently (the option in the URI), so a swap
/// to it restarts the relay's consumer.
fn relay(url: &str, outbox: &str, version: &str) -> String {
    let (uri, poll) = match version {
        "v1" => (format!("outbox:{outbox}"), ", poll_interval: 50ms"),
        _ => (format!("outbox:{outbox}?poll_interval=50ms"), ""),
    };
    format!(
        r#"
- route:
    id: relay
    from:
      uri: "{uri}"
      parameters: {{ datasource: "{url}"{poll} }}
      steps:
        - set_header: {{ name: version, constant: "{version}" }}
        - process: {{ ref: seen }}
"#
    )
}

/// Each relayed message: (order id from the body's insert, pipeline version).
type Seen = mpsc::UnboundedReceiver<(i64, String)>;

async fn start(yaml: &str) -> (CamelContext, Seen) {
    let (tx, rx) = mpsc::unbounded_channel();
    let ctx = context(yaml, |ctx| {
        ctx.add_component(Arc::new(OutboxComponent::new()));
        ctx.add_resource(
            "seen",
            Arc::new(BoxProcessor::sync(move |ex: Exchange| {
                let id = ex
                    .header(camel_outbox::headers::GROUP_KEY)
                    .and_then(|v| v.to_string().parse().ok())
                    .unwrap_or(-1);
                let version = ex.header("version").map(Value::to_string);
                let _ = tx.send((id, version.unwrap_or_default()));
                Ok(ex)
            })),
        );
    })
    .await;
    (ctx, rx)
}

async fn place(ctx: &CamelContext, id: i64) {
    let ex = Exchange::new(json!({})).with_header("id", id);
    ctx.request("direct:place", ex).await.unwrap();
}

/// The next relayed message (bounded wait: the relay is woken by the local publish).
async fn next(seen: &mut Seen) -> (i64, String) {
    tokio::time::timeout(Duration::from_secs(30), seen.recv())
        .await
        .expect("relayed within 30 s")
        .expect("the relay's channel is open")
}

/// The context's one pool for `url`, without making one.
fn the_pool(ctx: &CamelContext, url: &str) -> Datasource {
    let key = camel_outbox::component::database_key(url);
    ctx.pools()
        .get_or_try_insert_with(&key, || Err("the context has no pool for this database"))
        .unwrap()
}

/// Runs the scenario: `load` places `n` orders at once (the caller samples connections
/// meanwhile), then route stop/start, hot swap, context stop, context start.
async fn exercise(url: &str, name: &str, slow: &str, n: i64, during: impl AsyncFnOnce()) {
    let t = table(&format!("pool_{name}"));
    let outbox = table(&format!("poolbox_{name}"));
    let (ctx, mut seen) = start(&routes(url, &t, &outbox, slow)).await;
    exec(&ctx, &format!("DROP TABLE IF EXISTS {t}")).await;
    exec(
        &ctx,
        &format!("CREATE TABLE {t} (id INTEGER PRIMARY KEY, note TEXT)"),
    )
    .await;

    let load = async {
        let all = (1..=n).map(|id| place(&ctx, id));
        futures::future::join_all(all).await;
    };
    tokio::join!(load, during());
    let mut ids: Vec<i64> = Vec::new();
    for _ in 0..n {
        ids.push(next(&mut seen).await.0);
    }
    ids.sort_unstable();
    assert_eq!(ids, (1..=n).collect::<Vec<_>>(), "every order relayed once");
    let key = camel_outbox::component::database_key(url);
    assert_eq!(
        ctx.pools().keys(),
        vec![key.clone()],
        "sql:, transacted, outbox: and the relay share one pool"
    );
    let pool = the_pool(&ctx, url);

    // A route stop and start: the relay's consumer restarts on the same pool.
    let routes_ctl = ctx.route_controller();
    routes_ctl.stop_route("relay").await.unwrap();
    assert!(!pool.is_closed(), "a route stop keeps the pool");
    routes_ctl.start_route("relay").await.unwrap();
    place(&ctx, n + 1).await;
    assert_eq!(next(&mut seen).await, (n + 1, "v1".to_string()));
    assert!(!pool.is_closed());
    assert_eq!(ctx.pools().len(), 1);

    // A hot swap of the relay (its source too: the consumer restarts).
    let v2 = camel_core::yaml::load_str(&relay(url, &outbox, "v2"), "swap.yaml")
        .unwrap()
        .remove(0);
    routes_ctl.swap("relay", v2).await.unwrap();
    place(&ctx, n + 2).await;
    assert_eq!(next(&mut seen).await, (n + 2, "v2".to_string()));
    assert!(!pool.is_closed(), "a hot swap keeps the pool");
    assert_eq!(ctx.pools().len(), 1);

    // The context's stop closes it.
    let report = ctx.stop().await;
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(pool.is_closed(), "the context's stop closes the pool");
    assert!(ctx.pools().is_empty());

    // Started again: a new pool, and everything works on it.
    ctx.start().await.unwrap();
    place(&ctx, n + 3).await;
    assert_eq!(next(&mut seen).await.0, n + 3);
    let again = the_pool(&ctx, url);
    assert!(!again.is_closed());
    assert_eq!(ctx.pools().len(), 1);
    exec(&ctx, &format!("DROP TABLE {t}")).await;
    ctx.stop().await;
    assert!(again.is_closed());
}

#[tokio::test]
async fn sqlite_file_one_pool() {
    let dir = tempfile::tempdir().unwrap();
    // Spelled two ways: one file, one database, one pool.
    let path = dir.path().join("shop.db");
    let url = format!("sqlite:{}", path.display());
    exercise(&url, "lite", "select 1 as one", 20, async || {}).await;
    assert_eq!(
        camel_outbox::component::database_key(&url),
        camel_outbox::component::database_key(&format!("sqlite://{}", path.display())),
    );
}

/// Backend connections named `app` in `pg_stat_activity`.
async fn backends(admin: &sqlx::PgPool, app: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1")
        .bind(app)
        .fetch_one(admin)
        .await
        .unwrap()
}

#[tokio::test]
async fn postgres_one_pool_bounds_the_backend_connections() {
    let Some(base) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let app = format!("camel_pools_{}", std::process::id());
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}application_name={app}");
    let admin = sqlx::PgPool::connect(&base).await.unwrap();
    let most = Arc::new(AtomicI64::new(0));
    // 48 orders at once, each holding a connection 200 ms outside its transaction: with
    // a pool per component this reached `sql:`'s 8 + the outbox's 16 (+ the relay's
    // partition owner); with one pool it stays at the pool's maximum (+ 1).
    let sample = {
        let (admin, app, most) = (admin.clone(), app.clone(), most.clone());
        async move || {
            let mut tick = tokio::time::interval(Duration::from_millis(20));
            for _ in 0..25 {
                tick.tick().await;
                most.fetch_max(backends(&admin, &app).await, Ordering::SeqCst);
            }
        }
    };
    exercise(
        &url,
        "pg",
        "select pg_sleep(0.2)::text as slept",
        48,
        sample,
    )
    .await;
    let most = most.load(Ordering::SeqCst);
    let ds = Datasource::connect(&url).unwrap();
    let bound = i64::from(ds.max_connections()) + 1;
    println!("RESULT pg_backends_max={most} bound={bound} (pool max + 1 partition owner)");
    assert!(most >= 2, "the sampling saw the load: {most}");
    assert!(
        most <= bound,
        "{most} backend connections: more than one pool's {bound}"
    );
    // Closed with the context: every backend goes away (they exit as their sockets close).
    let gone = async {
        let mut tick = tokio::time::interval(Duration::from_millis(50));
        loop {
            tick.tick().await;
            if backends(&admin, &app).await == 0 {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), gone)
        .await
        .expect("the context's connections closed after its stop");
}

/// `sql:` alone on MariaDB (the outbox has no MySQL store): its pool is the context's too,
/// closed when the context stops.
#[tokio::test]
async fn mysql_pool_is_the_contexts() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_MYSQL_URL") else {
        return;
    };
    let ctx = context(&run_route(&url), |_| {}).await;
    let out = exec(&ctx, "select 1 as one").await;
    assert_eq!(body(&out), json!([{"one": 1}]));
    let key = camel_outbox::component::database_key(&url);
    assert_eq!(ctx.pools().keys(), vec![key.clone()]);
    let pool: camel_sql::Database = ctx
        .pools()
        .get_or_try_insert_with(&key, || Err("no MySQL pool"))
        .unwrap();
    ctx.stop().await;
    assert!(pool.is_closed());
    assert!(ctx.pools().is_empty());
}
