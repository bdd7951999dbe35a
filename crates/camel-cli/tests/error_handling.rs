//! Error handling through the binary (ADR 0052): a dead letter folder after redeliveries,
//! doTry/doCatch with a Java class name, onException handled, and located errors from
//! `camel validate`.

mod support;

use std::path::Path;

use support::{camel, file_names, stderr};

#[test]
fn bad_files_end_in_the_dead_letter_folder_after_redeliveries_and_good_ones_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let (inbox, outbox, dead) = (
        dir.path().join("in"),
        dir.path().join("out"),
        dir.path().join("dead"),
    );
    std::fs::create_dir_all(&inbox).unwrap();
    for (name, body) in [("a.txt", "good a"), ("b.txt", "bad b"), ("c.txt", "good c")] {
        std::fs::write(inbox.join(name), body).unwrap();
    }
    let routes = dir.path().join("routes.yaml");
    std::fs::write(
        &routes,
        format!(
            r#"
- errorHandler:
    deadLetterChannel:
      deadLetterUri: direct:dead
      redeliveryPolicy: {{maximumRedeliveries: 2, redeliveryDelay: 10}}
- route:
    id: files
    from:
      uri: 'file:{inbox}'
      parameters: {{initial_delay: 0, delay: 50}}
      steps:
        - convertBodyTo: String
        - choice:
            when:
              - simple: "${{body}} contains 'bad'"
                steps:
                  - throwException: {{exceptionType: java.lang.IllegalArgumentException, message: "refused ${{body}}"}}
        - to: 'file:{outbox}'
- route:
    id: dead
    errorHandler: {{noErrorHandler: {{}}}}
    from:
      uri: direct:dead
      steps:
        - setBody: {{simple: "${{body}} after ${{header.CamelRedeliveryCounter}}: ${{exception.message}}"}}
        - to: 'file:{dead}'
"#,
            inbox = inbox.display(),
            outbox = outbox.display(),
            dead = dead.display()
        ),
    )
    .unwrap();
    let out = camel(&["run", routes.to_str().unwrap(), "--max-idle-seconds", "1"]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert_eq!(file_names(&outbox), ["a.txt", "c.txt"], "{log}");
    assert_eq!(file_names(&dead), ["b.txt"], "{log}");
    assert_eq!(
        std::fs::read_to_string(dead.join("b.txt")).unwrap(),
        "bad b after 2: refused bad b"
    );
    // A handled failure counts as done: the file consumer moved every file away.
    assert_eq!(file_names(&inbox), Vec::<String>::new(), "{log}");
    assert!(inbox.join(".camel").join("b.txt").exists(), "{log}");
}

#[test]
fn do_catch_by_java_class_name_and_on_exception_handled() {
    let dir = tempfile::tempdir().unwrap();
    let (inbox, outbox) = (dir.path().join("in"), dir.path().join("out"));
    std::fs::create_dir_all(&inbox).unwrap();
    std::fs::write(inbox.join("a.txt"), "a").unwrap();
    let routes = dir.path().join("routes.yaml");
    std::fs::write(
        &routes,
        format!(
            r#"
- onException:
    exception: [java.lang.IllegalStateException]
    handled: {{constant: "true"}}
    steps:
      - setBody: {{simple: "handled ${{exception.message}}"}}
      - setHeader: {{name: CamelFileName, constant: handled.txt}}
      - to: 'file:{outbox}'
- route:
    from:
      uri: 'file:{inbox}'
      parameters: {{initial_delay: 0, delay: 50}}
      steps:
        - doTry:
            steps:
              - throwException: {{exceptionType: java.io.IOException, message: disk}}
            doCatch:
              - exception: [java.io.IOException]
                steps:
                  - setBody: {{simple: "caught ${{exception}}"}}
                  - setHeader: {{name: CamelFileName, constant: caught.txt}}
                  - to: 'file:{outbox}'
        - throwException: {{exceptionType: java.lang.IllegalStateException, message: late}}
        - setHeader: {{name: CamelFileName, constant: never.txt}}
        - to: 'file:{outbox}'
"#,
            inbox = inbox.display(),
            outbox = outbox.display()
        ),
    )
    .unwrap();
    let out = camel(&["run", routes.to_str().unwrap(), "--max-idle-seconds", "1"]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert_eq!(file_names(&outbox), ["caught.txt", "handled.txt"], "{log}");
    assert_eq!(
        std::fs::read_to_string(outbox.join("caught.txt")).unwrap(),
        "caught IOException: disk"
    );
    assert_eq!(
        std::fs::read_to_string(outbox.join("handled.txt")).unwrap(),
        "handled late"
    );
}

#[test]
fn validate_locates_bad_error_handling() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "- errorHandler:\n    deadLetterChannel:\n      deadLetterUri: log:dead\n      maximumRedelivery: 3\n- onException:\n    exception: []\n- onException:\n    exception: [Exception]\n    handled: 42\n- from: {uri: direct:a}\n",
    )
    .unwrap();
    let out = camel(&["validate", bad.to_str().unwrap()]);
    let log = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(log.contains("bad.yaml:4:7"), "unknown option: {log}");
    assert!(log.contains("bad.yaml:6:"), "empty exception list: {log}");
    assert!(
        log.contains("bad.yaml:9:"),
        "handled not a predicate: {log}"
    );
    assert!(log.contains("3 error(s)"), "{log}");

    let scheme = dir.path().join("scheme.yaml");
    std::fs::write(
        &scheme,
        "- route:\n    errorHandler:\n      deadLetterChannel:\n        deadLetterUri: nosuch:dead\n    from: {uri: direct:a}\n",
    )
    .unwrap();
    let out = camel(&["validate", scheme.to_str().unwrap()]);
    let log = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(log.contains("scheme.yaml:4:"), "{log}");
    assert!(log.contains("nosuch"), "{log}");
}

/// Publishes `bodies` into a new SQLite outbox `orders` and returns its URL.
async fn sqlite_outbox(dir: &Path, bodies: &[&str]) -> String {
    use camel_outbox::{Datasource, NewMessage, Outbox, OutboxConfig};
    let db = format!("sqlite://{}", dir.join("outbox.db").display());
    let ds = Datasource::connect(&db).unwrap();
    let outbox = Outbox::open(ds, OutboxConfig::new("orders")).await.unwrap();
    let messages = bodies.iter().map(|b| NewMessage::text(*b)).collect();
    support::publish_sqlite(&outbox, messages).await;
    db
}

fn pending(db: &str) -> String {
    let out = camel(&["outbox", "--db", db, "--outbox", "orders", "counts"]);
    support::text(&out)
}

fn relay_routes(dir: &Path, db: &str, handler: &str) -> std::path::PathBuf {
    let routes = dir.join("routes.yaml");
    std::fs::write(
        &routes,
        format!(
            r#"{handler}
- route:
    id: relay
    from:
      uri: outbox:orders
      parameters: {{datasource: '{db}', poll_interval: 50ms}}
      steps:
        - choice:
            when:
              - simple: "${{body}} contains 'bad'"
                steps: [{{throwException: {{exceptionType: OrderRejected, message: "${{body}}"}}}}]
        - log: "relayed ${{body}}"
"#
        ),
    )
    .unwrap();
    routes
}

#[tokio::test]
async fn an_outbox_relay_confirms_a_handled_failure_and_retries_an_unhandled_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite_outbox(dir.path(), &["good", "bad"]).await;
    let handled = "- errorHandler:\n    deadLetterChannel: {deadLetterUri: 'log:dead'}";
    let routes = relay_routes(dir.path(), &db, handled);
    let out = camel(&["run", routes.to_str().unwrap(), "--max-idle-seconds", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let counts = pending(&db);
    assert!(
        counts.contains("pending: 0\n"),
        "handled: every row confirmed\n{counts}"
    );

    let dir = tempfile::tempdir().unwrap();
    let db = sqlite_outbox(dir.path(), &["good", "bad"]).await;
    let routes = relay_routes(dir.path(), &db, "");
    let out = camel(&["run", routes.to_str().unwrap(), "--max-idle-seconds", "1"]);
    let log = stderr(&out);
    assert!(
        !out.status.success(),
        "failed exchanges fail the run: {log}"
    );
    assert!(
        log.contains("attempts=2"),
        "retried with the outbox's backoff: {log}"
    );
    let counts = pending(&db);
    assert!(
        counts.contains("pending: 1\n"),
        "unhandled: the bad row stays for a retry\n{counts}"
    );
}

#[test]
fn a_stop_cuts_an_hour_long_redelivery_short_and_reports_the_exchange_failed() {
    let dir = tempfile::tempdir().unwrap();
    let routes = dir.path().join("routes.yaml");
    std::fs::write(
        &routes,
        r#"
- route:
    id: waiting
    errorHandler:
      deadLetterChannel:
        deadLetterUri: log:dead
        redeliveryPolicy: {maximumRedeliveries: 3, redeliveryDelay: 3600000}
    from:
      uri: timer:t
      parameters: {period: 100000, delay: 0}
      steps:
        - throwException: {exceptionType: Boom, message: down}
"#,
    )
    .unwrap();
    let start = std::time::Instant::now();
    let out = camel(&[
        "run",
        routes.to_str().unwrap(),
        "--max-seconds",
        "1",
        "--shutdown-timeout",
        "2",
    ]);
    let took = start.elapsed();
    let log = support::text(&out);
    // The stop begins at 1 s and does not wait for its 2 s deadline: the pending
    // redelivery ends at once.
    assert!(
        took < std::time::Duration::from_secs(15),
        "took {took:?}\n{log}"
    );
    assert!(!log.contains("still in flight"), "{log}");
    assert_eq!(out.status.code(), Some(3), "{log}");
    assert!(log.contains("1 exchange(s) failed"), "{log}");
    assert!(
        !log.contains("dead letter"),
        "cut short, not dead-lettered: {log}"
    );
}
