//! Camel files as people write them, round 6 (issue 25): the `policy` EIP, a
//! double-quoted text continued at its key's indentation (as Jackson writes it), and one
//! error for a bean Camel builds in the JVM instead of one more per step that names it.

mod support;

use support::{camel, run_until, text, validate_yaml, write_file as write};

/// The PostgreSQL of the sql tests as the JDBC URL a Spring application would set.
fn jdbc(url: &str) -> String {
    let rest = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
        .expect("CAMEL_TEST_PG_URL is a postgres:// URL");
    format!("jdbc:postgresql://{rest}")
}

#[test]
fn policy_propagation_required_runs_its_steps_in_one_transaction_on_postgres() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let table = format!("policy_rows_{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // As a Spring Boot application names its database; the policy's transaction is on it.
    write(
        d,
        "application.properties",
        &format!("spring.datasource.url={}\n", jdbc(&url)),
    );
    let route = write(
        d,
        "tx.camel.yaml",
        &format!(
            "\
- route:
    id: tx
    from:
      uri: timer:once
      parameters: {{repeatCount: 1}}
      steps:
        - to: \"sql:drop table if exists {table}\"
        - to: \"sql:create table {table} (v text)\"
        - doTry:
            steps:
              - policy:
                  ref: PROPAGATION_REQUIRED
                  steps:
                    - to: \"sql:insert into {table} (v) values ('rolled back')\"
                    - throwException:
                        exceptionType: java.lang.IllegalStateException
                        message: refused inside the policy
            doCatch:
              - exception: [java.lang.IllegalStateException]
                steps:
                  - log: \"caught ${{exception.message}}\"
        - policy:
            ref: PROPAGATION_REQUIRED
            steps:
              - to: \"sql:insert into {table} (v) values ('kept')\"
        - to: \"sql:select v from {table} order by v\"
        - log: \"rows ${{body}}\"
        - to: \"sql:drop table {table}\"
"
        ),
    );
    let properties = d.join("application.properties").display().to_string();
    let log = run_until(&[&route, &properties], "1");
    assert!(log.contains("caught refused inside the policy"), "{log}");
    // The insert before the failure was rolled back with it; the other one committed.
    assert!(log.contains(r#"rows [{"v":"kept"}]"#), "{log}");
}

#[test]
fn a_policy_camel_rs_cannot_find_is_a_located_validate_error() {
    let (ok, out) = validate_yaml(
        "\
- route:
    id: guarded
    from:
      uri: timer:t
      steps:
        - policy:
            ref: auditPolicy
            steps:
              - log: inside
        - policy:
            ref: \"#class:com.acme.security.AdminPolicy\"
            steps:
              - log: inside
        - policy:
            ref: PROPAGATION_REQUIRES_NEW
            steps:
              - log: inside
        - policy:
            steps:
              - log: inside
",
    );
    assert!(!ok, "{out}");
    assert!(out.contains("4 error(s)"), "{out}");
    assert!(
        out.contains(":7:13: route `guarded`: at steps[0].policy: no policy is registered under `auditPolicy`"),
        "{out}"
    );
    assert!(out.contains("CamelContext::add_policy"), "{out}");
    assert!(
        out.contains(":11:13: route `guarded`: at steps[1].policy: `#class:com.acme.security.AdminPolicy` is a Java class"),
        "{out}"
    );
    assert!(
        out.contains(":15:13: route `guarded`: at steps[2].policy: the transaction policy `PROPAGATION_REQUIRES_NEW` is not supported yet"),
        "{out}"
    );
    assert!(out.contains("steps[3].policy"), "{out}");
    assert!(out.contains("ref"), "{out}");
}

#[test]
fn a_bean_camel_builds_in_the_jvm_is_one_error_not_one_more_per_step_that_names_it() {
    // The shape of Camel JBang's keycloak and PQC examples: policy and helper beans built
    // by Java classes and Groovy scripts, then named by `policy`, `bean`, `to: bean:` and
    // `process` steps of several routes.
    let (ok, out) = validate_yaml(
        "\
- beans:
  - name: keycloakPolicy
    type: org.apache.camel.component.keycloak.security.KeycloakSecurityPolicy
    properties:
      realm: camel
  - name: keyManager
    type: java.lang.Object
    scriptLanguage: groovy
    script: new Object()
- route:
    id: protected
    from:
      uri: timer:t
      steps:
        - policy:
            ref: keycloakPolicy
            steps:
              - bean:
                  ref: keyManager
                  method: rotate
- route:
    id: helper
    from:
      uri: timer:u
      steps:
        - to: bean:keyManager?method=get
        - process:
            ref: keyManager
        - bean:
            ref: \"#bean:keyManager\"
",
    );
    assert!(!ok, "{out}");
    assert!(out.contains("2 error(s)"), "{out}");
    assert!(
        out.contains(":3:5: Java classes cannot run here: register a Rust bean `keycloakPolicy`"),
        "{out}"
    );
    assert!(
        out.contains(":9:5: bean `keyManager`: `script`, `scriptLanguage` build a bean in the JVM"),
        "{out}"
    );
    assert!(!out.contains("no bean is registered"), "{out}");
    assert!(!out.contains("no policy is registered"), "{out}");
    assert!(!out.contains("no processor is registered"), "{out}");
}

#[test]
fn a_double_quoted_text_continued_at_its_key_s_indentation_runs_with_a_located_warning() {
    let dir = tempfile::tempdir().unwrap();
    // As Jackson's YAML writer and some editors leave a long text: the next lines stand at
    // the key's indentation (or at the margin), which SnakeYAML reads and YAML forbids.
    let route = write(
        dir.path(),
        "jackson.camel.yaml",
        "\
- route:
    id: jackson
    from:
      uri: timer:once
      parameters: {repeatCount: 1}
      steps:
        - setBody:
            constant: \"first part
            second part
third part\"
        - log: \"body is <${body}>\"
",
    );
    let out = camel(&["validate", &route]);
    let log = text(&out);
    assert!(out.status.success(), "{log}");
    assert!(
        log.contains("jackson.camel.yaml:9:13: a double-quoted text continues on lines at its key's indentation"),
        "{log}"
    );
    let log = run_until(&[&route], "1");
    assert!(
        log.contains("body is <first part second part third part>"),
        "{log}"
    );
    assert!(log.contains("jackson.camel.yaml:9:13"), "{log}");
    // A quoted text that never ends stays an error, at its line.
    let (ok, out) = validate_yaml("- route:\n    id: x\n    from:\n      uri: \"timer:x\n");
    assert!(!ok, "{out}");
    assert!(out.contains(":4:12: invalid YAML"), "{out}");
}
