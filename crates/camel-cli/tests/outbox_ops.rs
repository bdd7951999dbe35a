//! The outbox as an operator meets it through the binary: a relay whose database is not
//! there yet, credentials in an endpoint URI, a second relay on one SQLite file, a
//! `group_key` that evaluates to nothing, and the `camel outbox` subcommands' errors.

mod support;

use std::time::{Duration, Instant};

use camel_outbox::{Datasource, NewMessage, Outbox, OutboxConfig};
use serde_json::Value;
use support::admin_api::{admin_client, send, Camel, LIMIT};
use support::{camel, text};

fn write_routes(dir: &std::path::Path, yaml: &str) -> std::path::PathBuf {
    let path = dir.join("routes.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

/// Polls `GET /health` until `cond` holds on (code, body); panics after [`LIMIT`].
async fn health_until(base: &str, what: &str, cond: impl Fn(u16, &Value) -> bool) -> Value {
    let http = admin_client();
    let deadline = Instant::now() + LIMIT;
    loop {
        let (code, body) = send(http.get(format!("{base}/health"))).await;
        if cond(code, &body) {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: last /health {code} {body}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `url` with its database replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let cut = url.rfind('/').expect("a database URL has a path");
    format!("{}/{name}", &url[..cut])
}

#[tokio::test]
async fn a_relay_started_before_its_database_exists_reports_down_then_delivers() {
    let Some(base_url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let name = format!("camel_late_{}", std::process::id());
    let url = with_database(&base_url, &name);
    let dir = tempfile::tempdir().unwrap();
    let routes = write_routes(
        dir.path(),
        &format!(
            "- route:\n    id: relay\n    from:\n      uri: outbox:late\n      parameters: {{datasource: '{url}', poll_interval: 50ms}}\n      steps:\n        - log: \"relayed ${{body}}\"\n"
        ),
    );
    let mut camel = Camel::start_in(&routes, dir.path());
    let base = camel.base_url().await;
    let down = health_until(&base, "the relay reported failing", |code, b| {
        code == 503 && b["failing"][0]["id"] == "relay"
    })
    .await;
    assert_eq!(down["status"], "DOWN");
    let reason = down["failing"][0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("does not exist"), "{down}");

    let admin = Datasource::connect(&base_url).unwrap();
    let Datasource::Postgres(admin_pool) = &admin else {
        unreachable!()
    };
    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .execute(admin_pool)
        .await;
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(admin_pool)
        .await
        .unwrap();
    let ds = Datasource::connect(&url).unwrap();
    let outbox = Outbox::open(ds.clone(), OutboxConfig::new("late"))
        .await
        .unwrap();
    let Datasource::Postgres(pool) = &ds else {
        unreachable!()
    };
    let mut tx = pool.begin().await.unwrap();
    outbox
        .publish(&mut tx, NewMessage::text("after-the-outage"))
        .await
        .unwrap();
    outbox.commit(tx).await.unwrap();

    camel.wait_for("relayed after-the-outage").await;
    let up = health_until(&base, "healthy again", |code, _| code == 200).await;
    assert_eq!(up["status"], "UP", "{up}");
    let retries = camel
        .log()
        .iter()
        .filter(|l| l.contains("cannot run; retrying"))
        .count();
    assert!(retries >= 1, "the failure is logged");

    drop(camel);
    drop((outbox, ds));
    sqlx::query(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .execute(admin_pool)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_password_in_an_outbox_uri_is_neither_logged_nor_listed() {
    let dir = tempfile::tempdir().unwrap();
    // Port 1 refuses; connect_timeout keeps each try short.
    let routes = write_routes(
        dir.path(),
        "- route:\n    id: secret\n    from:\n      uri: 'outbox:x?datasource=postgres://app:hunter9@127.0.0.1:1/db?connect_timeout=1'\n      steps:\n        - log: \"never\"\n",
    );
    let mut camel = Camel::start_in(&routes, dir.path());
    let base = camel.base_url().await;
    // Logged before the admin API's line.
    let started = camel
        .log()
        .iter()
        .find(|l| l.contains("route started"))
        .cloned()
        .unwrap_or_default();
    assert!(
        started.contains("postgres://***@127.0.0.1:1/db"),
        "{started}"
    );
    let http = admin_client();
    let (_, listed) = send(http.get(format!("{base}/routes"))).await;
    let listed = listed.to_string();
    assert!(listed.contains("postgres://***@127.0.0.1:1/db"), "{listed}");
    let down = health_until(&base, "the relay reported failing", |code, _| code == 503).await;
    let (_, one) = send(http.get(format!("{base}/routes/secret"))).await;
    let log = camel.log().join("\n");
    for shown in [listed, down.to_string(), one.to_string(), log] {
        assert!(!shown.contains("hunter9"), "password shown: {shown}");
    }
}

#[tokio::test]
async fn a_second_relay_on_one_sqlite_file_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let routes = write_routes(
        dir.path(),
        "- route:\n    id: relay\n    from:\n      uri: outbox:orders\n      steps:\n        - log: \"relayed ${body}\"\n",
    );
    let mut first = Camel::start_in(&routes, dir.path());
    first.wait_for("route started").await;
    let second = std::process::Command::new(env!("CARGO_BIN_EXE_camel"))
        .args(["run", routes.to_str().unwrap(), "--max-seconds", "20"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let out = text(&second);
    assert!(!second.status.success(), "{out}");
    assert!(out.contains("another relay is already running"), "{out}");
    assert!(out.contains("outbox.db`"), "names the database file: {out}");
}

#[tokio::test]
async fn a_group_key_that_evaluates_to_nothing_warns_once_and_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let routes = write_routes(
        dir.path(),
        "- route:\n    id: publish\n    from:\n      uri: timer:t\n      parameters: {period: 10, delay: 0, repeat_count: 3}\n      steps:\n        - to:\n            uri: outbox:u\n            parameters: {group_key: '${header.missing}'}\n        - log: \"stored as #${header.CamelOutboxId}\"\n",
    );
    let mut camel = Camel::start_in(&routes, dir.path());
    let base = camel.base_url().await;
    // (The warning itself says "published": wait for the log step's own words.)
    for _ in 0..3 {
        camel.wait_for("stored as #").await;
    }
    let http = admin_client();
    let metrics = http
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("camel_outbox_ungrouped_total{outbox=\"u\"} 3"),
        "{metrics}"
    );
    let warnings = camel
        .log()
        .iter()
        .filter(|l| l.contains("evaluated to null or empty"))
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("route_id=publish"), "{warnings:?}");
}

#[tokio::test]
async fn outbox_subcommands_name_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("ops.db").display());
    let ds = Datasource::connect(&db).unwrap();
    let mut config = OutboxConfig::new("orders");
    config.table = Some("shop_outbox".into());
    let outbox = Outbox::open(ds.clone(), config).await.unwrap();
    support::publish_sqlite(&outbox, vec![NewMessage::text("a")]).await;

    let base = ["outbox", "--db", db.as_str(), "--outbox", "orders"];
    let run = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        camel(&args)
    };
    for action in [&["counts"][..], &["retry-dead", "--all"]] {
        let out = run(action);
        assert!(!out.status.success());
        let said = text(&out);
        assert!(said.contains("no outbox named `orders`"), "{said}");
        assert!(said.contains("camel_outbox_orders"), "{said}");
        assert!(!said.contains("no such table"), "no raw SQL error: {said}");
    }
    let out = run(&["--table", "shop_outbox", "counts"]);
    assert!(text(&out).contains("pending: 1\n"), "{}", text(&out));
    let out = run(&["--table", "shop_outbox", "discard", "--id", "-5"]);
    assert!(text(&out).contains("no message -5"), "{}", text(&out));
    let out = run(&["--table", "shop_outbox", "retry-dead", "--id", "-5"]);
    assert!(text(&out).contains("revived 0"), "{}", text(&out));
}

#[test]
fn an_unreachable_database_answers_after_connect_timeout_naming_host_and_port() {
    let started = Instant::now();
    let out = camel(&[
        "outbox",
        "--db",
        "postgres://app:hunter9@127.0.0.1:1/db?connect_timeout=1",
        "--outbox",
        "orders",
        "counts",
    ]);
    let took = started.elapsed();
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("127.0.0.1:1"), "{said}");
    assert!(!said.contains("hunter9"), "{said}");
    assert!(
        !said.contains("ignoring unrecognized connect parameter"),
        "connect_timeout is not warned away: {said}"
    );
    assert!(took < Duration::from_secs(10), "took {took:?}: {said}");
}
