//! A fast source into a resequencer whose continuation is slow (issue 24, item 7): a 1 ms
//! timer into a 20 ms `delay`. Every exchange the resequencer acknowledged is delivered
//! at SIGTERM and across a hot swap; when `--shutdown-timeout` is too short for that, the
//! loss is counted, named, and the run exits with status 3.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use support::{spawn, wait_line};

/// Collects lines into `seen` until one contains `needle` (at most 20 s away).
fn collect_until(lines: &Receiver<String>, needle: &str, seen: &mut Vec<String>) {
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|e| panic!("no line with `{needle}`: {e}"));
        let found = line.contains(needle);
        seen.push(line);
        if found {
            return;
        }
    }
}

/// The tester's route. The bounds are small so that a full backlog drains in about 3 s
/// ((100 + 50 + 1) × 20 ms); with the defaults ((1024 + 256 + 1) × 20 ms ≈ 26 s) it fits
/// the default 30 s deadline too, but a test should not wait that long.
fn route(delay_ms: u64) -> String {
    format!(
        r#"
- route:
    id: reseq
    from:
      uri: timer:fast
      parameters: {{period: 1, delay: 0}}
      steps:
        - resequence:
            stream: {{sequence: '${{header.CamelTimerCounter}}', initial_sequence: 1}}
            channel_capacity: 100
            continuation_backlog: 50
        - delay: {delay_ms}
        - log: 'reseq-out ${{header.CamelTimerCounter}}'
"#
    )
}

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

/// Every line until the process ends (at most `limit`), and its status.
fn finish(
    child: &mut Child,
    lines: &Receiver<String>,
    limit: Duration,
) -> (ExitStatus, Vec<String>) {
    let deadline = Instant::now() + limit;
    let mut seen = Vec::new();
    loop {
        while let Ok(line) = lines.try_recv() {
            seen.push(line);
        }
        if let Some(status) = child.try_wait().unwrap() {
            // The reader thread ends with the pipe: take what is left.
            while let Ok(line) = lines.recv_timeout(Duration::from_millis(500)) {
                seen.push(line);
            }
            return (status, seen);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "no exit within {limit:?}; last lines: {:?}",
                seen.iter().rev().take(5).collect::<Vec<_>>()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The numbers the continuation delivered, in order.
fn delivered(lines: &[String]) -> Vec<u64> {
    lines
        .iter()
        .filter_map(|l| l.split("reseq-out ").nth(1))
        .filter_map(|rest| {
            rest.split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

/// A `key=N` field of the `stopped` line.
fn stopped_field(lines: &[String], key: &str) -> u64 {
    let line = lines
        .iter()
        .find(|l| l.contains(" stopped ") && l.contains("completed="))
        .unwrap_or_else(|| panic!("no `stopped` line"));
    line.split(&format!("{key}="))
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in `{line}`"))
}

/// Runs the route for `run_for`, then SIGTERM.
fn run_then_sigterm(file: &Path, extra: &[&str], run_for: Duration) -> (ExitStatus, Vec<String>) {
    let mut args = vec!["run", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let (mut child, lines) = spawn(&args);
    wait_line(&lines, "route started");
    std::thread::sleep(run_for);
    sigterm(&child);
    finish(&mut child, &lines, Duration::from_secs(60))
}

#[test]
fn sigterm_delivers_every_exchange_the_resequencer_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let file = routes(dir.path(), &route(20));
    let (status, lines) =
        run_then_sigterm(&file, &["--shutdown-timeout", "30"], Duration::from_secs(4));
    let log = lines.join("\n");
    // Each timer exchange completed with the resequencer's acknowledgement.
    let acknowledged = stopped_field(&lines, "completed");
    let out = delivered(&lines);
    assert!(
        acknowledged > 150,
        "the backlog was full at the stop: {acknowledged}"
    );
    assert_eq!(
        out,
        (1..=acknowledged).collect::<Vec<u64>>(),
        "every acknowledged exchange delivered once, in order"
    );
    assert_eq!(stopped_field(&lines, "failed"), 0, "{log}");
    assert!(!log.contains("lost"), "{log}");
    assert_eq!(status.code(), Some(0), "{log}");
}

#[test]
fn a_short_shutdown_timeout_counts_and_names_what_it_cuts_off_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let file = routes(dir.path(), &route(20));
    // 1 s is far less than the ~3 s the full backlog needs.
    let (status, lines) =
        run_then_sigterm(&file, &["--shutdown-timeout", "1"], Duration::from_secs(4));
    let log = lines.join("\n");
    let acknowledged = stopped_field(&lines, "completed");
    let out = delivered(&lines);
    let failed = stopped_field(&lines, "failed");
    assert!(failed > 0, "{log}");
    assert_eq!(
        out.len() as u64 + failed,
        acknowledged,
        "each acknowledged exchange is delivered or counted as failed: {log}"
    );
    assert_eq!(
        out,
        (1..=out.len() as u64).collect::<Vec<u64>>(),
        "a prefix, in order"
    );
    // Named: the route and (some of) the exchange ids, in one line.
    let named = lines
        .iter()
        .find(|l| l.contains("acknowledged exchanges; they are lost"))
        .unwrap_or_else(|| panic!("no loss line: {log}"));
    assert!(named.contains("route_id=reseq"), "{named}");
    assert!(named.contains(&format!("lost={failed}")), "{named}");
    assert!(named.contains("exchange_ids="), "{named}");
    assert!(
        log.contains(&format!(
            "route `reseq` lost {failed} acknowledged exchange(s)"
        )),
        "{log}"
    );
    assert_eq!(status.code(), Some(3), "{log}");
}

#[test]
fn a_hot_swap_under_watch_loses_nothing_the_old_resequencer_held() {
    let dir = tempfile::tempdir().unwrap();
    let file = routes(dir.path(), &route(20));
    let args = [
        "run",
        file.to_str().unwrap(),
        "--watch",
        "--shutdown-timeout",
        "30",
    ];
    let (mut child, lines) = spawn(&args);
    let mut seen = Vec::new();
    collect_until(&lines, "route started", &mut seen);
    // Let the backlog fill, then change the continuation (a shorter delay).
    std::thread::sleep(Duration::from_secs(3));
    std::fs::write(&file, route(5)).unwrap();
    collect_until(&lines, "route swapped", &mut seen);
    std::thread::sleep(Duration::from_secs(2));
    sigterm(&child);
    let (status, rest) = finish(&mut child, &lines, Duration::from_secs(60));
    seen.extend(rest);
    let lines = seen;
    let log = lines.join("\n");
    let acknowledged = stopped_field(&lines, "completed");
    let out = delivered(&lines);
    assert_eq!(
        out,
        (1..=acknowledged).collect::<Vec<u64>>(),
        "every acknowledged exchange delivered once, in order, across the swap"
    );
    assert_eq!(stopped_field(&lines, "failed"), 0);
    assert_eq!(status.code(), Some(0), "{log}");
}
