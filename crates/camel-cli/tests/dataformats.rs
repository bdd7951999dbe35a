//! Data formats through the binary: a CSV file unmarshalled, filtered, and written as
//! JSON and as XML files.

mod support;

use std::process::Command;

use support::camel;

#[test]
fn a_csv_file_becomes_json_and_xml_files() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    std::fs::create_dir_all(dir.join("in")).unwrap();
    std::fs::write(
        dir.join("in/people.csv"),
        "name;city\nAnn;Oslo\nBob;Rome\n\"Kari; Jr\";Oslo\n",
    )
    .unwrap();
    let routes = dir.join("routes.yaml");
    let yaml = format!(
        r#"- route:
    id: csv-to-json-and-xml
    from:
      uri: 'file:{dir}/in'
      parameters: {{initial_delay: 0, delay: 50}}
      steps:
        - unmarshal:
            csv: {{delimiter: ';', useMaps: true}}
        - transform:
            jsonpath: "$[?@.city == 'Oslo']"
        - marshal:
            json: {{}}
        - to: 'file:{dir}/json'
        - unmarshal:
            json: {{unmarshalType: java.util.List}}
        - marshal:
            jacksonXml: {{rootName: people}}
        - to: 'file:{dir}/xml'
"#,
        dir = dir.display()
    );
    std::fs::write(&routes, yaml).unwrap();
    let out = camel(&["run", routes.to_str().unwrap(), "--max-messages", "1"]);
    let log = support::text(&out);
    assert!(out.status.success(), "{log}");

    let json = std::fs::read_to_string(dir.join("json/people.csv")).unwrap();
    assert_eq!(
        json, r#"[{"city":"Oslo","name":"Ann"},{"city":"Oslo","name":"Kari; Jr"}]"#,
        "{log}"
    );
    let xml = std::fs::read_to_string(dir.join("xml/people.csv")).unwrap();
    assert_eq!(
        xml,
        "<people><item><city>Oslo</city><name>Ann</name></item>\
         <item><city>Oslo</city><name>Kari; Jr</name></item></people>"
    );
    // The XML is well formed for another reader too (xmllint, when installed).
    if let Ok(check) = Command::new("xmllint")
        .arg("--noout")
        .arg(dir.join("xml/people.csv"))
        .status()
    {
        assert!(check.success());
    }
}

#[test]
fn a_camel_format_we_lack_is_refused_with_its_place() {
    let root = tempfile::tempdir().unwrap();
    let routes = root.path().join("routes.yaml");
    std::fs::write(
        &routes,
        "- route:\n    from:\n      uri: direct:a\n      steps:\n        - marshal:\n            avro: {}\n",
    )
    .unwrap();
    let out = camel(&["run", routes.to_str().unwrap(), "--max-messages", "1"]);
    let log = support::text(&out);
    assert!(!out.status.success(), "{log}");
    assert!(log.contains("routes.yaml:6:"), "{log}");
    assert!(
        log.contains("`avro` is a Camel data format that camel-rs does not support yet"),
        "{log}"
    );
}
