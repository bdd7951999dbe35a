//! Files in the shapes Camel JBang, Kaoto and Camel K write, run through the binary.

mod support;

use support::{camel, stderr, text};

/// Runs an example to `max` messages; returns its log.
fn run(file: &str, max: &str) -> String {
    let out = camel(&["run", file, "--max-messages", max, "--max-seconds", "60"]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("max-messages reached"), "{log}");
    log
}

#[test]
fn endpoint_paths_in_parameters_and_node_ids() {
    let log = run("examples/camel-jbang/hello.camel.yaml", "3");
    // `uri: log` + `loggerName: hello` is `log:hello`; `timerName` made `timer:hello`.
    assert_eq!(log.matches("logger=hello").count(), 3, "{log}");
    assert!(log.contains("Hello Camel from 3"), "{log}");
}

#[test]
fn two_documents_in_one_file() {
    let log = run("examples/camel-jbang/two-routes.camel.yaml", "6");
    assert_eq!(log.matches("received order").count(), 3, "{log}");
    // The disabled step never ran.
    assert!(!log.contains("ignored"), "{log}");
}

#[test]
fn camel_k_integration_and_pipe() {
    let log = run("examples/camel-jbang/integration.yaml", "2");
    assert_eq!(log.matches("Hello from Camel K").count(), 2, "{log}");
    let log = run("examples/camel-jbang/pipe.yaml", "2");
    assert_eq!(log.matches("logger=pipe").count(), 2, "{log}");
}

#[test]
fn beans_declared_in_the_file_and_called_by_step_and_endpoint() {
    let log = run("examples/camel-jbang/beans.camel.yaml", "3");
    for n in 1000..1003 {
        assert!(log.contains(&format!("Order {n} confirmed")), "{log}");
    }
    assert_eq!(log.matches("logger=orders").count(), 3, "{log}");
}

#[test]
fn validate_prints_every_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.camel.yaml");
    std::fs::write(
        &file,
        "\
- from:
    uri: direct:a
    steps:
      - saga: {}
      - setBody: {groovy: x}
      - setHeader: {nmae: x, constant: y}
      - to: jms:queue:orders
      - frobnicate: {}
- beans:
    - name: greeter
      type: com.example.Greeter
",
    )
    .unwrap();
    let path = file.display().to_string();
    let out = camel(&["validate", &path]);
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    // The bad top-level item does not hide the errors inside the route.
    for line in [4, 5, 6, 7, 8, 11] {
        assert!(
            all.contains(&format!("broken.camel.yaml:{line}:")),
            "line {line}: {all}"
        );
    }
    assert!(all.contains("6 error(s)"), "{all}");
    assert!(all.contains("Java classes cannot run here"), "{all}");
    assert!(
        all.contains("`saga` is a Camel EIP that camel-rs does not support yet"),
        "{all}"
    );
    assert!(all.contains("`jms` is a Camel component"), "{all}");
    assert!(all.contains("unknown key `frobnicate`"), "{all}");
}

#[test]
fn camel_options_without_meaning_are_accepted_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("options.camel.yaml");
    std::fs::write(
        &file,
        "\
- route:
    nodePrefixId: n
    from:
      uri: timer
      parameters: {timerName: t, bridgeErrorHandler: true, repeatCount: 1}
      steps:
        - to: log:x
",
    )
    .unwrap();
    let out = camel(&["validate", &file.display().to_string()]);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(all.contains("options=nodePrefixId"), "{all}");
    assert!(all.contains("options=bridgeErrorHandler"), "{all}");
}
