//! A `platform-http:` route through the binary, called with curl as a user would.

mod support;

use std::process::Command;
use std::time::Duration;

use support::{spawn, wait_line};

const ROUTES: &str = "\
- route:
    id: hello
    from:
      uri: platform-http:/hello
      steps:
        - set_body:
            simple: 'Hello ${header.name}'
";

fn curl(url: &str) -> (String, String) {
    let out = Command::new("curl")
        .args(["-s", "-i", "--max-time", "10", url])
        .output()
        .expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
    (head.to_string(), body.to_string())
}

#[test]
fn a_platform_http_route_answers_curl_and_the_run_ends_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, ROUTES).unwrap();
    let file = file.display().to_string();
    let (mut child, log) = spawn(&["run", &file, "--port", "0", "--max-messages", "1"]);
    // The log names the address the free port gave, once the route serves its path.
    let line = wait_line(&log, "serving http://");
    let port = support::serving_port(&line);
    let base = format!("http://127.0.0.1:{port}");

    let (head, _) = curl(&format!("{base}/nope"));
    assert!(head.starts_with("HTTP/1.1 404"), "{head}");
    // The one exchange `--max-messages 1` waits for; the stop it starts still lets the
    // response out.
    let (head, body) = curl(&format!("{base}/hello?name=camel"));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; charset=utf-8"),
        "{head}"
    );
    assert_eq!(body, "Hello camel");

    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("camel run stops after its one message")
        .unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_port_in_use_is_a_startup_error() {
    let taken = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, ROUTES).unwrap();
    let out = support::camel(&["run", &file.display().to_string(), "--port", &port]);
    let log = support::stderr(&out);
    assert!(!out.status.success(), "{log}");
    assert!(log.contains("cannot listen on"), "{log}");
}

/// An address of this machine that is not loopback, when it has one.
fn non_loopback_ip() -> Option<std::net::IpAddr> {
    // Connecting a UDP socket sends nothing; it only picks the interface a route uses.
    let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("10.255.255.255:9").ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
fn the_http_server_binds_loopback_unless_told_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, ROUTES).unwrap();
    let file = file.display().to_string();
    let other = non_loopback_ip();
    for (extra, bound) in [(None, "127.0.0.1"), (Some("0.0.0.0"), "0.0.0.0")] {
        let mut args = vec!["run", &file, "--port", "0", "--max-seconds", "20"];
        if let Some(host) = extra {
            args.extend(["--host", host]);
        }
        let (mut child, log) = spawn(&args);
        let line = wait_line(&log, "serving http://");
        assert!(line.contains(&format!("serving http://{bound}:")), "{line}");
        let port = support::serving_port(&line);
        let (head, _) = curl(&format!("http://127.0.0.1:{port}/hello?name=x"));
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        if let Some(ip) = other {
            let reached =
                std::net::TcpStream::connect_timeout(&(ip, port).into(), Duration::from_secs(2))
                    .is_ok();
            assert_eq!(
                reached,
                extra.is_some(),
                "{ip}:{port} with --host {extra:?}"
            );
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

#[test]
fn a_trickled_body_is_answered_408_after_http_body_timeout() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, ROUTES).unwrap();
    let file = file.display().to_string();
    let (mut child, log) = spawn(&[
        "run",
        &file,
        "--port",
        "0",
        "--http-body-timeout",
        "1",
        "--max-seconds",
        "20",
    ]);
    let port = support::serving_port(&wait_line(&log, "serving http://"));
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(b"POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
        .unwrap();
    let started = std::time::Instant::now();
    let mut reader = s.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        for _ in 0..50 {
            if s.write_all(b"x").is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    reader
        .set_read_timeout(Some(Duration::from_secs(8)))
        .unwrap();
    let mut answer = String::new();
    let _ = reader.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let _ = child.kill();
    let _ = child.wait();
    let _ = trickle.join();
}
