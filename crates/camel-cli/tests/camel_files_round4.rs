//! Camel files as people write them, round 4 (issue 25): what a measurement on public
//! Camel examples found refused. Each file here is written for the test in the shape
//! those files use: JDBC `DataSource` beans, a Kamelet whose template builds its
//! datasource and component beans, a Kafka consumer without `groupId`.

mod support;

use std::path::Path;

use support::{camel, stderr, text};

fn write(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path.display().to_string()
}

/// The PostgreSQL of the sql tests (`CAMEL_TEST_PG_URL`): host, port, database, user.
fn pg() -> (String, String, String, String) {
    let url = std::env::var("CAMEL_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    let rest = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
        .expect("CAMEL_TEST_PG_URL is a postgres:// URL");
    let (user, rest) = rest.split_once('@').expect("a user in CAMEL_TEST_PG_URL");
    let user = user.split(':').next().unwrap_or(user).to_string();
    let (authority, db) = rest
        .split_once('/')
        .expect("a database in CAMEL_TEST_PG_URL");
    let db = db.split('?').next().unwrap_or(db).to_string();
    let (host, port) = authority.split_once(':').unwrap_or((authority, "5432"));
    (host.into(), port.into(), db, user)
}

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

#[test]
fn a_jdbc_datasource_bean_is_the_database_sql_opens_by_name() {
    let (host, port, db, user) = pg();
    let dir = tempfile::tempdir().unwrap();
    // As Kaoto writes it: the class, its server properties, and `builderMethod`.
    let route = write(
        dir.path(),
        "route.camel.yaml",
        &format!(
            r##"- beans:
    - name: PostgresqlDataSource
      builderMethod: build
      properties:
        databaseName: "{db}"
        portNumber: "{port}"
        serverName: {host}
        user: {user}
      type: org.postgresql.ds.PGSimpleDataSource
- route:
    id: from-the-bean
    from:
      uri: timer:ds
      parameters: {{repeatCount: 1}}
      steps:
        - to:
            uri: "sql:select 20 + 3 as answer"
            parameters:
              dataSource: "#bean:PostgresqlDataSource"
              outputType: SelectOne
        - log: "answer ${{body}}"
"##
        ),
    );
    let log = run_one(&[&route]);
    assert!(log.contains("answer 23"), "{log}");

    // A class the properties do not describe is a located error naming what is missing.
    let bad = write(
        dir.path(),
        "bad.camel.yaml",
        "- beans:\n    - name: ds\n      type: \"#class:com.zaxxer.hikari.HikariDataSource\"\n      \
         properties: {username: u}\n- from:\n    uri: direct:a\n    steps:\n      - log: x\n",
    );
    let out = camel(&["validate", &bad]);
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    assert!(
        all.contains("bad.camel.yaml:3:7")
            && all
                .contains("bean `ds`: a bean of `com.zaxxer.hikari.HikariDataSource` needs `url`"),
        "{all}"
    );
}

/// A Kamelet in the catalog's shape: a Camel component bean used as the scheme, a
/// datasource bean referred to as `#bean:{{dsBean}}`.
const PG_SOURCE: &str = r##"apiVersion: camel.apache.org/v1
kind: Kamelet
metadata:
  name: my-pg-source
spec:
  definition:
    title: PostgreSQL source
    required: [serverName, username, query, databaseName]
    properties:
      serverName: {type: string}
      serverPort: {type: string, default: "5432"}
      username: {type: string}
      password: {type: string, default: ""}
      query: {type: string}
      databaseName: {type: string}
  template:
    beans:
      - name: local-sql
        type: "#class:org.apache.camel.component.sql.SqlComponent"
        properties:
          autowiredEnabled: "false"
      - name: dsBean
        type: "#class:org.apache.commons.dbcp2.BasicDataSource"
        properties:
          username: '{{username}}'
          password: '{{password}}'
          url: 'jdbc:postgresql://{{serverName}}:{{serverPort}}/{{databaseName}}'
          driverClassName: 'org.postgresql.Driver'
    from:
      uri: "{{local-sql}}:{{query}}"
      parameters:
        dataSource: "#bean:{{dsBean}}"
        delay: 200
      steps:
        - to: "kamelet:sink"
"##;

#[test]
fn a_kamelet_template_builds_its_datasource_and_component_beans_per_use() {
    let (host, port, db, user) = pg();
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "my-pg-source.kamelet.yaml", PG_SOURCE);
    let route = write(
        dir.path(),
        "route.camel.yaml",
        &format!(
            "- route:\n    from:\n      uri: kamelet:my-pg-source\n      parameters:\n        \
             serverName: {host}\n        serverPort: {port}\n        username: {user}\n        \
             databaseName: {db}\n        query: select 'from-the-kamelet' as what\n      \
             steps:\n        - log: \"row ${{body}}\"\n"
        ),
    );
    let log = run_one(&[&route]);
    assert!(log.contains("from-the-kamelet"), "{log}");

    // A template bean of a Java class camel-rs cannot build is named at the Kamelet.
    write(
        dir.path(),
        "java-source.kamelet.yaml",
        "apiVersion: camel.apache.org/v1\nkind: Kamelet\nmetadata:\n  name: java-source\n\
         spec:\n  definition:\n    title: J\n  template:\n    beans:\n      - name: schema\n        \
         type: \"#class:com.example.SchemaHolder\"\n    from:\n      uri: timer:j\n      \
         steps:\n        - to: kamelet:sink\n",
    );
    let uses = write(
        dir.path(),
        "uses.camel.yaml",
        "- from:\n    uri: kamelet:java-source\n    steps:\n      - log: x\n",
    );
    let out = camel(&["validate", &uses]);
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    assert!(
        all.contains("java-source.kamelet.yaml:9:")
            && all.contains("the bean `schema` of this Kamelet's template is a Java object (`#class:com.example.SchemaHolder`)"),
        "{all}"
    );
}

#[test]
fn a_kafka_consumer_without_group_id_gets_a_group_of_its_own() {
    // As the JBang and Kaoto examples write it: no `groupId`. `validate` opens no
    // connection, so no broker is needed to see it accepted and the group it gets.
    let dir = tempfile::tempdir().unwrap();
    let route = write(
        dir.path(),
        "consumer.camel.yaml",
        "- route:\n    from:\n      uri: kafka:orders-without-group\n      parameters:\n        \
         brokers: 127.0.0.1:1\n      steps:\n        - log: \"${body}\"\n",
    );
    let out = camel(&["validate", &route]);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(
        all.contains("has no `groupId`: it joins a consumer group of its own")
            && all.contains("group=camel-rs-"),
        "{all}"
    );
}

#[test]
fn convert_body_to_takes_camels_charset_and_mandatory() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "charset.camel.yaml",
        r#"- route:
    id: charset
    from:
      uri: timer:charset
      parameters: {repeatCount: 1}
      steps:
        - setBody: {constant: "café"}
        - convertBodyTo: {type: "byte[]", charset: ISO-8859-1}
        - log: "latin1 ${body.length()} bytes"
        - convertBodyTo: {type: java.lang.String, charset: ISO-8859-1}
        - log: "read back ${body}"
        - convertBodyTo: {type: "byte[]", charset: ISO-8859-1}
        - convertBodyTo: {type: String, mandatory: false}
        - log: "not UTF-8 [${body}]"
"#,
    );
    let log = run_one(&[&file]);
    assert!(log.contains("latin1 4 bytes"), "{log}");
    assert!(log.contains("read back café"), "{log}");
    assert!(log.contains("not UTF-8 []"), "{log}");

    let bad = write(
        dir.path(),
        "utf16.camel.yaml",
        "- from:\n    uri: direct:a\n    steps:\n      - convertBodyTo:\n          type: String\n          charset: UTF-16\n",
    );
    let out = camel(&["validate", &bad]);
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("utf16.camel.yaml:6:"), "{said}");
    assert!(
        said.contains("does not support the charset `UTF-16`"),
        "{said}"
    );
}
