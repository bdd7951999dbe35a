//! Camel's spellings that touch several parts at once, through the binary: the `xpath`
//! shorthand beside a step's options, and component paths given as parameters for the
//! components added this round (`uri: once` + `name`).

mod support;

use support::{camel, stderr};

fn run(yaml: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("route.camel.yaml");
    std::fs::write(&file, yaml).unwrap();
    let out = camel(&[
        "run",
        &file.display().to_string(),
        "--max-messages",
        "1",
        "--max-seconds",
        "30",
    ]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    log
}

#[test]
fn the_xpath_shorthand_stands_where_other_languages_do() {
    let log = run("\
- from:
    uri: timer:t?repeatCount=1&period=10
    steps:
      - setBody:
          constant: '<order><id>7</id></order>'
      - setHeader:
          name: id
          xpath: /order/id/text()
      - filter:
          xpath: /order/id = 7
          steps:
            - log: 'order ${header.id} passed'
");
    assert!(log.contains("order 7 passed"), "{log}");
}

#[test]
fn once_with_its_name_in_parameters() {
    let log = run("\
- from:
    uri: once
    parameters:
      name: hello
      body: Hello once
    steps:
      - log: '${body}'
");
    assert!(log.contains("Hello once"), "{log}");
}

#[test]
fn a_quoted_text_continued_at_its_key_s_indentation_is_read_with_a_warning() {
    let log = run("\
- from:
    uri: timer:t?period=10&repeatCount=1
    steps:
      - log:
          message: \"first part
          second part\"
");
    assert!(log.contains("first part second part"), "{log}");
    assert!(
        log.contains("which YAML forbids and Camel's parser accepts"),
        "{log}"
    );
}

#[test]
fn spring_datasource_properties_give_sql_its_database() {
    let Ok(url) = std::env::var("CAMEL_TEST_PG_URL") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CAMEL_TEST_PG_URL must be set under CI=true"
        );
        eprintln!("skipped: CAMEL_TEST_PG_URL is not set");
        return;
    };
    let Some(rest) = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
    else {
        panic!("CAMEL_TEST_PG_URL is not a postgres:// URL: {url}");
    };
    // `postgres@127.0.0.1:5432/test`: the user goes to its own property, as Spring has it.
    let (user, host) = rest.split_once('@').unwrap_or(("postgres", rest));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("application.properties"),
        format!(
            "spring.datasource.url=jdbc:postgresql://{host}\nspring.datasource.username={user}\n"
        ),
    )
    .unwrap();
    let file = dir.path().join("route.camel.yaml");
    std::fs::write(
        &file,
        "\
- from:
    uri: timer:t?repeatCount=1&period=10
    steps:
      - to: sql:select 41 + 1 as answer
      - log: 'answer ${body}'
",
    )
    .unwrap();
    let out = camel(&[
        "run",
        &file.display().to_string(),
        "--max-messages",
        "1",
        "--max-seconds",
        "30",
    ]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("42"), "{log}");
}

#[test]
fn a_jsonpath_result_keeps_its_json_type_through_marshal() {
    let log = run("\
- from:
    uri: timer:t?repeatCount=1&period=10
    steps:
      - setBody:
          constant: '{\"v\": 1, \"ok\": true}'
      - unmarshal:
          json: {}
      - setHeader:
          name: flag
          jsonpath: $.ok
      - setBody:
          jsonpath: $.v
      - marshal:
          json: {}
      - log: 'marshalled [${body}] flag ${header.flag}'
");
    assert!(log.contains("marshalled [1] flag true"), "{log}");
}
