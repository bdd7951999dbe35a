//! `aggregate` through the binary: JSON items read from files, aggregated by a field with
//! a completion size and a completion timeout, each group written to a file.

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
