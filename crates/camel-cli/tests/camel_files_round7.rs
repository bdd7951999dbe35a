//! Camel files as people write them, round 7 (issue 25): the `zipFile` data format, the
//! `exchangeProperty` language, a `rest` whose verbs are listed under `steps`, and
//! `amazonAWSHost` on `aws2-sqs`.

mod support;

use support::{run_until, run_yaml, validate_yaml, write_file as write};

#[test]
fn zip_file_marshals_a_one_entry_archive_and_unmarshals_it_back() {
    // The Camel K example's shape (`unmarshal: {zipFile: {}}` after a `file:` consumer),
    // with a first route that writes the archive as Camel's marshal does.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for sub in ["in", "zipped", "out"] {
        std::fs::create_dir(d.join(sub)).unwrap();
    }
    let body = "zip me ".repeat(200);
    write(&d.join("in"), "report.txt", &body);
    let route = write(
        d,
        "zip.camel.yaml",
        &format!(
            "\
- from:
    uri: \"file:{root}/in?noop=true\"
    steps:
      - marshal:
          zipFile: {{}}
      - log: \"zipped as ${{header.CamelFileName}}\"
      - to: \"file:{root}/zipped\"
- from:
    uri: \"file:{root}/zipped?noop=true\"
    steps:
      - unmarshal:
          zipFile: {{}}
      - log: \"unzipped ${{header.CamelFileName}} of ${{body.length()}} bytes\"
      - to: \"file:{root}/out\"
",
            root = d.display()
        ),
    );
    let log = run_until(&[&route], "2");
    assert!(log.contains("zipped as report.txt.zip"), "{log}");
    assert!(log.contains("unzipped report.txt of 1400 bytes"), "{log}");
    // The archive is a zip file: a local file header, the entry's name, and deflated
    // content far smaller than the text.
    let archive = std::fs::read(d.join("zipped/report.txt.zip")).unwrap();
    assert_eq!(&archive[..4], b"PK\x03\x04", "{archive:?}");
    assert!(archive.windows(10).any(|w| w == b"report.txt"));
    assert!(archive.len() < 400, "{} bytes", archive.len());
    assert_eq!(
        std::fs::read_to_string(d.join("out/report.txt")).unwrap(),
        body
    );
}

#[test]
fn zip_file_options_in_camel_spelling_and_a_refused_iterator() {
    let (ok, out) = validate_yaml(
        "\
- from:
    uri: timer:t
    steps:
      - marshal:
          zipFile:
            preservePathElements: true
      - unmarshal:
          zipFile:
            maxDecompressedSize: 1048576
            allowEmptyDirectory: false
",
    );
    assert!(ok, "{out}");
    let (ok, out) = validate_yaml(
        "\
- from:
    uri: timer:t
    steps:
      - unmarshal:
          zipFile:
            usingIterator: true
",
    );
    assert!(!ok, "{out}");
    assert!(out.contains("usingIterator"), "{out}");
    assert!(out.contains("not supported yet"), "{out}");
}

#[test]
fn exchange_property_language_in_each_of_camels_spellings() {
    // `exchange-property:` beside the step's options is how the catalog's
    // earthquake-source Kamelet writes it; `exchangeProperty:` under `expression:` and as
    // a predicate are Camel's other forms.
    let log = run_yaml(
        "\
- from:
    uri: timer:t
    parameters: {repeatCount: 1}
    steps:
      - setProperty:
          name: lastUpdate
          constant: \"2026-12-04\"
      - setProperty:
          name: fresh
          simple: \"${body} == null\"
      - setBody:
          exchange-property: lastUpdate
      - log: \"one ${body}\"
      - setHeader:
          name: copied
          expression:
            exchangeProperty: lastUpdate
      - setBody:
          exchangeProperty: missing
      - log: \"two [${body}] ${header.copied}\"
      - filter:
          exchangeProperty: fresh
          steps:
            - log: \"three passed\"
",
        "1",
    );
    assert!(log.contains("one 2026-12-04"), "{log}");
    assert!(log.contains("two [] 2026-12-04"), "{log}");
    assert!(log.contains("three passed"), "{log}");
    // A name is required, at the key that lacks it.
    let (ok, out) = validate_yaml(
        "\
- from:
    uri: timer:t
    steps:
      - setBody:
          exchangeProperty: \" \"
",
    );
    assert!(!ok, "{out}");
    assert!(out.contains("missing property name"), "{out}");
}

#[test]
fn validate_opens_no_connection_to_a_kafka_broker_a_route_sends_to() {
    // A listener standing in for the broker: librdkafka connects to its bootstrap
    // servers as soon as a client exists, so a producer made while validating would
    // leave a connection waiting here by the time `validate` has exited.
    let broker = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = broker.local_addr().unwrap();
    let (ok, out) = validate_yaml(&format!(
        "- route:\n    from:\n      uri: timer:t\n      steps:\n        - to: \"kafka:orders?brokers={addr}\"\n        - to: \"kafka:audit?brokers={addr}\"\n"
    ));
    assert!(ok, "{out}");
    assert!(!out.contains("rdkafka"), "{out}");
    broker.set_nonblocking(true).unwrap();
    assert!(
        matches!(broker.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "`camel validate` connected to the Kafka broker"
    );
}
