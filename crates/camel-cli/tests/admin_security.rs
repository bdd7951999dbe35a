//! The admin API's protections, on the real binary (issue 24, item 3): the bearer token,
//! the Host allow-list, the Origin check on changes, JSON/YAML bodies only, the refusal
//! of a public bind without a token, and the connection bounds.
//!
//! Requests go over raw TCP so every header is exactly what a hostile page or client
//! would send (an HTTP client library would fix the Host up).

mod support;

use std::process::Command;
use std::time::Duration;

use support::admin_api::{Camel, LIMIT, TOKEN};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{timeout, Instant};

const ROUTE: &str = "- route:\n    id: ticks\n    from: {uri: 'timer:ticks', parameters: {period: 3600000, delay: 3600000}}\n    steps:\n      - log: tick\n";

fn routes_file(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, ROUTE).unwrap();
    file
}

/// The `host:port` the admin API listens on.
async fn addr_of(camel: &mut Camel) -> String {
    let base = camel.base_url().await;
    base.trim_start_matches("http://").to_string()
}

/// One request over a fresh connection; the status and the whole answer.
async fn raw(addr: &str, request: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    stream.write_all(request.as_bytes()).await.expect("writes");
    let mut answer = Vec::new();
    timeout(LIMIT, stream.read_to_end(&mut answer))
        .await
        .expect("the admin API answers in time")
        .expect("reads");
    let text = String::from_utf8_lossy(&answer).into_owned();
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, text)
}

/// A request with `Host: host`, the given header lines, and `body` (a Content-Length
/// when there is one).
fn request(method: &str, path: &str, host: &str, headers: &[&str], body: &str) -> String {
    let mut out = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for h in headers {
        out.push_str(h);
        out.push_str("\r\n");
    }
    if !body.is_empty() || method != "GET" {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    out.push_str("\r\n");
    out.push_str(body);
    out
}

fn bearer() -> String {
    format!("Authorization: Bearer {TOKEN}")
}

/// The route's status as the API lists it (with the token).
async fn status_of(addr: &str) -> String {
    let (code, text) = raw(
        addr,
        &request("GET", "/routes/ticks", addr, &[&bearer()], ""),
    )
    .await;
    assert_eq!(code, 200, "{text}");
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    v["status"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn changes_and_reads_but_health_need_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let mut camel = Camel::start(&routes_file(&dir));
    let addr = addr_of(&mut camel).await;
    let stop = |auth: &[&str]| request("POST", "/routes/ticks/stop", &addr, auth, "");

    let (code, text) = raw(&addr, &stop(&[])).await;
    assert_eq!(code, 401, "{text}");
    assert!(
        text.contains("WWW-Authenticate: Bearer") || text.contains("www-authenticate: Bearer"),
        "{text}"
    );
    let wrong = format!("Authorization: Bearer {TOKEN}x");
    assert_eq!(raw(&addr, &stop(&[&wrong])).await.0, 401);
    let basic = "Authorization: Basic dGVzdDp0ZXN0";
    assert_eq!(raw(&addr, &stop(&[basic])).await.0, 401);
    let put = request(
        "PUT",
        "/routes/ticks",
        &addr,
        &["Content-Type: application/yaml"],
        ROUTE,
    );
    assert_eq!(raw(&addr, &put).await.0, 401);
    assert_eq!(status_of(&addr).await, "Started", "nothing changed");

    // A route's definition may hold secrets: with a token, reads need it too.
    for path in ["/routes", "/routes/ticks", "/metrics"] {
        let (code, text) = raw(&addr, &request("GET", path, &addr, &[], "")).await;
        assert_eq!(code, 401, "{path}: {text}");
    }
    let (code, text) = raw(&addr, &request("GET", "/health", &addr, &[], "")).await;
    assert_eq!(code, 200, "health stays open: {text}");

    let (code, text) = raw(&addr, &stop(&[&bearer()])).await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(status_of(&addr).await, "Stopped");
}

#[tokio::test]
async fn without_a_token_the_api_answers_reads_and_refuses_changes() {
    let dir = tempfile::tempdir().unwrap();
    let file = routes_file(&dir);
    let args = [file.to_str().unwrap(), "--admin-addr", "127.0.0.1:0"];
    let mut camel = Camel::start_args(&args, dir.path());
    let addr = addr_of(&mut camel).await;
    let (code, text) = raw(&addr, &request("GET", "/routes", &addr, &[], "")).await;
    assert_eq!(code, 200, "{text}");
    let (code, text) = raw(
        &addr,
        &request("POST", "/routes/ticks/stop", &addr, &[], ""),
    )
    .await;
    assert_eq!(code, 401, "{text}");
    assert!(text.contains("--admin-token-file"), "{text}");
    // Even one that brings a token: none was configured to compare it with.
    let (code, _) = raw(
        &addr,
        &request("DELETE", "/routes/ticks", &addr, &[&bearer()], ""),
    )
    .await;
    assert_eq!(code, 401);
    let (_, text) = raw(&addr, &request("GET", "/routes", &addr, &[], "")).await;
    assert!(text.contains("\"Started\""), "nothing changed: {text}");
}

#[tokio::test]
async fn a_host_that_is_not_allowed_is_refused_even_with_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let file = routes_file(&dir);
    let mut camel = Camel::start_with(
        &file,
        dir.path(),
        &["--admin-allowed-host", "admin.example"],
    );
    let addr = addr_of(&mut camel).await;
    let port = addr.rsplit(':').next().unwrap_or_default().to_string();
    // What a page whose DNS name was rebound to 127.0.0.1 sends: its own name.
    for host in [
        format!("rebound.example:{port}"),
        "localhost.rebound.example".to_string(),
        String::new(),
    ] {
        let (code, text) = raw(&addr, &request("GET", "/routes", &host, &[&bearer()], "")).await;
        assert_eq!(code, 421, "Host `{host}`: {text}");
        let stop = request("POST", "/routes/ticks/stop", &host, &[&bearer()], "");
        let (code, text) = raw(&addr, &stop).await;
        assert_eq!(code, 421, "Host `{host}`: {text}");
    }
    assert_eq!(status_of(&addr).await, "Started", "nothing changed");
    for host in [
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
        "LocalHost".to_string(),
        format!("admin.example:{port}"),
    ] {
        let (code, text) = raw(&addr, &request("GET", "/routes", &host, &[&bearer()], "")).await;
        assert_eq!(code, 200, "Host `{host}`: {text}");
    }
}

#[tokio::test]
async fn an_absolute_form_target_is_checked_by_its_authority_not_only_by_host() {
    let dir = tempfile::tempdir().unwrap();
    let mut camel = Camel::start(&routes_file(&dir));
    let addr = addr_of(&mut camel).await;
    // RFC 9112 section 3.2.2: with an absolute-form target the server takes the target's
    // authority and ignores Host, so an allowed Host must not vouch for another authority.
    for target in [
        "http://evil.example/routes/ticks/stop",
        "http://rebound.example:80/routes/ticks/stop",
        "http://user@127.0.0.1/routes/ticks/stop",
    ] {
        let stop = request("POST", target, &addr, &[&bearer()], "");
        let (code, text) = raw(&addr, &stop).await;
        assert_eq!(code, 421, "{target}: {text}");
        let read = request("GET", &target.replace("/stop", ""), &addr, &[&bearer()], "");
        let (code, text) = raw(&addr, &read).await;
        assert_eq!(code, 421, "GET {target}: {text}");
    }
    assert_eq!(status_of(&addr).await, "Started", "nothing changed");
    // An allowed authority with a Host that is not allowed: both are checked.
    let target = format!("http://{addr}/routes/ticks/stop");
    let stop = request("POST", &target, "evil.example", &[&bearer()], "");
    let (code, text) = raw(&addr, &stop).await;
    assert_eq!(code, 421, "{text}");
    assert_eq!(status_of(&addr).await, "Started", "nothing changed");
    // An allowed authority with an allowed Host is served like the origin form.
    let stop = request("POST", &target, &addr, &[&bearer()], "");
    let (code, text) = raw(&addr, &stop).await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(status_of(&addr).await, "Stopped");
}

#[tokio::test]
async fn a_request_with_more_than_one_host_header_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut camel = Camel::start(&routes_file(&dir));
    let addr = addr_of(&mut camel).await;
    // RFC 9112 section 3.2: more than one Host line is answered 400, whichever comes first.
    for second in [
        "Host: evil.example",
        "Host: 127.0.0.1",
        "host: evil.example",
    ] {
        let stop = request(
            "POST",
            "/routes/ticks/stop",
            &addr,
            &[&bearer(), second],
            "",
        );
        let (code, text) = raw(&addr, &stop).await;
        assert_eq!(code, 400, "{second}: {text}");
        assert!(text.contains("Host"), "{text}");
        let read = request("GET", "/routes", &addr, &[&bearer(), second], "");
        let (code, text) = raw(&addr, &read).await;
        assert_eq!(code, 400, "GET, {second}: {text}");
    }
    let first_evil = format!(
        "POST /routes/ticks/stop HTTP/1.1\r\nHost: evil.example\r\nHost: {addr}\r\n{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        bearer()
    );
    let (code, text) = raw(&addr, &first_evil).await;
    assert_eq!(code, 400, "{text}");
    assert_eq!(status_of(&addr).await, "Started", "nothing changed");
}

#[tokio::test]
async fn a_change_from_another_origin_is_forbidden() {
    let dir = tempfile::tempdir().unwrap();
    let mut camel = Camel::start(&routes_file(&dir));
    let addr = addr_of(&mut camel).await;
    for origin in [
        "http://evil.example",
        "null",
        "http://127.0.0.1.evil.example:80",
    ] {
        let origin_line = format!("Origin: {origin}");
        let stop = request(
            "POST",
            "/routes/ticks/stop",
            &addr,
            &[&bearer(), &origin_line],
            "",
        );
        let (code, text) = raw(&addr, &stop).await;
        assert_eq!(code, 403, "Origin {origin}: {text}");
    }
    assert_eq!(status_of(&addr).await, "Started", "nothing changed");
    // A read from another origin is answered (the browser keeps it from the page: no
    // CORS headers), and the API's own origin may change things.
    let evil = "Origin: http://evil.example";
    let (code, _) = raw(&addr, &request("GET", "/health", &addr, &[evil], "")).await;
    assert_eq!(code, 200);
    let own = format!("Origin: http://{addr}");
    let stop = request("POST", "/routes/ticks/stop", &addr, &[&bearer(), &own], "");
    let (code, text) = raw(&addr, &stop).await;
    assert_eq!(code, 200, "{text}");
}

#[tokio::test]
async fn a_change_takes_only_a_json_or_yaml_body() {
    let dir = tempfile::tempdir().unwrap();
    let mut camel = Camel::start(&routes_file(&dir));
    let addr = addr_of(&mut camel).await;
    let swapped = ROUTE.replace("log: tick", "log: swapped");
    // The bodies a cross-origin page can send without a preflight.
    for content_type in [
        "Content-Type: text/plain",
        "Content-Type: text/plain;charset=UTF-8",
        "Content-Type: application/x-www-form-urlencoded",
        "Content-Type: multipart/form-data; boundary=x",
    ] {
        let put = request(
            "PUT",
            "/routes/ticks",
            &addr,
            &[&bearer(), content_type],
            &swapped,
        );
        let (code, text) = raw(&addr, &put).await;
        assert_eq!(code, 415, "{content_type}: {text}");
        let stop = request(
            "POST",
            "/routes/ticks/stop",
            &addr,
            &[&bearer(), content_type],
            "x",
        );
        assert_eq!(raw(&addr, &stop).await.0, 415, "{content_type}");
    }
    // A body without a type.
    let put = request("PUT", "/routes/ticks", &addr, &[&bearer()], &swapped);
    assert_eq!(raw(&addr, &put).await.0, 415);
    let (_, text) = raw(
        &addr,
        &request("GET", "/routes/ticks", &addr, &[&bearer()], ""),
    )
    .await;
    assert!(
        text.contains("\"tick\"") && !text.contains("swapped"),
        "{text}"
    );

    for content_type in [
        "Content-Type: application/yaml",
        "Content-Type: application/json; charset=utf-8",
    ] {
        let body = if content_type.contains("json") {
            serde_json::json!([{"route": {"id": "ticks", "from": {"uri": "timer:ticks", "parameters": {"period": 3600000, "delay": 3600000}, "steps": [{"log": "swapped"}]}}}]).to_string()
        } else {
            swapped.clone()
        };
        let put = request(
            "PUT",
            "/routes/ticks",
            &addr,
            &[&bearer(), content_type],
            &body,
        );
        let (code, text) = raw(&addr, &put).await;
        assert_eq!(code, 200, "{content_type}: {text}");
    }
    // A body-less change needs no type.
    let stop = request("POST", "/routes/ticks/stop", &addr, &[&bearer()], "");
    assert_eq!(raw(&addr, &stop).await.0, 200);
}

/// `camel run` with only the given environment: no token from the test's own.
fn run_refused(args: &[&str], token: Option<&str>) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_camel"));
    // `--max-seconds`: should the check be missing, the run still ends (status 0).
    cmd.arg("run")
        .args(args)
        .args(["--max-seconds", "5"])
        .env_remove("CAMEL_ADMIN_TOKEN")
        .current_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    if let Some(token) = token {
        cmd.env("CAMEL_ADMIN_TOKEN", token);
    }
    // Refused before a route starts or a port binds.
    let out = cmd.output().expect("the camel binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_public_admin_address_without_a_token_is_a_startup_error() {
    let routes = "examples/hello/routes.yaml";
    for addr in ["0.0.0.0:0", "[::]:0", "192.0.2.1:9464"] {
        let (code, err) = run_refused(&[routes, "--admin-addr", addr], None);
        assert_eq!(code, Some(1), "{addr}: {err}");
        assert!(err.contains("needs a token"), "{addr}: {err}");
    }
    let (code, err) = run_refused(&[routes, "--admin-addr", "0.0.0.0:0"], Some("short"));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("shorter than 16"), "{err}");
    let missing = "/nonexistent/camel-admin-token";
    let (code, err) = run_refused(
        &[
            routes,
            "--admin-addr",
            "9464",
            "--admin-token-file",
            missing,
        ],
        None,
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(missing), "{err}");
}

/// Reads until the peer closes; the bytes read. Panics if it stays open past `LIMIT`.
async fn until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut seen = Vec::new();
    timeout(LIMIT, stream.read_to_end(&mut seen))
        .await
        .expect("the admin API closed the connection")
        .ok();
    seen
}

#[tokio::test]
async fn idle_connections_are_bounded_and_closed_after_the_header_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let file = routes_file(&dir);
    let mut camel = Camel::start_with(
        &file,
        dir.path(),
        &[
            "--admin-max-connections",
            "2",
            "--admin-header-timeout",
            "1",
        ],
    );
    let addr = addr_of(&mut camel).await;
    let started = Instant::now();
    // Two sockets that never send a byte take both places.
    let mut idle = Vec::new();
    for _ in 0..2 {
        idle.push(TcpStream::connect(&addr).await.unwrap());
    }
    // The next ones are answered 503 and closed at once, not held open.
    for _ in 0..5 {
        let mut over = TcpStream::connect(&addr).await.unwrap();
        let answer = String::from_utf8_lossy(&until_closed(&mut over).await).into_owned();
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer:?}");
    }
    // The idle ones are closed by the header timeout, without a byte of answer.
    for stream in &mut idle {
        assert!(until_closed(stream).await.is_empty());
    }
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    // Their places are free again: a new request is answered.
    let deadline = Instant::now() + LIMIT;
    loop {
        let (code, _) = raw(&addr, &request("GET", "/health", &addr, &[], "")).await;
        if code == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the admin API stayed full: {code}"
        );
    }
    // A kept-alive connection that goes quiet after a request is closed the same way.
    let mut kept = TcpStream::connect(&addr).await.unwrap();
    let health = format!("GET /health HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    kept.write_all(health.as_bytes()).await.unwrap();
    let answer = String::from_utf8_lossy(&until_closed(&mut kept).await).into_owned();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
}
