//! The routing EIPs through the binary: a recipient list computed from a header fans one
//! message out to three file endpoints (ADR 0060).

mod support;

use support::{camel, text};

#[test]
fn a_recipient_list_from_a_header_writes_to_three_folders() {
    let root = tempfile::tempdir().unwrap();
    let dirs = ["eu", "us", "audit"].map(|d| root.path().join(d));
    let to: Vec<String> = dirs
        .iter()
        .map(|d| format!("file:{}", d.display()))
        .collect();
    let routes = root.path().join("routes.yaml");
    std::fs::write(
        &routes,
        format!(
            r#"- route:
    id: fan-out
    from:
      uri: timer:once
      parameters: {{repeatCount: 1, delay: 0}}
      steps:
        - setHeader: {{name: recipients, constant: "{}"}}
        - setHeader: {{name: CamelFileName, constant: order-1.json}}
        - setBody: {{constant: '{{"order": 1}}'}}
        - recipientList:
            header: recipients
            parallelProcessing: true
"#,
            to.join(",")
        ),
    )
    .unwrap();
    let out = camel(&["run", routes.to_str().unwrap(), "--max-messages", "1"]);
    assert!(out.status.success(), "{}", text(&out));
    for dir in &dirs {
        let written = std::fs::read_to_string(dir.join("order-1.json"))
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", dir.display(), text(&out)));
        assert_eq!(written, r#"{"order": 1}"#);
    }
}

#[test]
fn validate_names_an_unknown_scheme_in_a_fixed_to_d() {
    let root = tempfile::tempdir().unwrap();
    let routes = root.path().join("routes.yaml");
    std::fs::write(
        &routes,
        "- route:\n    from:\n      uri: direct:in\n      steps:\n        - toD: \"kafak:orders\"\n",
    )
    .unwrap();
    let out = camel(&["validate", routes.to_str().unwrap()]);
    assert!(!out.status.success());
    let log = text(&out);
    assert!(
        log.contains("routes.yaml:5") && log.contains("kafak"),
        "{log}"
    );
}
