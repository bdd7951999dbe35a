//! Camel files as people write them, round 5 (issue 25): what the measurement on public
//! Camel examples still found refused, each in a file written here in the shape those
//! files use: a JBang folder with SQL scripts and Kubernetes resources beside its routes,
//! the catalog's `precondition` choices over Kamelet parameters, keys and options Camel
//! has, simple's map fields, jq's exchange functions, and names echoed as the file wrote
//! them.

mod support;

use support::{camel, run_until, stderr, text, validate_yaml, write_file as write};

#[test]
fn a_jbang_folder_passes_over_scripts_sheets_certificates_and_kubernetes_resources() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The script line Camel JBang's `pipe` examples start with, then `---`.
    let route = write(
        d,
        "upper.camel.yaml",
        "///usr/bin/env jbang --quiet camel@apache/camel pipe \"$0\" \"$@\" ; exit $?\n---\n\
         - from:\n    uri: \"timer:once\"\n    parameters: {repeatCount: 1}\n    steps:\n\
         \x20     - setBody: {constant: \"shout\"}\n      - setBody: {simple: \"${body.toUpperCase()}\"}\n\
         \x20     - log: \"got ${body}\"\n",
    );
    write(d, "db-init.sql", "CREATE TABLE orders (id int);\n-- a: b\n");
    write(
        d,
        "style.xsl",
        "<xsl:stylesheet version=\"1.0\">a: b: c</xsl:stylesheet>\n",
    );
    write(
        d,
        "ca.pem",
        "-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n",
    );
    write(d, "users.ldif", "dn: a\nobjectClass: x\nobjectClass: y\n");
    write(d, "main.tf", "resource \"x\" \"y\" {\n  a = 1\n}\n");
    write(d, "application.properties.template", "a=1\n");
    write(
        d,
        "secret-store.yaml",
        "apiVersion: external-secrets.io/v1beta1\nkind: SecretStore\nmetadata:\n  name: s\n",
    );
    let files: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    let mut args = vec!["validate"];
    args.extend(files.iter().map(String::as_str));
    let out = camel(&args);
    let log = text(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("ok: 1 route(s)"), "{log}");
    assert!(log.contains("not a route file: passed over"), "{log}");
    assert!(log.contains("a Kubernetes resource, not routes"), "{log}");
    let log = run_until(&[&route], "1");
    assert!(log.contains("got SHOUT"), "{log}");
}

const GREETING_KAMELET: &str = r#"apiVersion: camel.apache.org/v1
kind: Kamelet
metadata:
  name: greeting-action
spec:
  definition:
    title: Greeting
    properties:
      name:
        title: Name
        description: Who is greeted; without it, nobody.
        type: string
      punctuation:
        title: Punctuation
        type: string
  template:
    from:
      uri: kamelet:source
      steps:
        - choice:
            precondition: true
            when:
              - simple: "${propertiesExist:!name}"
                steps:
                  - setBody:
                      constant: "hello nobody"
            otherwise:
              steps:
                - setBody:
                    simple: "hello ${properties:name}${properties:punctuation:!}"
"#;

#[test]
fn a_precondition_choice_over_kamelet_parameters_picks_its_branch_as_camel_does() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "greeting-action.kamelet.yaml", GREETING_KAMELET);
    let route = write(
        dir.path(),
        "greet.camel.yaml",
        r#"- route:
    id: named
    from:
      uri: timer:a
      parameters: {repeatCount: 1}
      steps:
        - to: "kamelet:greeting-action?name=Ada"
        - log: "first: ${body}"
- route:
    id: nobody
    from:
      uri: timer:b
      parameters: {repeatCount: 1, delay: 200}
      steps:
        - to: "kamelet:greeting-action"
        - log: "second: ${body}"
- route:
    id: punctuated
    from:
      uri: timer:c
      parameters: {repeatCount: 1, delay: 400}
      steps:
        - to:
            uri: kamelet:greeting-action
            parameters: {name: Bob, punctuation: "?"}
        - log: "third: ${body}"
"#,
    );
    let log = run_until(&[&route], "3");
    assert!(log.contains("first: hello Ada!"), "{log}");
    // A parameter a placeholder needs and no use gives is named as the Kamelet's, not as
    // a missing application property.
    let needs = GREETING_KAMELET.replace("${properties:name}", "{{name}}");
    write(dir.path(), "greeting-action.kamelet.yaml", &needs);
    let out = camel(&["validate", &route]);
    let shown = text(&out);
    assert!(!out.status.success(), "{shown}");
    assert!(
        shown.contains("Kamelet `greeting-action`: the parameter `name` (Who is greeted; without it, nobody.) is not given"),
        "{shown}"
    );
    assert!(!shown.contains("application.properties"), "{shown}");
    assert!(log.contains("second: hello nobody"), "{log}");
    assert!(log.contains("third: hello Bob?"), "{log}");
}

#[test]
fn simple_property_functions_read_application_properties() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "application.properties", "shop.name=corner\n");
    let route = write(
        dir.path(),
        "shop.camel.yaml",
        r#"- from:
    uri: timer:p
    parameters: {repeatCount: 1}
    steps:
      - setBody:
          simple: "${properties:shop.name} ${properties:shop.city:nowhere} ${propertiesExist:shop.name} ${propertiesExist:shop.city}"
      - log: "shop: ${body}"
"#,
    );
    let log = run_until(&[&route], "1");
    assert!(log.contains("shop: corner nowhere true false"), "{log}");
}

#[test]
fn keys_camel_has_are_read_or_refused_by_name() {
    // Accepted: REST configuration options of Camel's Java components, response examples,
    // a routeConfiguration's description, csv's ignoreHeaderCase, a 5-field cron.
    let (ok, log) = validate_yaml(
        r#"- restConfiguration:
    clientRequestValidation: true
    clientResponseValidation: true
    apiVendorExtension: "true"
    dataFormatProperty:
      - key: prettyPrint
        value: "true"
- rest:
    path: /hello
    get:
      - to: direct:hello
        responseMessage:
          - code: "200"
            examples:
              - key: example
                value: hi
            header:
              - name: X-Trace
                description: a trace id
- routeConfiguration:
    id: audited
    description: Errors of the audited routes go to the log
    onException:
      - onException:
          exception: [java.lang.Exception]
          handled: {constant: true}
          steps: [{log: "failed"}]
- route:
    routeConfigurationId: audited
    from:
      uri: direct:hello
      steps:
        - unmarshal:
            csv: {ignoreHeaderCase: true, useMaps: true}
- from:
    uri: "cron:tab?schedule=*+*+*+*+?"
    steps: [{log: tick}]
"#,
    );
    assert!(ok, "{log}");
    // Refused by name, never as unknown keys.
    let (ok, log) = validate_yaml(
        r#"- routeConfiguration:
    precondition: "{{?audit}}"
- from:
    uri: direct:a
    steps:
      - transform:
          toType: http:application-cloudevents
"#,
    );
    assert!(!ok, "{log}");
    assert!(!log.contains("unknown key"), "{log}");
    assert!(
        log.contains("`precondition` (a configuration included only when"),
        "{log}"
    );
    assert!(
        log.contains("`toType: http:application-cloudevents` names a Camel data type transformer"),
        "{log}"
    );
}

#[test]
fn retry_attempted_log_interval_logs_every_nth_redelivery() {
    let dir = tempfile::tempdir().unwrap();
    let route = write(
        dir.path(),
        "retry.camel.yaml",
        r#"- route:
    id: flaky
    errorHandler:
      defaultErrorHandler:
        redeliveryPolicy:
          maximumRedeliveries: 4
          redeliveryDelay: 0
          retryAttemptedLogLevel: WARN
          retryAttemptedLogInterval: 2
    from:
      uri: timer:r
      parameters: {repeatCount: 1}
      steps:
        - throwException:
            exceptionType: java.lang.IllegalStateException
            message: always
"#,
    );
    let out = camel(&["run", &route, "--max-messages", "1", "--max-seconds", "60"]);
    let log = stderr(&out);
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("redelivering")).collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(lines[0].contains("attempt=2"), "{log}");
    assert!(lines[1].contains("attempt=4"), "{log}");
}

#[test]
fn log_mask_masks_secret_values_as_camel_does() {
    let log = support::run_yaml(
        r#"- from:
    uri: timer:m
    parameters: {repeatCount: 1}
    steps:
      - setBody:
          constant: "user=ada password=hunter2 region=eu"
      - to: "log:audit?logMask=true&showBodyType=false"
"#,
        "1",
    );
    assert!(log.contains("password=xxxxx region=eu"), "{log}");
    assert!(!log.contains("hunter2"), "{log}");
}

#[test]
fn kafka_client_properties_pass_through_and_java_serializers_are_named() {
    let (ok, log) = validate_yaml(
        r#"- from:
    uri: timer:k
    steps:
      - to:
          uri: kafka:orders
          parameters:
            brokers: 127.0.0.1:9092
            valueSerializer: org.apache.kafka.common.serialization.StringSerializer
            additionalProperties.compression.type: gzip
"#,
    );
    assert!(ok, "{log}");
    let (ok, log) = validate_yaml(
        r#"- from:
    uri: kafka:orders
    parameters:
      brokers: 127.0.0.1:9092
      groupId: g
      valueDeserializer: io.apicurio.registry.serde.avro.AvroKafkaDeserializer
    steps: [{log: "${body}"}]
"#,
    );
    assert!(!ok, "{log}");
    assert!(
        log.contains("`valueDeserializer` names the Java class `io.apicurio.registry.serde.avro.AvroKafkaDeserializer`"),
        "{log}"
    );
}

#[test]
fn simple_reads_fields_of_a_map_body_and_question_dot_is_null_safe() {
    let log = support::run_yaml(
        r#"- from:
    uri: timer:f
    parameters: {repeatCount: 1}
    steps:
      - setBody:
          constant: '{"findingInfo": {"title": "open port", "uid": 7}, "riskScore": 42}'
      - unmarshal:
          json: {}
      - log: "title=${body.findingInfo?.title} uid=${body.findingInfo.uid} score=${body.riskScore} none=${body.remediation?.desc}"
"#,
        "1",
    );
    assert!(
        log.contains("title=open port uid=7 score=42 none="),
        "{log}"
    );
}

#[test]
fn jq_reads_headers_properties_and_variables_with_camels_functions() {
    let log = support::run_yaml(
        r#"- from:
    uri: timer:j
    parameters: {repeatCount: 1}
    steps:
      - setVariable:
          name: existingRecords
          constant: '[{"t": 1}]'
      - setHeader:
          name: region
          constant: eu
      - setBody:
          constant: '{"t": 2}'
      - setBody:
          jq: '(variable("existingRecords") | fromjson) + [.] | map(.t) | tostring + " " + header("region") + " " + header("none"; "-")'
      - log: "jq: ${body}"
"#,
        "1",
    );
    assert!(log.contains("jq: [1,2] eu -"), "{log}");
}

#[test]
fn a_beans_file_serves_the_routes_of_the_other_files_and_camel_strategy_classes_are_built_in() {
    let dir = tempfile::tempdir().unwrap();
    let beans = write(
        dir.path(),
        "beans.yaml",
        r#"- beans:
    - name: joiner
      type: "org.apache.camel.processor.aggregate.StringAggregationStrategy"
      properties:
        delimiter: "+"
"#,
    );
    let routes = write(
        dir.path(),
        "routes.camel.yaml",
        r##"- from:
    uri: timer:agg
    parameters: {repeatCount: 3, period: 10}
    steps:
      - setBody: {simple: "n${header.CamelTimerCounter}"}
      - aggregate:
          aggregationStrategy: "#joiner"
          correlationExpression: {constant: all}
          completionSize: 3
          steps:
            - log: "joined ${body}"
"##,
    );
    let out = camel(&["validate", &beans, &routes]);
    assert!(out.status.success(), "{}", text(&out));
    let log = run_until(&[&beans, &routes], "3");
    assert!(log.contains("joined n1+n2+n3"), "{log}");
    // Alone, the beans file has no route to serve.
    let out = camel(&["validate", &beans]);
    assert!(!out.status.success());
    assert!(text(&out).contains("hold no route"), "{}", text(&out));
}

#[test]
fn errors_echo_names_in_the_spelling_of_the_file() {
    // Camel's camelCase: the step, its option and the suggestion as Camel spells them.
    let (ok, log) = validate_yaml(
        r#"- from:
    uri: direct:a
    steps:
      - choice:
          when:
            - simple: "${body} == 'x'"
              steps:
                - setHeaders:
                    headers:
                      - name: a
                        constant: b
                    heders: []
      - toD: "log:x?showBodyy=true"
- restConfiguration:
    clientRequestValidaton: true
"#,
    );
    assert!(!ok, "{log}");
    assert!(
        log.contains("at steps[0].choice.when[0].steps[0].setHeaders"),
        "{log}"
    );
    assert!(!log.contains("set_headers"), "{log}");
    assert!(log.contains("did you mean `headers`"), "{log}");
    assert!(
        log.contains("did you mean `clientRequestValidation`"),
        "{log}"
    );
    // The endpoint's own parameter names, as written and suggested in camelCase.
    let (ok, log) = validate_yaml(
        "- from:\n    uri: direct:b\n    steps:\n      - to: \"log:x?showBodyy=true\"\n",
    );
    assert!(!ok, "{log}");
    assert!(
        log.contains("unknown parameter `showBodyy`; did you mean `showBody`?"),
        "{log}"
    );
    // A file written in snake_case hears snake_case back.
    let (ok, log) = validate_yaml(
        "- from:\n    uri: direct:c\n    steps:\n      - set_headers:\n          headers: [{name: a, constant: b}]\n          heders: []\n      - to: \"log:x?show_bodyy=true\"\n",
    );
    assert!(!ok, "{log}");
    assert!(log.contains("at steps[0].set_headers"), "{log}");
    assert!(log.contains("did you mean `show_body`"), "{log}");
}

#[test]
fn a_rest_verb_declared_twice_is_a_validate_error_not_a_start_failure() {
    // As Kaoto writes a new `rest`: two `get`s without a path.
    let (ok, log) = validate_yaml(
        r#"- rest:
    get:
      - id: left
        to: {uri: direct, parameters: {name: left}}
      - id: right
        to: {uri: direct, parameters: {name: right}}
- from: {uri: direct:left, steps: [{log: l}]}
- from: {uri: direct:right, steps: [{log: r}]}
"#,
    );
    assert!(!ok, "{log}");
    assert!(
        log.contains("`get /` is declared twice (first as `get /`)"),
        "{log}"
    );
    assert!(log.contains(":5:"), "{log}");
}
