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

#[test]
fn log_multiline_puts_each_part_on_a_line_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let file = route_file(
        dir.path(),
        "multiline.camel.yaml",
        "\
- route:
    from:
      uri: once:m?delay=0&body=hello&header.id=7
      steps:
        - to: log:multi?multiline=true&showHeaders=true
",
    );
    let out = camel(&["run", &file, "--max-messages", "1", "--max-seconds", "60"]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    // The binary keeps one event on one log line, its breaks written as `\n`.
    assert!(
        log.contains(r"Exchange[\n  Headers: {id=7}\n  BodyType: Text\n  Body: hello\n]"),
        "{log}"
    );
}

#[test]
fn file_idempotent_skips_a_file_name_taken_before() {
    let dir = tempfile::tempdir().unwrap();
    let inbox = dir.path().join("inbox");
    std::fs::create_dir(&inbox).unwrap();
    std::fs::write(inbox.join("a.txt"), "first").unwrap();
    let file = route_file(
        dir.path(),
        "idempotent.camel.yaml",
        &format!(
            "\
- route:
    from:
      uri: file:{}?idempotent=true&initialDelay=0&delay=50
      steps:
        - log: 'took ${{header.CamelFileName}}: ${{body}}'
",
            inbox.display()
        ),
    );
    let (mut child, lines) =
        support::spawn(&["run", &file, "--max-messages", "3", "--max-seconds", "60"]);
    support::wait_line(&lines, "took a.txt: first");
    // Once b.txt is through, a.txt has been moved away.
    std::fs::write(inbox.join("b.txt"), "second").unwrap();
    support::wait_line(&lines, "took b.txt");
    std::fs::write(inbox.join("a.txt"), "again").unwrap();
    std::fs::write(inbox.join("c.txt"), "third").unwrap();
    let line = support::wait_line(&lines, "took ");
    assert!(line.contains("took c.txt"), "{line}");
    assert!(child.wait().unwrap().success());
    // The same name again was passed over, and stays.
    assert_eq!(
        std::fs::read_to_string(inbox.join("a.txt")).unwrap(),
        "again"
    );
}

#[test]
fn file_polls_on_a_quartz_cron_scheduler() {
    let dir = tempfile::tempdir().unwrap();
    let inbox = dir.path().join("inbox");
    std::fs::create_dir(&inbox).unwrap();
    std::fs::write(inbox.join("a.txt"), "1").unwrap();
    std::fs::write(inbox.join("b.txt"), "2").unwrap();
    let file = route_file(
        dir.path(),
        "cron.camel.yaml",
        &format!(
            "\
- route:
    from:
      uri: file:{}
      parameters:
        scheduler: quartz
        scheduler.cron: '* * * * * ?'
        initialDelay: 3600000
      steps:
        - log: 'polled ${{header.CamelFileName}}'
",
            inbox.display()
        ),
    );
    // The hour-long initial delay does not apply: the cron fires every second.
    let out = camel(&["run", &file, "--max-messages", "2", "--max-seconds", "60"]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("max-messages reached"), "{log}");
    assert!(
        log.contains("polled a.txt") && log.contains("polled b.txt"),
        "{log}"
    );
}

#[cfg(feature = "xml")]
#[test]
fn xpath_and_xslt_on_an_xml_body() {
    let dir = tempfile::tempdir().unwrap();
    let stylesheet = dir.path().join("summary.xsl");
    std::fs::write(
        &stylesheet,
        r#"<xsl:stylesheet version="3.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:template match="/order">
    <summary id="{@id}"><xsl:value-of select="count(item)"/> items</summary>
  </xsl:template>
</xsl:stylesheet>"#,
    )
    .unwrap();
    let file = route_file(
        dir.path(),
        "xml.camel.yaml",
        &format!(
            r#"- route:
    from:
      uri: once:order
      parameters:
        delay: 0
        body: '<order id="7" vip="true"><item/><item/></order>'
      steps:
        - filter:
            expression:
              xpath: "/order[@vip = 'true']"
            steps:
              - setHeader:
                  name: orderId
                  expression:
                    xpath:
                      expression: /order/@id
                      resultType: String
              - to: xslt:file:{}
              - log: 'order ${{header.orderId}} became ${{body}}'
"#,
            stylesheet.display()
        ),
    );
    let out = camel(&["run", &file, "--max-messages", "1", "--max-seconds", "60"]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    // The serialised result starts with its XML declaration, as a JAXP transform's does.
    assert!(
        log.contains(r#"order 7 became <?xml version="1.0" encoding="utf-8"?>\n<summary id="7">2 items</summary>"#),
        "{log}"
    );
}

#[cfg(feature = "xml")]
#[test]
fn a_stylesheet_that_does_not_compile_fails_validate() {
    let dir = tempfile::tempdir().unwrap();
    let stylesheet = dir.path().join("broken.xsl");
    std::fs::write(&stylesheet, "<xsl:stylesheet").unwrap();
    let file = route_file(
        dir.path(),
        "broken-xml.camel.yaml",
        &format!(
            "\
- route:
    from:
      uri: stream:in
      steps:
        - to: xslt:{}
",
            stylesheet.display()
        ),
    );
    let out = camel(&["validate", &file]);
    let log = stderr(&out);
    assert!(!out.status.success(), "{log}");
    assert!(log.contains("broken.xsl"), "{log}");
}
