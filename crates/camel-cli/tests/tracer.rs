//! The backlog tracer through the binary: `camel run --trace` keeps each exchange's
//! steps, `camel trace` prints them, the admin API turns it on for a running route,
//! credentials never show, and a flood of 10 MB bodies stays within the memory bound.

mod support;

use std::process::{Command, Output};
use std::time::Duration;

use support::admin_api::{admin_client, send, Camel, LIMIT, TOKEN};

const ROUTES: &str = r#"
- route:
    id: orders
    from:
      uri: platform-http:/orders
      steps:
        - set_header: {name: Authorization, constant: "Bearer tok-SECRET-1"}
        - set_header: {name: db_password, constant: "pw-SECRET-2"}
        - set_body: {simple: "checked ${body}", id: check}
        - to: direct:audit
- route:
    id: audit
    from:
      uri: direct:audit
      steps:
        - log: "audited ${body}"
"#;

fn camel_trace(args: &[&str], addr: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_camel"))
        .arg("trace")
        .args(args)
        .args(["--admin-addr", addr])
        .env("CAMEL_ADMIN_TOKEN", TOKEN)
        .env_remove("CAMEL_ADMIN_ADDR")
        .output()
        .expect("the camel binary runs")
}

fn start(routes: &str, more: &[&str]) -> (tempfile::TempDir, Camel) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, routes).unwrap();
    let mut args = vec!["--port", "0"];
    args.extend_from_slice(more);
    let camel = Camel::start_with(&file, dir.path(), &args);
    (dir, camel)
}

/// The first log line with `needle`, whether read already or still to come.
async fn line_with(camel: &mut Camel, needle: &str) -> String {
    match camel.log().iter().find(|l| l.contains(needle)).cloned() {
        Some(line) => line,
        None => camel.wait_for(needle).await,
    }
}

/// The ports of the HTTP server and of the admin API.
async fn addresses(camel: &mut Camel) -> (u16, String) {
    let port = support::serving_port(&line_with(camel, "serving http://").await);
    let line = line_with(camel, "admin API listening").await;
    let addr = line
        .split("addr=")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .expect("the log names the address")
        .to_string();
    (port, addr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn camel_trace_shows_the_steps_of_an_exchange() {
    let (_dir, mut camel) = start(ROUTES, &["--trace=orders"]);
    let (port, addr) = addresses(&mut camel).await;
    let base = format!("http://{addr}");
    let http = reqwest::Client::new();
    for n in 1..=2 {
        let resp = http
            .post(format!("http://127.0.0.1:{port}/orders"))
            .header("X-Api-Key", "key-SECRET-3")
            .body(format!("order-{n}"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        assert_eq!(resp.text().await.unwrap(), format!("checked order-{n}"));
    }

    let out = camel_trace(&["orders", "--no-follow"], &addr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Each exchange, then its steps in order, with the body as each step left it.
    let first = stdout.find("orders  ID-").expect("an exchange line");
    let exchange = &stdout[first..];
    let at = |needle: &str| {
        exchange
            .find(needle)
            .unwrap_or_else(|| panic!("no `{needle}` in:\n{stdout}"))
    };
    assert!(
        exchange.starts_with("orders  ID-") && exchange.contains("completed"),
        "{stdout}"
    );
    assert!(
        at("from  platform-http:/orders") < at("steps[0].set_header"),
        "{stdout}"
    );
    assert!(
        at("steps[1].set_header") < at("check (set_body)"),
        "{stdout}"
    );
    assert!(at("check (set_body)") < at("steps[3].to"), "{stdout}");
    assert!(at("body (Bytes, 7 bytes): order-1") < at("body (Text, 15 bytes): checked order-1"));
    assert!(
        stdout.contains("checked order-2"),
        "both exchanges: {stdout}"
    );
    // Credentials are masked: a header named as one, the HTTP ones.
    for secret in ["tok-SECRET-1", "pw-SECRET-2", "key-SECRET-3"] {
        assert!(!stdout.contains(secret), "{secret} shown:\n{stdout}");
    }
    assert!(stdout.contains("Authorization=***"), "{stdout}");
    assert!(stdout.contains("db_password=***"), "{stdout}");

    // The JSON form, one exchange a line, the same records.
    let out = camel_trace(&["orders", "--no-follow", "-o", "json"], &addr);
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let kinds: Vec<&str> = lines[0]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["kind"].as_str())
        .collect();
    assert_eq!(
        kinds,
        ["from", "set_header", "set_header", "set_body", "to"]
    );
    assert!(!lines[0].to_string().contains("SECRET"), "{}", lines[0]);

    // The route called through `direct:` is not traced: only `orders` was asked for.
    let admin = admin_client();
    let (status, audit) = send(admin.get(format!("{base}/routes/audit/trace"))).await;
    assert_eq!(status, 200, "{audit}");
    assert_eq!(audit["enabled"], false);
    assert_eq!(audit["exchanges"].as_array().map(Vec::len), Some(0));

    // Turned on while it runs (the route is recompiled), `camel trace` follows it: a
    // follower started first sees the exchange sent after it.
    let (status, on) = send(admin.post(format!("{base}/routes/audit/trace/start"))).await;
    assert_eq!(
        (status, &on["recompiled"]),
        (200, &serde_json::json!(true)),
        "{on}"
    );
    let follower = {
        let addr = addr.clone();
        std::thread::spawn(move || {
            camel_trace(
                &[
                    "audit",
                    "--since-now",
                    "--max-exchanges",
                    "1",
                    "--interval",
                    "0.1",
                ],
                &addr,
            )
        })
    };
    // Until the follower has taken its first look, exchanges sent count as "before".
    let deadline = std::time::Instant::now() + LIMIT;
    let mut seen = String::new();
    while !follower.is_finished() {
        assert!(
            std::time::Instant::now() < deadline,
            "camel trace saw nothing"
        );
        http.post(format!("http://127.0.0.1:{port}/orders"))
            .body("late")
            .send()
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let out = follower.join().unwrap();
    seen.push_str(&String::from_utf8_lossy(&out.stdout));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(seen.starts_with("audit  ID-"), "{seen}");
    assert!(seen.contains("steps[0].log"), "{seen}");

    // Off: nothing more is kept.
    let (status, _) = send(admin.post(format!("{base}/routes/orders/trace/stop"))).await;
    assert_eq!(status, 200);
    let (_, before) = send(admin.get(format!("{base}/routes/orders/trace"))).await;
    http.post(format!("http://127.0.0.1:{port}/orders"))
        .body("unseen")
        .send()
        .await
        .unwrap();
    let (_, after) = send(admin.get(format!("{base}/routes/orders/trace"))).await;
    assert_eq!(before["exchanges"], after["exchanges"]);
    assert_eq!(after["enabled"], false);

    // A change needs the token; an unknown route is 404.
    let bare = reqwest::Client::new();
    let (status, _) = send(bare.post(format!("{base}/trace/start"))).await;
    assert_eq!(status, 401);
    let (status, _) = send(admin.get(format!("{base}/routes/nope/trace"))).await;
    assert_eq!(status, 404);
    let (status, _) = send(admin.get(format!("{base}/trace?since=x"))).await;
    assert_eq!(status, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_10_mb_bodies_stays_within_the_tracer_bound() {
    const MAX_BYTES: usize = 1024 * 1024;
    const BODY: usize = 10 * 1024 * 1024;
    let routes = r#"
- route:
    id: flood
    from:
      uri: platform-http:/flood?max_body_size=20000000
      steps:
        - set_header: {name: seen, constant: "yes"}
        - set_body: {simple: "${body}${body}"}
        - set_header: {name: doubled, constant: "yes"}
"#;
    let max = MAX_BYTES.to_string();
    let (_dir, mut camel) = start(
        routes,
        &[
            "--trace",
            "--trace-max-bytes",
            &max,
            "--trace-capacity",
            "50",
        ],
    );
    let (port, addr) = addresses(&mut camel).await;
    let base = format!("http://{addr}");
    let admin = admin_client();
    let http = reqwest::Client::new();
    let body = vec![b'x'; BODY];
    for _ in 0..12 {
        let resp = http
            .post(format!("http://127.0.0.1:{port}/flood"))
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        assert_eq!(resp.bytes().await.unwrap().len(), 2 * BODY);
        let (status, trace) = send(admin.get(format!("{base}/trace"))).await;
        assert_eq!(status, 200);
        let held = trace["held_bytes"].as_u64().expect("a held-bytes figure") as usize;
        assert!(held <= MAX_BYTES, "the tracer holds {held} bytes");
        assert_eq!(trace["max_bytes"], MAX_BYTES);
    }
    let (_, trace) = send(admin.get(format!("{base}/routes/flood/trace"))).await;
    let kept = trace["exchanges"].as_array().expect("records");
    assert!(!kept.is_empty(), "{trace}");
    let sum: u64 = kept.iter().filter_map(|r| r["bytes"].as_u64()).sum();
    assert_eq!(sum, trace["held_bytes"].as_u64().unwrap_or(0));
    // Each body is cut at 32 KiB (the default) and says how large it was.
    let last = kept.last().unwrap();
    let doubled = &last["steps"][2]["body"];
    assert_eq!(doubled["size"], 2 * BODY, "{doubled}");
    assert_eq!(doubled["truncated"], true);
    assert_eq!(doubled["text"].as_str().map(str::len), Some(32 * 1024));
    // About 4 entries of 32 KiB an exchange: a 1 MiB budget holds a handful of them.
    assert!(kept.len() < 12, "{} records kept", kept.len());
}
