//! Camel files as people write them, round 3: the shapes public Camel examples use that a
//! measurement against them found missing (issue 25). Each file here is written for the
//! test in the shape those files use.

mod support;

use std::path::Path;

use support::{camel, stderr, text};

fn write(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, body).unwrap();
    path.display().to_string()
}

/// Runs `args` (after `run`) to one message; returns the log.
fn run_one(args: &[&str]) -> String {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--max-messages", "1", "--max-seconds", "60"]);
    let out = camel(&all);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("max-messages reached"), "{log}");
    log
}

/// A Kamelet of the user's own, in the catalog's format.
const GREETING_SOURCE: &str = "\
apiVersion: camel.apache.org/v1
kind: Kamelet
metadata:
  name: greeting-source
spec:
  definition:
    title: Greeting
    required: [greeting]
    properties:
      greeting:
        type: string
        description: What each message says.
  template:
    from:
      uri: timer:greet
      parameters:
        repeatCount: 1
        period: 10
      steps:
        - setBody:
            constant: \"{{greeting}}\"
        - to: kamelet:sink
";

const USES_GREETING: &str = "\
- route:
    from:
      uri: kamelet:greeting-source?greeting=good-morning-round3
      steps:
        - to: log:greeted
";

#[test]
fn local_kamelet_dir_is_camel_jbangs_name_for_kamelets() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "my-kamelets/greeting-source.kamelet.yaml",
        GREETING_SOURCE,
    );
    let route = write(dir.path(), "app/route.camel.yaml", USES_GREETING);
    let kamelets = dir.path().join("my-kamelets").display().to_string();
    let log = run_one(&[&route, "--local-kamelet-dir", &kamelets]);
    assert!(log.contains("good-morning-round3"), "{log}");
    // Camel JBang's `=` form too.
    let log = run_one(&[&route, &format!("--local-kamelet-dir={kamelets}")]);
    assert!(log.contains("good-morning-round3"), "{log}");
}

#[test]
fn kamelets_of_a_maven_projects_resources_are_found_beside_its_routes() {
    // Camel's KameletMain finds routes in src/main/resources/camel and Kamelets on the
    // classpath, in src/main/resources/kamelets.
    let dir = tempfile::tempdir().unwrap();
    let resources = dir.path().join("src/main/resources");
    write(
        &resources,
        "kamelets/greeting-source.kamelet.yaml",
        GREETING_SOURCE,
    );
    let route = write(&resources, "camel/my-route.yaml", USES_GREETING);
    let log = run_one(&[&route]);
    assert!(log.contains("good-morning-round3"), "{log}");
}

#[test]
fn a_kamelets_folder_beside_the_routes_is_read() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "kamelets/greeting-source.kamelet.yaml",
        GREETING_SOURCE,
    );
    let route = write(dir.path(), "route.camel.yaml", USES_GREETING);
    let log = run_one(&[&route]);
    assert!(log.contains("good-morning-round3"), "{log}");
}

#[test]
fn camel_trait_properties_of_an_integration_configure_its_kamelets() {
    // Camel K's camel trait lists `key = value` properties; `camel.kamelet.NAME.ID.PARAM`
    // gives a Kamelet use its parameters.
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "integration.yaml",
        "\
apiVersion: camel.apache.org/v1
kind: Integration
metadata:
  name: trait-properties
spec:
  traits:
    camel:
      properties:
      - camel.kamelet.timer-source.mytimer.message = from-the-camel-trait
      - camel.kamelet.timer-source.mytimer.period=10
      - greeting.logger = trait-logger
  flows:
  - route:
      from:
        uri: kamelet:timer-source/mytimer
        steps:
        - to:
            uri: \"log:{{greeting.logger}}\"
",
    );
    let log = run_one(&[&file]);
    assert!(log.contains("from-the-camel-trait"), "{log}");
    assert!(log.contains("logger=trait-logger"), "{log}");
}

#[test]
fn the_catalogs_former_kafka_not_secured_names_are_built_in() {
    // Kamelets named so until Camel 4.18, still in Camel K and JBang examples.
    let dir = tempfile::tempdir().unwrap();
    let pipe = write(
        dir.path(),
        "pipe.yaml",
        "\
apiVersion: camel.apache.org/v1
kind: Pipe
metadata:
  name: kafka-to-kafka
spec:
  source:
    ref:
      kind: Kamelet
      apiVersion: camel.apache.org/v1
      name: kafka-not-secured-source
    properties:
      bootstrapServers: 127.0.0.1:9092
      topic: round3-in
      consumerGroup: round3
  sink:
    ref:
      kind: Kamelet
      apiVersion: camel.apache.org/v1
      name: kafka-not-secured-sink
    properties:
      bootstrapServers: 127.0.0.1:9092
      topic: round3-out
",
    );
    let out = camel(&["validate", &pipe]);
    assert!(out.status.success(), "{}", text(&out));
    // Their required parameters are those of the catalog's definitions.
    let missing = write(
        dir.path(),
        "missing.yaml",
        "\
- route:
    from:
      uri: kamelet:kafka-not-secured-source?topic=t&consumerGroup=g
      steps:
        - to: log:x
",
    );
    let out = camel(&["validate", &missing]);
    assert!(!out.status.success());
    let log = stderr(&out);
    assert!(
        log.contains("missing.yaml:3:7")
            && log.contains("`kafka-not-secured-source` needs the parameter `bootstrapServers`"),
        "{log}"
    );
}

#[test]
fn a_bare_scheme_with_its_path_among_the_parameters_is_the_uri_camel_builds() {
    // Kaoto writes `uri: timer` with `parameters.timerName`, `uri: log` with
    // `parameters.loggerName`, `uri: http` with `parameters.httpUri`.
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "route.camel.yaml",
        "\
- route:
    from:
      uri: timer
      parameters:
        timerName: tick
        repeatCount: 1
        period: 10
      steps:
        - setBody:
            constant: path-parameters
        - to:
            uri: log
            parameters:
              loggerName: named-by-parameter
",
    );
    let log = run_one(&[&file]);
    assert!(
        log.contains("path-parameters") && log.contains("logger=named-by-parameter"),
        "{log}"
    );
    let http = write(
        dir.path(),
        "http.camel.yaml",
        "\
- route:
    from:
      uri: direct:quote
      steps:
        - toD:
            uri: http
            parameters:
              httpUri: \"localhost:8000/quote/${header.symbol}\"
              httpMethod: GET
",
    );
    let out = camel(&["validate", &http]);
    assert!(out.status.success(), "{}", text(&out));
    // Without the path parameter the scheme alone still says what is missing.
    let bare = write(
        dir.path(),
        "bare.camel.yaml",
        "\
- route:
    from:
      uri: timer
      steps:
        - to: log:x
",
    );
    let out = camel(&["validate", &bare]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("bare.camel.yaml:"), "{}", text(&out));
}

#[test]
fn bean_with_a_name_alone_calls_that_bean_and_a_java_class_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "route.camel.yaml",
        "\
- route:
    from:
      uri: direct:a
      steps:
        - bean: org.apache.camel.component.kafka.ManualCommit
        - bean: greeter
",
    );
    let out = camel(&["validate", &file]);
    assert!(!out.status.success());
    let log = stderr(&out);
    assert!(
        log.contains("route.camel.yaml:5:")
            && log.contains("Java classes cannot run here")
            && log.contains("org.apache.camel.component.kafka.ManualCommit"),
        "{log}"
    );
    assert!(
        log.contains("route.camel.yaml:6:")
            && log.contains("no bean is registered under `greeter`"),
        "{log}"
    );
    assert!(!log.contains("takes a map of options"), "{log}");
}
