//! The binary's operational surface: `camel outbox` subcommands on a real SQLite outbox,
//! a graceful stop on SIGTERM, `--max-seconds`, and `--metrics-addr`.

mod support;

use std::process::Command;
use std::time::Duration;

use camel_outbox::admin::OutboxAdmin;
use camel_outbox::{Datasource, MaxAttempts, NewMessage, Outbox, OutboxConfig, Relay};
use support::{camel, spawn, text, wait_line};

#[tokio::test]
async fn outbox_subcommands_count_discard_and_revive() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("ops.db").display());
    let ds = Datasource::connect(&db).unwrap();
    let mut config = OutboxConfig::new("orders");
    config.max_attempts = MaxAttempts::Limit(1);
    let outbox = Outbox::open(ds.clone(), config.clone()).await.unwrap();
    let batch = ["a", "b", "poison"]
        .iter()
        .map(|b| NewMessage::text(*b).group(*b))
        .collect();
    let ids = support::publish_sqlite(&outbox, batch).await;

    let base = ["outbox", "--db", db.as_str(), "--outbox", "orders"];
    let run = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        camel(&args)
    };
    let out = run(&["counts"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("pending: 3\n"), "{}", text(&out));

    let first = ids[0].to_string();
    let out = run(&["discard", "--id", &first]);
    assert!(
        text(&out).contains(&format!("discarded {first}")),
        "{}",
        text(&out)
    );
    let out = run(&["discard", "--id", "999999"]);
    assert!(text(&out).contains("no message 999999"), "{}", text(&out));
    assert!(text(&run(&["counts"])).contains("pending: 2\n"));

    // Kill "poison" (one attempt allowed), then revive it with its id.
    let poisoned = std::sync::Arc::new(tokio::sync::Notify::new());
    let relay = {
        let poisoned = poisoned.clone();
        Relay::new(outbox.clone(), move |m| {
            let poisoned = poisoned.clone();
            async move {
                if m.payload == b"poison".to_vec() {
                    poisoned.notify_one();
                    return Err(camel_api::CamelError::processor("poison"));
                }
                Ok(())
            }
        })
        .spawn()
    };
    tokio::time::timeout(Duration::from_secs(20), poisoned.notified())
        .await
        .expect("poison delivered");
    relay.shutdown().await.unwrap();
    let admin = OutboxAdmin::from_config(ds.clone(), &config).unwrap();
    assert_eq!(admin.counts().await.unwrap().dead, 1);

    let out = run(&["retry-dead"]);
    assert!(!out.status.success(), "retry-dead needs --id or --all");
    assert!(text(&out).contains("--all"), "{}", text(&out));
    let poison = ids[2].to_string();
    let out = run(&["retry-dead", "--id", &poison]);
    assert!(
        text(&out).contains("revived 1 dead message(s)"),
        "{}",
        text(&out)
    );
    let out = run(&["counts"]);
    assert!(text(&out).contains("pending: 1\n"), "{}", text(&out));
    assert!(text(&out).contains("dead: 0\n"), "{}", text(&out));
}

#[test]
fn sigterm_stops_gracefully() {
    let (mut child, rx) = spawn(&["run", "examples/hello/routes.yaml"]);
    wait_line(&rx, "Hello from Camel");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let line = wait_line(&rx, "stopping");
    assert!(
        line.contains("SIGTERM") || line.contains("signal"),
        "{line}"
    );
    wait_line(&rx, "stopped");
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn max_seconds_stops_the_run() {
    let out = camel(&["run", "examples/hello/routes.yaml", "--max-seconds", "1"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("max-seconds"), "{}", text(&out));
}

#[test]
fn metrics_addr_serves_prometheus_text() {
    // Pick a free port (the exporter cannot report one it chose itself).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let (mut child, rx) = spawn(&["run", "examples/hello/routes.yaml", "--metrics-addr", &addr]);
    wait_line(&rx, "Hello from Camel");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let body = rt.block_on(async {
        reqwest::get(format!("http://{addr}/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    });
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        body.contains("camel_exchanges_total{routeId=\"hello\"}"),
        "{body}"
    );
}
