//! `camel get routes|health`, `camel top` and `camel cmd` against a running `camel run
//! --admin-addr`: what they print follows what the process does.

mod support;

use std::process::{Command, Output};

use support::admin_api::{Camel, LIMIT, TOKEN};

/// `camel ARGS --admin-addr ADDR`, with the token in the environment unless `token` is
/// false.
fn client(args: &[&str], addr: &str, token: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_camel"));
    cmd.args(args).args(["--admin-addr", addr]);
    if token {
        cmd.env("CAMEL_ADMIN_TOKEN", TOKEN);
    } else {
        cmd.env_remove("CAMEL_ADMIN_TOKEN");
    }
    cmd.env_remove("CAMEL_ADMIN_ADDR")
        .output()
        .expect("the camel binary runs")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `camel get routes -o json` until `ok` holds for the route `tick`.
fn until_route(addr: &str, ok: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let deadline = std::time::Instant::now() + LIMIT;
    loop {
        let out = client(&["get", "routes", "-o", "json"], addr, true);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{stderr}");
        let rows: serde_json::Value = serde_json::from_str(&stdout).expect("JSON rows");
        let tick = rows
            .as_array()
            .and_then(|r| r.iter().find(|r| r["id"] == "tick"))
            .cloned()
            .expect("the route is listed");
        if ok(&tick) {
            return tick;
        }
        assert!(std::time::Instant::now() < deadline, "route now: {tick}");
        // The exchange counters reach the metrics every second (ADR 0047).
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_top_and_cmd_follow_the_running_process() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(
        &file,
        "- route:\n    id: tick\n    from:\n      uri: timer:tick?period=10\n      steps:\n        - delay: {constant: 2}\n",
    )
    .unwrap();
    let mut camel = Camel::start(&file);
    let base = camel.base_url().await;
    let addr = base.trim_start_matches("http://").to_string();

    // Counts, uptime and a duration show once exchanges ran.
    let tick = until_route(&addr, |t| t["total"].as_f64().unwrap_or(0.0) >= 5.0);
    assert_eq!(tick["status"], "Started", "{tick}");
    assert!(tick["uptime_seconds"].as_f64().is_some(), "{tick}");
    let mean = tick["mean_seconds"].as_f64().expect("a mean duration");
    assert!(mean >= 0.002, "each exchange waits 2 ms: {tick}");
    assert_eq!(tick["from"], "timer:tick?period=10", "{tick}");

    let out = client(&["get", "routes"], &addr, true);
    let (table, _) = text(&out);
    let mut lines = table.lines();
    let header = lines.next().unwrap_or_default();
    for column in [
        "ID", "STATUS", "AGE", "TOTAL", "FAILED", "INFLIGHT", "MEAN", "P99", "FROM",
    ] {
        assert!(header.contains(column), "{table}");
    }
    assert!(
        lines.next().unwrap_or_default().starts_with("tick  "),
        "{table}"
    );

    let out = client(
        &["top", "--iterations", "1", "--interval", "0.3"],
        &addr,
        true,
    );
    let (top, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(top.contains("RATE/S") && top.contains("tick"), "{top}");

    let out = client(&["get", "health"], &addr, true);
    let (health, _) = text(&out);
    assert!(out.status.success(), "{health}");
    assert!(health.starts_with("ready: UP"), "{health}");
    assert!(
        health.contains("route:tick"),
        "every check is listed with the token: {health}"
    );

    // Stop it, as Camel JBang spells the command; readiness then fails on it.
    let out = client(&["cmd", "stop-route", "--id", "tick"], &addr, true);
    let (said, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(said.trim(), "tick: Stopped");
    until_route(&addr, |t| t["status"] == "Stopped");
    let out = client(&["get", "health"], &addr, true);
    let (health, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{health}");
    assert!(health.contains("the route is stopped"), "{health}");

    let out = client(&["cmd", "start", "tick"], &addr, true);
    assert_eq!(text(&out).0.trim(), "tick: Started");
    let out = client(&["cmd", "resume", "nope"], &addr, true);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("404"), "{stderr}");

    // Without the token: the route listing is refused with what to give.
    let out = client(&["get", "routes"], &addr, false);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("--admin-token-file"), "{stderr}");
}

#[test]
fn nothing_listening_is_said_plainly() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = client(&["get", "routes"], &format!("127.0.0.1:{port}"), false);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("cannot reach the admin API"), "{stderr}");
    assert!(stderr.contains("camel run --admin-addr"), "{stderr}");
}
