//! `once:`, `stream:`, `file-watch:` and the file and log options of real Camel files,
//! run through the binary on YAML routes spelled as Camel writes them.

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use support::{camel, stderr};

/// Writes `yaml` as `name` under `dir`; its path as text.
fn route_file(dir: &Path, name: &str, yaml: &str) -> String {
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, yaml).unwrap();
    path.display().to_string()
}

/// Runs the binary with `stdin` as its standard input, to its end.
fn camel_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_camel"))
        .args(args)
        .env("RUST_LOG", "info")
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).unwrap();
    drop(input); // the end of the input
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn once_fires_one_exchange_with_its_body_and_headers() {
    let dir = tempfile::tempdir().unwrap();
    let file = route_file(
        dir.path(),
        "once.camel.yaml",
        "\
- route:
    id: hello-once
    from:
      uri: once:hello?delay=-1&body=Hello%20World&header.orderId=42
      parameters:
        headers:
          source: camel
      steps:
        - log: 'once said ${body} for order ${header.orderId} from ${header.source}'
",
    );
    // Idle for 2 s after the firing: a second firing would have been counted.
    let out = camel(&[
        "run",
        &file,
        "--max-idle-seconds",
        "2",
        "--max-seconds",
        "60",
    ]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("max-idle-seconds reached"), "{log}");
    assert_eq!(
        log.matches("once said Hello World for order 42 from camel")
            .count(),
        1,
        "{log}"
    );
}

#[test]
fn once_refuses_what_it_cannot_do_at_validate() {
    let dir = tempfile::tempdir().unwrap();
    let file = route_file(
        dir.path(),
        "bad-once.camel.yaml",
        "\
- route:
    from:
      uri: once:x?body=file:/no/such/data.json
      steps:
        - to: stream:out
",
    );
    let out = camel(&["validate", &file]);
    let log = stderr(&out);
    assert!(!out.status.success(), "{log}");
    assert!(log.contains("data.json"), "{log}");
}

#[test]
fn stream_in_reads_lines_and_stream_out_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = route_file(
        dir.path(),
        "echo.camel.yaml",
        "\
- route:
    id: echo
    from:
      uri: stream:in
      steps:
        - setBody:
            simple: '${header.CamelStreamIndex}: ${body}'
        - to: stream:out
        - to:
            uri: stream:err
",
    );
    let out = camel_with_stdin(
        &["run", &file, "--max-messages", "3", "--max-seconds", "60"],
        b"alpha\nbeta\r\ngamma",
    );
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert_eq!(stdout(&out), "0: alpha\n1: beta\n2: gamma\n", "{log}");
    assert!(log.contains("2: gamma\n"), "{log}");
}

#[test]
fn stream_kinds_camel_rs_lacks_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = route_file(
        dir.path(),
        "tail.camel.yaml",
        "\
- route:
    from:
      uri: stream:in?scanStream=true
      steps:
        - to: stream:file?fileName=out.txt
",
    );
    let out = camel(&["validate", &file]);
    let log = stderr(&out);
    assert!(!out.status.success(), "{log}");
    assert!(log.contains("scan_stream"), "{log}");
    assert!(log.contains("`stream:file`"), "{log}");
}

#[test]
fn file_watch_sends_camel_events_and_a_fifo_does_not_hang_it() {
    let dir = tempfile::tempdir().unwrap();
    let watched = dir.path().join("watched");
    std::fs::create_dir(&watched).unwrap();
    std::fs::write(watched.join("before.csv"), "there at start").unwrap();
    let file = route_file(
        dir.path(),
        "watch.camel.yaml",
        &format!(
            "\
- route:
    id: watcher
    from:
      uri: file-watch:{}
      parameters:
        events: CREATE,DELETE
        antInclude: '**/*'
        delay: 50
      steps:
        - log: 'event ${{header.CamelFileEventType}} on ${{header.CamelFileName}}'
",
            watched.display()
        ),
    );
    let (mut child, lines) =
        support::spawn(&["run", &file, "--max-messages", "3", "--max-seconds", "60"]);
    support::wait_line(&lines, "file-watch is watching");
    let made = Command::new("mkfifo")
        .arg(watched.join("pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::create_dir(watched.join("sub")).unwrap();
    std::fs::write(watched.join("sub/new.csv"), "new").unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(support::wait_line(&lines, "event "));
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "{seen:?}");
    let seen = seen.join("\n");
    for event in [
        "event CREATE on pipe",
        "event CREATE on sub",
        "event CREATE on sub/new.csv",
    ] {
        assert!(seen.contains(event), "{event}: {seen}");
    }
    assert!(!seen.contains("before.csv"), "{seen}");
}
