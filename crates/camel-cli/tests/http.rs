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
