//! `aggregate` through the binary: JSON items read from files (or split out of one JSON
//! array file by `jsonpath`), aggregated by a field with a completion size and a completion
//! timeout, each group written to a file.

mod support;

use support::camel;

#[test]
fn json_items_are_aggregated_by_a_field_and_written_to_files() {
    let root = tempfile::tempdir().unwrap();
    let inbox = root.path().join("in");
    let out = root.path().join("out");
    std::fs::create_dir_all(&inbox).unwrap();
    // Order A has three lines (complete by size), order B two (complete by timeout).
    let items = [
        ("1", "A", 10),
        ("2", "B", 20),
        ("3", "A", 11),
        ("4", "A", 12),
        ("5", "B", 21),
    ];
    for (name, order, line) in items {
        std::fs::write(
            inbox.join(format!("{name}.json")),
            format!(r#"{{"order": "{order}", "line": {line}}}"#),
        )
        .unwrap();
    }
    let routes = root.path().join("routes.yaml");
    std::fs::write(
        &routes,
        format!(
            r#"
- route:
    id: orders
    from:
      uri: 'file:{inbox}'
      parameters: {{initial_delay: 0, delay: 50, delete: true}}
      steps:
        - unmarshal: {{json: {{}}}}
        - aggregate:
            correlationExpression: {{jsonpath: $.order}}
            aggregationStrategy: GroupedBodyAggregationStrategy
            completionSize: 3
            completionTimeout: 500
            steps:
              - marshal: {{json: {{}}}}
              - to:
                  uri: 'file:{out}'
                  parameters:
                    file_name: '${{exchangeProperty.CamelAggregatedCorrelationKey}}-${{exchangeProperty.CamelAggregatedCompletedBy}}.json'
"#,
            inbox = inbox.display(),
            out = out.display()
        ),
    )
    .unwrap();
    let run = camel(&["run", routes.to_str().unwrap(), "--max-seconds", "3"]);
    let log = support::text(&run);
    assert!(run.status.success(), "{:?}\n{log}", run.status);

    let read = |name: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(out.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}\n{log}"));
        serde_json::from_str(&text).unwrap()
    };
    let a = read("A-size.json");
    let mut lines: Vec<i64> = a
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["line"].as_i64().unwrap())
        .collect();
    lines.sort_unstable();
    assert_eq!(lines, [10, 11, 12]);
    let b = read("B-timeout.json");
    assert_eq!(b.as_array().unwrap().len(), 2);
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["A-size.json", "B-timeout.json"]);
}

/// Issue 14's "through the binary" case: one JSON array file, split by `jsonpath` into its
/// records, aggregated by customer (size 3, timeout 500 ms), each group written to a file.
#[test]
fn a_json_array_file_is_split_then_aggregated_by_a_field_into_files() {
    let root = tempfile::tempdir().unwrap();
    let inbox = root.path().join("in");
    let out = root.path().join("out");
    std::fs::create_dir_all(&inbox).unwrap();
    // A: four records (a group of three by size, then one by timeout); B: two (timeout);
    // C: three (size).
    let records = [
        (1, "A"),
        (2, "B"),
        (3, "A"),
        (4, "C"),
        (5, "A"),
        (6, "C"),
        (7, "B"),
        (8, "A"),
        (9, "C"),
    ];
    let array: Vec<serde_json::Value> = records
        .iter()
        .map(|(id, customer)| serde_json::json!({"id": id, "customer": customer}))
        .collect();
    std::fs::write(
        inbox.join("orders.json"),
        serde_json::Value::Array(array).to_string(),
    )
    .unwrap();
    let routes = root.path().join("routes.yaml");
    std::fs::write(
        &routes,
        format!(
            r#"
- route:
    id: orders
    from:
      uri: 'file:{inbox}'
      parameters: {{initial_delay: 0, delay: 50, delete: true}}
      steps:
        - split:
            jsonpath: "$[*]"
            steps:
              - aggregate:
                  correlationExpression: {{jsonpath: $.customer}}
                  aggregationStrategy: GroupedBodyAggregationStrategy
                  completionSize: 3
                  completionTimeout: 500
                  steps:
                    - marshal: {{json: {{}}}}
                    - to:
                        uri: 'file:{out}'
                        parameters:
                          file_name: '${{exchangeProperty.CamelAggregatedCorrelationKey}}-${{exchangeProperty.CamelAggregatedCompletedBy}}.json'
"#,
            inbox = inbox.display(),
            out = out.display()
        ),
    )
    .unwrap();
    let run = camel(&["run", routes.to_str().unwrap(), "--max-seconds", "3"]);
    let log = support::text(&run);
    assert!(run.status.success(), "{:?}\n{log}", run.status);

    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap_or_else(|e| panic!("{}: {e}\n{log}", out.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "A-size.json",
            "A-timeout.json",
            "B-timeout.json",
            "C-size.json"
        ],
        "{log}"
    );
    let mut seen = Vec::new();
    for name in &names {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        let group: serde_json::Value = serde_json::from_str(&text).unwrap();
        let customer = &name[..1];
        let items = group.as_array().unwrap();
        assert!(items.len() <= 3, "{name}: {group}");
        for item in items {
            assert_eq!(item["customer"], customer, "{name}: {group}");
            seen.push(item["id"].as_i64().unwrap());
        }
    }
    seen.sort_unstable();
    assert_eq!(
        seen,
        (1..=9).collect::<Vec<_>>(),
        "every record exactly once"
    );
    let size = |name: &str| -> usize {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        serde_json::from_str::<serde_json::Value>(&text)
            .unwrap()
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(
        (size("A-size.json"), size("A-timeout.json")),
        (3, 1),
        "A: three by size, the fourth by timeout"
    );
    assert_eq!(size("B-timeout.json"), 2);
    assert_eq!(size("C-size.json"), 3);
}

/// The crash route: items from `in/`, aggregated by order on PostgreSQL (size 3, timeout
/// 2 s, recovery), each group written to `out/`; a log line per item taken in.
fn crash_routes(root: &std::path::Path, url: &str, route_id: &str) -> std::path::PathBuf {
    let routes = root.join("routes.yaml");
    std::fs::write(
        &routes,
        format!(
            r#"
- route:
    id: {route_id}
    from:
      uri: 'file:{inbox}'
      parameters: {{initial_delay: 0, delay: 50, delete: true}}
      steps:
        - unmarshal: {{json: {{}}}}
        - aggregate:
            correlationExpression: {{jsonpath: $.order}}
            aggregationStrategy: GroupedBodyAggregationStrategy
            aggregationRepository: '{url}'
            completionSize: 3
            completionTimeout: 2s
            useRecovery: true
            recoveryInterval: 500
            steps:
              - marshal: {{json: {{}}}}
              - to:
                  uri: 'file:{out}'
                  parameters:
                    file_name: '${{exchangeProperty.CamelAggregatedCorrelationKey}}-${{exchangeProperty.CamelAggregatedCompletedBy}}.json'
        - log: 'aggregated ${{header.CamelFileName}}'
"#,
            inbox = root.join("in").display(),
            out = root.join("out").display(),
        ),
    )
    .unwrap();
    routes
}

fn item(root: &std::path::Path, name: &str, order: &str, line: i64) {
    std::fs::write(
        root.join("in").join(format!("{name}.json")),
        format!(r#"{{"order": "{order}", "line": {line}}}"#),
    )
    .unwrap();
}

#[test]
fn a_killed_process_loses_no_group_on_postgres() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("in")).unwrap();
    let route_id = format!("crash-{}-{}", std::process::id(), rand_id());
    let routes = crash_routes(root.path(), &url, &route_id);
    item(root.path(), "1", "A", 1);
    item(root.path(), "2", "A", 2);
    item(root.path(), "3", "B", 1);

    // First process: takes the three items into open groups, then is killed (SIGKILL)
    // before any group completes.
    let (mut child, lines) = support::spawn(&["run", routes.to_str().unwrap()]);
    for _ in 0..3 {
        support::wait_line(&lines, "aggregated ");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !root.path().join("out").exists(),
        "nothing completed before the kill"
    );

    // Second process: A's third item arrives; B completes by timeout.
    item(root.path(), "4", "A", 3);
    let run = camel(&["run", routes.to_str().unwrap(), "--max-seconds", "5"]);
    let log = support::text(&run);
    assert!(run.status.success(), "{:?}\n{log}", run.status);
    let read = |name: &str| -> Vec<i64> {
        let text = std::fs::read_to_string(root.path().join("out").join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}\n{log}"));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut lines: Vec<i64> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["line"].as_i64().unwrap())
            .collect();
        lines.sort_unstable();
        lines
    };
    assert_eq!(
        read("A-size.json"),
        [1, 2, 3],
        "A kept its two items across the kill"
    );
    // At least once: an item whose file the killed process had aggregated but not yet
    // moved away is read again after the restart (a documented duplicate); none is lost.
    let mut b = read("B-timeout.json");
    b.dedup();
    assert_eq!(b, [1]);
}

fn rand_id() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}
