//! The `camel` binary on real YAML files.

mod support;

use std::process::Command;

use support::{camel, stderr};

#[test]
fn hello_example_stops_after_three_messages() {
    let out = camel(&["run", "examples/hello/routes.yaml", "--max-messages", "3"]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    let ticks = log.matches("Hello from Camel, tick").count();
    assert!(
        ticks >= 3,
        "expected 3 logged exchanges, saw {ticks}:\n{log}"
    );
    assert!(log.contains("max-messages reached"), "{log}");
}

#[test]
fn file_route_moves_transformed_content() {
    let dir = tempfile::tempdir().unwrap();
    let inbox = dir.path().join("in");
    let outbox = dir.path().join("out");
    std::fs::create_dir_all(&inbox).unwrap();
    for (name, body) in [("a.txt", "alpha"), ("b.txt", "beta"), ("c.txt", "gamma")] {
        std::fs::write(inbox.join(name), body).unwrap();
    }
    let routes = dir.path().join("routes.yaml");
    std::fs::write(
        &routes,
        format!(
            "- route:\n    id: files\n    from:\n      uri: 'file:{}'\n      parameters: {{initial_delay: 0, delay: 50}}\n      steps:\n        - convert_body_to: String\n        - transform: {{simple: '${{body}} (processed)'}}\n        - to: 'file:{}'\n",
            inbox.display(),
            outbox.display()
        ),
    )
    .unwrap();
    let out = camel(&["run", routes.to_str().unwrap(), "--max-idle-seconds", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    for (name, body) in [("a.txt", "alpha"), ("b.txt", "beta"), ("c.txt", "gamma")] {
        let written = std::fs::read_to_string(outbox.join(name))
            .unwrap_or_else(|e| panic!("{name} not written: {e}\n{}", stderr(&out)));
        assert_eq!(written, format!("{body} (processed)"));
        assert!(!inbox.join(name).exists(), "{name} still in the inbox");
        assert!(
            inbox.join(".camel").join(name).exists(),
            "{name} not moved to .camel"
        );
    }
}

#[test]
fn validate_lists_every_error() {
    let dir = tempfile::tempdir().unwrap();
    let routes = dir.path().join("bad.yaml");
    std::fs::write(
        &routes,
        "- from:\n    uri: direct:a\n    steps:\n      - set_heder: {name: x, constant: y}\n- from:\n    uri: nope:b\n",
    )
    .unwrap();
    let out = camel(&["validate", routes.to_str().unwrap()]);
    let log = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(log.contains("bad.yaml:4:9"), "{log}");
    assert!(log.contains("did you mean `set_header`"), "{log}");
    assert!(log.contains("nope"), "{log}");
    assert!(log.contains("2 error(s)"), "{log}");
}

#[test]
fn validate_accepts_the_examples() {
    let out = camel(&["validate", "examples/hello/routes.yaml"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn run_refuses_a_bad_file() {
    let dir = tempfile::tempdir().unwrap();
    let routes = dir.path().join("bad.yaml");
    std::fs::write(&routes, "- route: {id: x}\n").unwrap();
    let out = camel(&["run", routes.to_str().unwrap(), "--max-seconds", "5"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("has no `from`"), "{}", stderr(&out));
}

#[test]
fn watch_swaps_a_changed_route_and_ignores_a_broken_file() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let routes = dir.path().join("routes.yaml");
    let route = |word: &str| {
        format!("- route:\n    id: ticker\n    from:\n      uri: timer:t\n      parameters: {{period: 50, delay: 0}}\n      steps:\n        - log: 'says {word}'\n")
    };
    std::fs::write(&routes, route("one")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_camel"))
        .args([
            "run",
            routes.to_str().unwrap(),
            "--watch",
            "--max-seconds",
            "60",
        ])
        .env("RUST_LOG", "info")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    let mut wait_for = |needle: &str| {
        for line in lines.by_ref() {
            let line = line.unwrap();
            let found = line.contains(needle);
            seen.push(line);
            if found {
                return;
            }
        }
        let tail = seen[seen.len().saturating_sub(30)..].join("\n");
        panic!("the output ended before `{needle}`; its last lines:\n{tail}");
    };
    wait_for("says one");
    std::fs::write(&routes, "- route: {id: ticker\n").unwrap();
    wait_for("running routes are unchanged");
    wait_for("says one");
    std::fs::write(&routes, route("two")).unwrap();
    wait_for("routes reloaded");
    wait_for("says two");
    child.kill().unwrap();
    child.wait().unwrap();
}
