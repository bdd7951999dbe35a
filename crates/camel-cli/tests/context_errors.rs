//! Context-level error handling across route files through the binary: a
//! `routeConfiguration` kept in one file catches the failures of routes in another, as
//! in Camel where it is context-wide.

mod support;

use support::{camel, file_names, spawn, stderr, wait_line};

#[test]
fn the_dead_letter_channel_of_one_file_catches_a_failure_in_another_files_route() {
    let dir = tempfile::tempdir().unwrap();
    let (inbox, outbox, dead) = (
        dir.path().join("in"),
        dir.path().join("out"),
        dir.path().join("dead"),
    );
    std::fs::create_dir_all(&inbox).unwrap();
    for (name, body) in [("a.txt", "good a"), ("b.txt", "bad b")] {
        std::fs::write(inbox.join(name), body).unwrap();
    }
    let shared = dir.path().join("shared.yaml");
    std::fs::write(
        &shared,
        format!(
            r#"
- routeConfiguration:
    id: dead-letters
    errorHandler:
      deadLetterChannel:
        deadLetterUri: direct:dead
        redeliveryPolicy: {{maximumRedeliveries: 1, redeliveryDelay: 10}}
- route:
    id: dead
    errorHandler: {{noErrorHandler: {{}}}}
    from:
      uri: direct:dead
      steps:
        - setBody: {{simple: "${{body}} after ${{header.CamelRedeliveryCounter}}: ${{exception.message}}"}}
        - to: 'file:{dead}'
"#,
            dead = dead.display()
        ),
    )
    .unwrap();
    let orders = dir.path().join("orders.yaml");
    std::fs::write(
        &orders,
        format!(
            r#"
- route:
    id: orders
    routeConfigurationId: dead-letters
    from:
      uri: 'file:{inbox}'
      parameters: {{initial_delay: 0, delay: 50}}
      steps:
        - convertBodyTo: String
        - filter:
            simple: "${{body}} contains 'bad'"
            steps:
              - throwException: {{exceptionType: IllegalArgumentException, message: refused}}
        - to: 'file:{outbox}'
"#,
            inbox = inbox.display(),
            outbox = outbox.display()
        ),
    )
    .unwrap();
    let (shared, orders) = (shared.to_str().unwrap(), orders.to_str().unwrap());

    let out = camel(&["validate", orders]);
    let log = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "alone, the id is unknown: {log}"
    );
    assert!(log.contains("dead-letters"), "{log}");
    let out = camel(&["validate", shared, orders]);
    assert!(out.status.success(), "{}", stderr(&out));

    let out = camel(&["run", shared, orders, "--max-idle-seconds", "1"]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert_eq!(file_names(&outbox), ["a.txt"], "{log}");
    assert_eq!(file_names(&dead), ["b.txt"], "{log}");
    assert_eq!(
        std::fs::read_to_string(dead.join("b.txt")).unwrap(),
        "bad b after 1: refused",
        "dead-lettered after the redelivery of shared.yaml's policy"
    );
}

#[test]
fn two_files_with_a_top_level_error_handler_are_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.yaml");
    let b = dir.path().join("b.yaml");
    std::fs::write(
        &a,
        "- errorHandler: {deadLetterChannel: {deadLetterUri: 'log:a'}}\n",
    )
    .unwrap();
    std::fs::write(
        &b,
        "- route: {from: {uri: 'direct:b', steps: [{to: 'log:b'}]}}\n- errorHandler: {noErrorHandler: {}}\n",
    )
    .unwrap();
    let out = camel(&["run", a.to_str().unwrap(), b.to_str().unwrap()]);
    let log = stderr(&out);
    assert!(!out.status.success(), "{log}");
    assert!(log.contains("b.yaml:2:"), "{log}");
    assert!(log.contains("a.yaml:1:"), "{log}");
}

#[test]
fn watch_applies_an_edit_of_the_shared_file_to_the_routes_of_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared.yaml");
    let clause = |word: &str| {
        format!(
            "- onException:\n    exception: [Exception]\n    handled: true\n    steps: [{{log: 'handled by {word}'}}]\n"
        )
    };
    std::fs::write(&shared, clause("one")).unwrap();
    let orders = dir.path().join("orders.yaml");
    std::fs::write(
        &orders,
        "- route:\n    id: ticker\n    from:\n      uri: timer:t\n      parameters: {period: 50, delay: 0}\n      steps:\n        - throwException: {exceptionType: Boom, message: tick}\n",
    )
    .unwrap();
    let (mut child, lines) = spawn(&[
        "run",
        shared.to_str().unwrap(),
        orders.to_str().unwrap(),
        "--watch",
        "--max-seconds",
        "60",
    ]);
    wait_line(&lines, "handled by one");
    std::fs::write(&shared, clause("two")).unwrap();
    let reloaded = wait_line(&lines, "routes reloaded");
    assert!(
        reloaded.contains("ticker"),
        "the route of orders.yaml is swapped: {reloaded}"
    );
    wait_line(&lines, "handled by two");
    child.kill().unwrap();
    child.wait().unwrap();
}
