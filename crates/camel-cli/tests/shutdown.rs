//! How `camel run` ends: one deadline bounds the whole stop, a second signal ends it at
//! once in every phase, and the exit status says whether exchanges were lost
//! (0 clean, 3 failed / cut off / left on a queue, 128 + signal when forced).

mod support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use support::admin_api::TOKEN;
use support::{camel, spawn, text, wait_line};

fn routes(dir: &Path, yaml: &str) -> PathBuf {
    let path = dir.join("routes.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

fn sigterm(child: &Child) {
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// Waits at most `limit` for the process to end.
fn exits_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// A destination that accepts connections and never answers: what a hung SQS endpoint
/// looks like to a client. The connections are held until the test ends.
fn silent_listener() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().map_while(Result::ok) {
            held.push(conn);
        }
    });
    port
}

/// The answer (head and body) to one HTTP request (the connection is closed after it).
fn http(addr: &str, method: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn max_seconds_ends_a_run_whose_exchange_waits_for_a_missing_direct_consumer() {
    let dir = tempfile::tempdir().unwrap();
    let file = routes(
        dir.path(),
        r#"
- route:
    id: lost
    from:
      uri: timer:t
      parameters: {period: 100000, delay: 0}
      steps:
        - to: direct:nobody
"#,
    );
    let start = Instant::now();
    let out = camel(&["run", file.to_str().unwrap(), "--max-seconds", "2"]);
    let took = start.elapsed();
    // The producer waits up to 30 s for a consumer; no route starts during a stop, so
    // the wait ends when the stop begins, not at its timeout.
    assert!(
        took < Duration::from_secs(15),
        "took {took:?}\n{}",
        text(&out)
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        text(&out).contains("1 exchange(s) failed"),
        "{}",
        text(&out)
    );
}

#[test]
fn shutdown_timeout_bounds_the_flush_of_a_sink_whose_destination_never_answers() {
    let port = silent_listener();
    let dir = tempfile::tempdir().unwrap();
    let file = routes(
        dir.path(),
        &format!(
            r#"
- route:
    id: to-sqs
    from:
      uri: timer:t
      parameters: {{period: 100000, delay: 0}}
      steps:
        - set_body: {{constant: hello}}
        - to:
            uri: sqs:orders
            parameters:
              endpoint: http://127.0.0.1:{port}
              region: us-east-1
              access_key: test
              secret_key: test
              send_timeout: 120s
"#
        ),
    );
    let start = Instant::now();
    let out = camel(&[
        "run",
        file.to_str().unwrap(),
        "--max-seconds",
        "1",
        "--shutdown-timeout",
        "3",
    ]);
    let took = start.elapsed();
    // 1 s of run, 3 s of stop; the sink's 120 s request is cut off with the routes.
    assert!(
        took < Duration::from_secs(12),
        "took {took:?}\n{}",
        text(&out)
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let log = text(&out);
    assert!(log.contains("cut off at the shutdown deadline"), "{log}");
    assert!(log.contains("1 request(s) in flight"), "{log}");
}

#[test]
fn exchanges_left_on_a_seda_queue_are_reported_and_fail_the_run() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing consumes `seda:jobs`: every exchange stays on the queue.
    let file = routes(
        dir.path(),
        r#"
- route:
    id: feed
    from:
      uri: timer:t
      parameters: {period: 10, delay: 0}
      steps:
        - to: seda:jobs?size=5
"#,
    );
    let out = camel(&["run", file.to_str().unwrap(), "--max-seconds", "1"]);
    let log = text(&out);
    assert!(
        log.contains("`seda:jobs` still held 5 exchange(s) at the stop"),
        "{log}"
    );
    assert_eq!(out.status.code(), Some(3), "{log}");
}

#[test]
fn a_second_sigterm_during_an_admin_route_stop_exits_at_once() {
    let dir = tempfile::tempdir().unwrap();
    // The route's exchange waits 120 s for a consumer, so stopping it through the admin
    // API drains for the whole 60 s deadline.
    let file = routes(
        dir.path(),
        r#"
- route:
    id: slow
    from:
      uri: timer:t
      parameters: {period: 100000, delay: 0}
      steps:
        - log: "exchange in flight"
        - to: direct:nobody?timeout=120000
"#,
    );
    let (mut child, rx) = spawn(&[
        "run",
        file.to_str().unwrap(),
        "--admin-addr",
        "127.0.0.1:0",
        "--shutdown-timeout",
        "60",
    ]);
    // Both lines, in whichever order they come: under load the timer may fire late, and
    // a stop with nothing in flight would end at once and never show as under way.
    let (mut addr, mut in_flight) = (None, false);
    while addr.is_none() || !in_flight {
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the admin API and the exchange start");
        if line.contains("admin API listening") {
            addr = line
                .split("addr=")
                .nth(1)
                .and_then(|s| s.split_whitespace().next())
                .map(str::to_string);
        }
        in_flight |= line.contains("exchange in flight");
    }
    let addr = addr.expect("the log names the address");
    // The stop request is answered only when the drain ends: send it and do not wait.
    let mut stop = TcpStream::connect(&addr).unwrap();
    write!(
        stop,
        "POST /routes/slow/stop HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: 0\r\n\r\n"
    )
    .unwrap();
    // While the stop drains, the listing shows it under way.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !http(&addr, "GET", "/routes").contains(r#""operation":"stopping""#) {
        assert!(Instant::now() < deadline, "the admin stop never began");
    }

    sigterm(&child);
    wait_line(&rx, "stopping");
    sigterm(&child);
    let status = exits_within(&mut child, Duration::from_secs(10))
        .expect("the second SIGTERM did not end the stop");
    assert_eq!(status.code(), Some(143), "{status:?}");
    drop(stop);
}

#[test]
fn sigterm_while_a_route_file_is_still_being_read_stops_the_run() {
    let dir = tempfile::tempdir().unwrap();
    // A FIFO no one writes to: reading it blocks, like `camel run <(a slow generator)`.
    let fifo = dir.path().join("routes.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let (mut child, rx) = spawn(&["run", fifo.to_str().unwrap()]);
    wait_line(&rx, "reading the route files");
    sigterm(&child);
    let status = exits_within(&mut child, Duration::from_secs(10))
        .expect("SIGTERM during startup was not heeded");
    assert_eq!(
        status.code(),
        Some(0),
        "nothing ran, nothing was lost: {status:?}"
    );
}
