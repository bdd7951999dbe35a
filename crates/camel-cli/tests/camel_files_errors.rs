//! `camel validate` on Camel-spelled files with mistakes: every error at once, none of
//! them misleading, and no broker contacted.

mod support;

use support::{camel, stderr, text};

fn validate(yaml: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.camel.yaml");
    std::fs::write(&file, yaml).unwrap();
    let out = camel(&["validate", &file.display().to_string()]);
    (
        out.status.success(),
        format!("{}{}", text(&out), stderr(&out)),
    )
}

#[test]
fn a_missing_property_hides_no_other_error() {
    let (ok, log) = validate(
        "\
- route:
    id: first
    from:
      uri: timer:t
      parameters:
        period: '{{missing.period}}'
      steps:
        - setBody: {groovy: x}
        - to: '{{missing.uri}}'
- from:
    uri: direct:b
    steps:
      - saga: {}
",
    );
    assert!(!ok, "{log}");
    assert!(
        log.contains("routes.camel.yaml:6:9: property placeholder `{{missing.period}}`"),
        "{log}"
    );
    assert!(
        log.contains("routes.camel.yaml:9:11: property placeholder `{{missing.uri}}`"),
        "{log}"
    );
    // The route's other mistakes, and the other route's.
    assert!(
        log.contains("routes.camel.yaml:8:") && log.contains("`groovy`"),
        "{log}"
    );
    assert!(log.contains("`saga` is a Camel EIP"), "{log}");
    // Nothing said again about the values that stood in for the placeholders.
    assert!(!log.contains("unresolved property placeholder"), "{log}");
    assert!(log.contains("4 error(s)"), "{log}");
}

#[test]
fn a_scheme_alone_names_the_component_not_a_missing_scheme() {
    let (ok, log) = validate(
        "\
- from:
    uri: timer
    parameters:
      timerName: t
    steps:
      - to:
          uri: as2
          parameters:
            serverPortNumber: 8081
      - to:
          uri: docling
          parameters:
            operation: CONVERT_TO_MARKDOWN
",
    );
    assert!(!ok, "{log}");
    assert!(!log.contains("needs a scheme"), "{log}");
    assert!(
        log.contains("`as2` is a Camel component that camel-rs does not support yet"),
        "{log}"
    );
    assert!(
        log.contains("`docling` is a Camel component that camel-rs does not support yet"),
        "{log}"
    );
}

#[test]
fn jms_names_what_to_use_instead_and_nested_lists_report_every_error() {
    let (ok, log) = validate(
        "\
- from:
    uri: jms:queue:orders
    steps:
      - choice:
          when:
            - simple: '${body} == 1'
              steps:
                - setBody: {groovy: x}
                - to: nosuch:thing
          otherwise:
            steps:
              - saga: {}
      - toD: 'activemq:queue:${header.q}'
",
    );
    assert!(!ok, "{log}");
    assert!(
        log.contains("routes.camel.yaml:1:3:")
            && log.contains("`jms` is a Camel component for JMS brokers")
            && log.contains("use `rabbitmq:`"),
        "{log}"
    );
    // Every error of the nested lists, in the file's order.
    let at = |needle: &str| {
        log.find(needle)
            .unwrap_or_else(|| panic!("{needle}: {log}"))
    };
    assert!(
        at("`groovy`") < at("`nosuch`") && at("`nosuch`") < at("`saga`"),
        "{log}"
    );
    // A static scheme in a `toD` is known at load.
    assert!(
        log.contains("routes.camel.yaml:13:")
            && log.contains("`activemq` is a Camel component for JMS"),
        "{log}"
    );
}

#[test]
fn validate_contacts_no_broker_and_says_what_a_start_would_refuse() {
    // Port 1 on loopback has nothing listening: a connection attempt would fail.
    let (ok, log) = validate(
        "\
- from:
    uri: kafka:orders?brokers=127.0.0.1:1&groupId=g
    steps:
      - to: rabbitmq:ex?addresses=amqp://127.0.0.1:1
      - to: nats:subject?servers=nats://127.0.0.1:1
      - to: aws2-sqs:q?region=us-east-1&endpoint=http://127.0.0.1:1
",
    );
    assert!(ok, "{log}");
    // What `camel run` would refuse at start, `validate` says at the `from` (a Kafka
    // consumer without `groupId` is not refused: it gets a group of its own, ADR 0118).
    let (ok, log) = validate(
        "- from:\n    uri: kafka:orders?brokers=127.0.0.1:1&autoOffsetReset=first\n    steps:\n      - to: log:x\n",
    );
    assert!(!ok, "{log}");
    assert!(
        log.contains("routes.camel.yaml:1:3:") && log.contains("auto"),
        "{log}"
    );
}
