//! A marker secret in every credential position of a URI never appears in any output of
//! the binary: `camel validate`, `camel run` with `RUST_LOG=trace`, and the admin API
//! (route list, one route, a failing PUT, `/metrics`). Issue 10, item 8; ADR 0042.

mod support;

use support::admin_api::{admin_client, send, Camel};

const MARK: &str = "M4RKER";

/// Steps holding the marker as a userinfo password, as `password`, `secret_key`,
/// `access_key`, `session_token` options (in the URI and in `parameters`), inside a URL
/// given as an option's value, and as a password containing `?`. Nothing listens on
/// 127.0.0.1:1, so every connection fails and prints its error. `extra` is appended to
/// each URI's query (an unknown option makes `validate` print the URI).
fn steps(extra: &str) -> String {
    format!(
        r#"
        - to:
            uri: "sqs:q?region=us-east-1&endpoint=http://u:{MARK}@127.0.0.1:1&access_key={MARK}&secret_key={MARK}&session_token={MARK}&linger_ms=5{extra}"
        - to:
            uri: "sqs:q2?region=us-east-1&endpoint=http://127.0.0.1:1&linger_ms=5{extra}"
            parameters: {{access_key: {MARK}, secret_key: {MARK}}}
        - to: "outbox:o?datasource=postgres://app:{MARK}@127.0.0.1:1/db?connect_timeout=1{extra}"
        - to: "outbox:p?datasource=postgres://app:{MARK}?x@127.0.0.1:1/db{extra}"
        - to: "nats:s?servers=nats://u:{MARK}?q@127.0.0.1:1,nats://v:{MARK}@127.0.0.1:1&linger_ms=5{extra}"
        - to: "nats:t?servers=nats://u:{MARK}@127.0.0.1:1&linger_ms=5{extra}"
"#
    )
}

fn routes(extra: &str, timer: &str) -> String {
    let mut out = String::new();
    // One route per step, so one failing connection does not hide the next one's output.
    for (i, step) in steps(extra).split("\n        - ").skip(1).enumerate() {
        out.push_str(&format!(
            "- route:\n    id: r{i}\n    from:\n      uri: \"timer:t{i}?{timer}\"\n      steps:\n        - set_body: {{constant: hi}}\n        - {step}\n"
        ));
    }
    out
}

fn assert_hidden(what: &str, output: &str) {
    assert!(
        !output.contains(MARK),
        "{what} shows the secret:\n{}",
        output
            .lines()
            .filter(|l| l.contains(MARK))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Routes that do not compile, each error naming a URI with the marker: an unknown option
/// on every step above, and a MySQL datasource (refused as unsupported).
fn broken_routes() -> String {
    format!(
        "{}- route:\n    id: mysql\n    from:\n      uri: timer:m\n      steps:\n        - to: \"outbox:m?datasource=mysql://app:{MARK}@127.0.0.1:1/db\"\n",
        routes("&bogus=1", "period=100")
    )
}

#[test]
fn validate_errors_show_no_credential() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, broken_routes()).unwrap();
    let out = support::camel(&["validate", file.to_str().unwrap()]);
    let text = support::text(&out);
    assert!(!out.status.success(), "{text}");
    assert_eq!(
        text.matches("unknown parameter `bogus`").count(),
        6,
        "{text}"
    );
    assert!(text.contains("mysql://***@127.0.0.1:1/db"), "{text}");
    assert_hidden("camel validate", &text);
}

#[test]
fn watch_reload_errors_show_no_credential() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, "- from: {uri: 'timer:idle?delay=3600000'}\n").unwrap();
    let path = file.to_str().unwrap();
    let (mut child, lines) = support::spawn(&["run", path, "--watch", "--max-seconds", "60"]);
    support::wait_line(&lines, "route started");
    std::fs::write(&file, broken_routes()).unwrap();
    let mut seen = Vec::new();
    loop {
        let line = support::wait_line(&lines, "");
        let done = line.contains("running routes are unchanged");
        seen.push(line);
        if done {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let seen = seen.join("\n");
    assert!(seen.contains("bogus"), "{seen}");
    assert_hidden("a --watch reload", &seen);
}

#[test]
fn run_at_trace_logs_no_credential() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, routes("", "period=200&repeat_count=2")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_camel"))
        .args(["run", file.to_str().unwrap(), "--max-seconds", "2"])
        .current_dir(dir.path())
        .env("RUST_LOG", "trace")
        .output()
        .expect("the camel binary runs");
    let text = support::text(&out);
    // The run did reach the clients (the SDK's own spans are there), so the test would
    // see what they log.
    assert!(text.contains("route started"), "{text}");
    assert!(text.contains("timer exchange failed"), "{text}");
    assert_hidden("camel run with RUST_LOG=trace", &text);
}

#[tokio::test]
async fn admin_api_shows_no_credential() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    // Timers far in the future: the routes start, nothing connects.
    std::fs::write(&file, routes("", "delay=3600000")).unwrap();
    let mut camel = Camel::start_in(&file, dir.path());
    let base = camel.base_url().await;
    let http = admin_client();

    let (code, list) = send(http.get(format!("{base}/routes"))).await;
    assert_eq!(code, 200, "{list}");
    assert_hidden("GET /routes", &list.to_string());
    for i in 0..6 {
        let (code, one) = send(http.get(format!("{base}/routes/r{i}"))).await;
        assert_eq!(code, 200, "{one}");
        assert_hidden("GET /routes/{id}", &one.to_string());
    }
    // A failing PUT: the error names the URI.
    let bad = routes("&bogus=1", "delay=3600000");
    let bad = bad
        .split("- route:")
        .nth(1)
        .unwrap()
        .replace("id: r0", "id: x");
    let (code, r) = send(
        http.put(format!("{base}/routes/x"))
            .body(format!("- route:{bad}")),
    )
    .await;
    assert_eq!(code, 400, "{r}");
    assert!(r.to_string().contains("bogus"), "{r}");
    assert_hidden("a failing PUT", &r.to_string());
    let (code, metrics) = send(http.get(format!("{base}/metrics"))).await;
    assert_eq!(code, 200);
    assert_hidden("/metrics", &metrics.to_string());
    assert_hidden("the log", &camel.log().join("\n"));
}
