//! `camel test` through the binary: the examples' test files pass, a failing assertion
//! prints a diff and exits 1, the JUnit output parses, a misspelt key is located.

use std::path::{Path, PathBuf};
use std::process::Command;

fn camel(args: &[&str], dir: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_camel"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

#[test]
fn every_example_test_file_passes() {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(examples()).unwrap() {
        let dir = entry.unwrap().path();
        for f in std::fs::read_dir(&dir).into_iter().flatten() {
            let f = f.unwrap().path();
            if f.to_string_lossy().ends_with(".test.yaml") {
                files.push(f.to_string_lossy().into_owned());
            }
        }
    }
    assert!(!files.is_empty(), "no example test files");
    let tmp = tempfile::tempdir().unwrap();
    let mut args = vec!["test"];
    args.extend(files.iter().map(String::as_str));
    let (code, out) = camel(&args, tmp.path());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(" 0 failed"), "{out}");
}

/// Every example with route files has a test file (custom-step's step is registered in
/// Rust: its own cargo tests run it).
#[test]
fn every_example_with_routes_has_a_test_file() {
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(examples()).unwrap() {
        let dir = entry.unwrap().path();
        let names: Vec<String> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let routes = names
            .iter()
            .any(|n| n.ends_with(".yaml") && !n.ends_with(".test.yaml"));
        let tested = names.iter().any(|n| n.ends_with(".test.yaml"));
        if routes && !tested && !dir.ends_with("custom-step") {
            missing.push(dir.display().to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "examples without a test file: {missing:?}"
    );
}

#[test]
fn a_failing_assertion_prints_a_diff_exits_1_and_the_junit_parses() {
    let tmp = tempfile::tempdir().unwrap();
    let routes = examples().join("hello/routes.yaml");
    let test = tmp.path().join("hello.test.yaml");
    std::fs::write(
        &test,
        format!(
            "routes: [{}]\nreplace_from: {{hello: direct:hello}}\ntests:\n  - name: right\n    inputs: [{{to: direct:hello, headers: {{CamelTimerCounter: 3}}}}]\n    expect: {{reply: {{body: 'Hello from Camel, tick 3'}}}}\n  - name: wrong <one>\n    inputs: [{{to: direct:hello, headers: {{CamelTimerCounter: 3}}}}]\n    expect: {{reply: {{body: 'Hello from Camel, tick 4'}}}}\n",
            routes.display()
        ),
    )
    .unwrap();
    let (code, out) = camel(
        &["test", "hello.test.yaml", "--junit", "junit.xml"],
        tmp.path(),
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL  hello.test.yaml :: wrong <one>"),
        "{out}"
    );
    assert!(out.contains("- Hello from Camel, tick 4"), "{out}");
    assert!(out.contains("+ Hello from Camel, tick 3"), "{out}");
    assert!(out.contains("1 passed, 1 failed"), "{out}");

    let xml = std::fs::read_to_string(tmp.path().join("junit.xml")).unwrap();
    let mut reader = quick_xml::Reader::from_str(&xml);
    let (mut cases, mut failures) = (Vec::new(), 0);
    loop {
        match reader.read_event().unwrap() {
            quick_xml::events::Event::Eof => break,
            quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e) => {
                match e.name().as_ref() {
                    b"testcase" => {
                        let name = e.try_get_attribute("name").unwrap().unwrap();
                        cases.push(name.unescape_value().unwrap().into_owned());
                    }
                    b"failure" => failures += 1,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    assert_eq!(cases, ["right", "wrong <one>"]);
    assert_eq!(failures, 1);
}

#[test]
fn a_misspelt_key_is_an_error_with_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("bad.test.yaml"),
        "routes: [r.yaml]\ntests:\n  - name: x\n    inputz: []\n",
    )
    .unwrap();
    let (code, out) = camel(&["test", "bad.test.yaml"], tmp.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("bad.test.yaml:4:5: unknown key `inputz`"),
        "{out}"
    );
    assert!(out.contains("did you mean `inputs`?"), "{out}");
}

/// A fresh folder holding `files` (name, text).
fn files(files: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(tmp.path().join(name), text).unwrap();
    }
    tmp
}

#[test]
fn order_across_mocks_is_checked() {
    let tmp = files(&[
        ("r.yaml", "- from:\n    uri: direct:a\n    steps:\n      - to: mock:x\n      - to: kafka:events\n      - to: mock:x\n"),
        ("order.test.yaml", "routes: [r.yaml]\nmock:\n  - endpoints: 'kafka:*'\ntests:\n  - name: right\n    inputs: [{to: 'direct:a'}]\n    expect:\n      order: ['mock:x', 'kafka:events', 'mock:x']\n  - name: wrong\n    inputs: [{to: 'direct:a'}]\n    expect:\n      order: ['kafka:events', 'mock:x', 'mock:x']\n"),
    ]);
    let (code, out) = camel(&["test", "order.test.yaml"], tmp.path());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("ok    order.test.yaml :: right"), "{out}");
    assert!(out.contains("the mocks received in another order"), "{out}");
    assert!(out.contains("1 passed, 1 failed"), "{out}");
}

#[test]
fn virtual_time_runs_delays_and_timeouts_without_waiting_for_them() {
    let tmp = files(&[
        ("r.yaml", "- from:\n    uri: direct:a\n    steps:\n      - delay: {constant: 600000}\n      - to: mock:out\n- from:\n    uri: direct:agg\n    steps:\n      - aggregate:\n          correlation_expression: {constant: all}\n          aggregation_strategy: grouped_body\n          completion_timeout: 300000\n          steps: [{to: mock:batch}]\n"),
        ("vt.test.yaml", "routes: [r.yaml]\ntests:\n  - name: ten minutes of delay\n    virtual_time: true\n    inputs: [{to: direct:a, body: x}]\n    expect:\n      mocks:\n        'mock:out': {count: 1, bodies: [x]}\n  - name: a five-minute completion timeout\n    virtualTime: true\n    within: 10m\n    inputs: [{to: direct:agg, body: a}, {to: direct:agg, body: b}]\n    expect:\n      mocks:\n        'mock:batch': {count: 1}\n"),
    ]);
    let started = std::time::Instant::now();
    let (code, out) = camel(&["test", "vt.test.yaml"], tmp.path());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("2 passed, 0 failed"), "{out}");
    // Fifteen minutes of timers on the paused clock; far less on the real one.
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}
