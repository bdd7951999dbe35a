//! `--log-format json`: one JSON object per line on stderr, for log collectors.

mod support;

use support::{camel, stderr, yaml_file};

const ROUTE: &str = r#"
- route:
    id: greet
    from:
      uri: timer:tick
      parameters: {repeatCount: 2, period: 10}
      steps:
        - setBody:
            constant: "two\nlines"
        - log: "body=${body}"
"#;

#[test]
fn json_logs_are_one_object_per_line_with_the_events_fields() {
    let (_dir, path) = yaml_file(ROUTE);
    let out = camel(&[
        "--log-format",
        "json",
        "run",
        &path,
        "--max-messages",
        "2",
        "--max-seconds",
        "60",
    ]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    let events: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let started = events
        .iter()
        .find(|e| e["message"] == "route started")
        .unwrap_or_else(|| panic!("no route started event:\n{log}"));
    assert_eq!(started["level"], "INFO", "{started}");
    assert!(started["timestamp"].is_string(), "{started}");
    assert_eq!(started["route_id"], "greet", "{started}");
    // A body with line breaks stays inside its one event.
    let logged: Vec<_> = events
        .iter()
        .filter(|e| e["message"] == "body=two\nlines")
        .collect();
    assert_eq!(logged.len(), 2, "{log}");
}

#[test]
fn the_format_is_also_read_from_the_environment_and_checked() {
    let (_dir, path) = yaml_file(ROUTE);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_camel"))
        .args(["validate", &path])
        .env("CAMEL_LOG_FORMAT", "yaml")
        .output()
        .expect("the camel binary runs");
    let text = stderr(&out);
    assert!(!out.status.success());
    assert!(text.contains("yaml") && text.contains("json"), "{text}");
}

#[test]
fn text_logs_keep_a_body_with_line_breaks_on_one_line() {
    let (_dir, path) = yaml_file(ROUTE);
    let out = camel(&["run", &path, "--max-messages", "2", "--max-seconds", "60"]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    let lines: Vec<_> = log.lines().filter(|l| l.contains("body=two")).collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(
        lines.iter().all(|l| l.contains(r"body=two\nlines logger")),
        "{log}"
    );
    assert!(!log.lines().any(|l| l.trim() == "lines"), "{log}");
}
