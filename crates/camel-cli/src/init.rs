//! `camel init NAME [--from TEMPLATE]`: writes a starter route file, as `camel init` of
//! Camel JBang does. The starters are spelled as Camel's YAML DSL writes them (camelCase),
//! so the file also reads as a Camel user expects, and each one validates as written.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The starter a new file is written from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Template {
    /// A timer whose ticks are logged: the smallest route that runs.
    #[default]
    Timer,
    /// A REST endpoint (`GET /hello/{name}`) answered by a route.
    Rest,
    /// A transactional outbox on embedded SQLite, with its relay route.
    Outbox,
    /// A Kafka producer and consumer (brokers from the `kafka.brokers` property).
    Kafka,
}

#[derive(Debug, clap::Args)]
pub(crate) struct InitArgs {
    /// The file to write: `NAME` becomes `NAME.camel.yaml`; a name ending in `.yaml` or
    /// `.yml` is kept as it is. An existing file is never overwritten.
    name: PathBuf,
    /// The starter to write.
    #[arg(long, value_enum, default_value_t = Template::Timer)]
    from: Template,
}

const TIMER: &str = r#"# A timer fires every second and each tick is logged.
# Run it:       camel run FILE
# Check it:     camel validate FILE
- route:
    id: ROUTE_ID
    from:
      uri: timer:ROUTE_ID
      parameters:
        period: 1000
      steps:
        - setBody:
            simple: "Hello from ROUTE_ID, tick ${header.CamelTimerCounter}"
        - log: "${body}"
"#;

const REST: &str = r#"# A REST endpoint: GET /hello/{name} answers with a greeting.
# Run it:       camel run FILE --port 8080
# Try it:       curl localhost:8080/hello/world
- rest:
    path: /hello
    get:
      - path: /{name}
        to: direct:ROUTE_ID
- route:
    id: ROUTE_ID
    from:
      uri: direct:ROUTE_ID
      steps:
        - setHeader:
            name: Content-Type
            constant: text/plain
        - setBody:
            simple: "Hello ${header.name}"
"#;

const OUTBOX: &str = r#"# A transactional outbox on embedded SQLite (./camel-data/, created on first run).
# A timer publishes events into the outbox `events`, keyed by an order id; the relay
# route delivers them in publish order per key, after the publishing transaction commits.
# Run it:       camel run FILE --max-messages 20
- route:
    id: ROUTE_ID-publish
    from:
      uri: timer:ROUTE_ID
      parameters:
        period: 500
      steps:
        - setHeader:
            name: orderId
            simple: "order-${random(1,4)}"
        - setBody:
            simple: "event ${header.CamelTimerCounter} of ${header.orderId}"
        - transacted:
            steps:
              - to:
                  uri: outbox:events
                  parameters:
                    groupKey: "${header.orderId}"
- route:
    id: ROUTE_ID-relay
    from:
      uri: outbox:events
      steps:
        - log: "relayed ${body}"
"#;

const KAFKA: &str = r#"# A Kafka producer and consumer on the topic `ROUTE_ID`.
# The brokers come from the property kafka.brokers (default 127.0.0.1:9092):
#   camel run FILE --property kafka.brokers=host:9092
- route:
    id: ROUTE_ID-produce
    from:
      uri: timer:ROUTE_ID
      parameters:
        period: 1000
      steps:
        - setBody:
            simple: "message ${header.CamelTimerCounter}"
        - to:
            uri: kafka:ROUTE_ID
            parameters:
              brokers: "{{kafka.brokers:127.0.0.1:9092}}"
- route:
    id: ROUTE_ID-consume
    from:
      uri: kafka:ROUTE_ID
      parameters:
        brokers: "{{kafka.brokers:127.0.0.1:9092}}"
        groupId: ROUTE_ID-group
      steps:
        - log: "received ${body}"
"#;

const TIMER_TEST: &str = r#"# camel test TEST: the timer is replaced by direct:, so each case sends its own tick.
routes: [ROUTES]
replace_from:
  ROUTE_ID: direct:ROUTE_ID
tests:
  - name: a tick becomes a greeting
    inputs:
      - to: direct:ROUTE_ID
        headers: {CamelTimerCounter: 3}
    expect:
      reply:
        body: "Hello from ROUTE_ID, tick 3"
"#;

const REST_TEST: &str = r#"# camel test TEST: the route behind the REST endpoint, called without a server.
routes: [ROUTES]
tests:
  - name: a name gets a greeting
    inputs:
      - to: direct:ROUTE_ID
        headers: {name: world}
    expect:
      reply:
        body: "Hello world"
        headers: {Content-Type: text/plain}
"#;

const OUTBOX_TEST: &str = r#"# camel test TEST: both routes start from direct: and the outbox is a mock, so no
# database is opened; the test checks what would be published.
routes: [ROUTES]
replace_from:
  ROUTE_ID-publish: direct:ROUTE_ID-publish
  ROUTE_ID-relay: direct:ROUTE_ID-relay
mock:
  - endpoints: "outbox:*"
tests:
  - name: a tick is published keyed by its order
    inputs:
      - to: direct:ROUTE_ID-publish
        headers: {CamelTimerCounter: 1}
    expect:
      mocks:
        "outbox:events":
          count: 1
          simple: "${body} startsWith 'event 1 of order-'"
"#;

const KAFKA_TEST: &str = r#"# camel test TEST: the timer and the consumer start from direct: and Kafka is a
# mock, so no broker is needed.
routes: [ROUTES]
replace_from:
  ROUTE_ID-produce: direct:ROUTE_ID-produce
  ROUTE_ID-consume: direct:ROUTE_ID-consume
mock:
  - endpoints: "kafka:*"
tests:
  - name: a tick is sent to the topic
    inputs:
      - to: direct:ROUTE_ID-produce
        headers: {CamelTimerCounter: 1}
    expect:
      mocks:
        "kafka:ROUTE_ID":
          count: 1
          bodies: ["message 1"]
"#;

fn starter_test(template: Template) -> &'static str {
    match template {
        Template::Timer => TIMER_TEST,
        Template::Rest => REST_TEST,
        Template::Outbox => OUTBOX_TEST,
        Template::Kafka => KAFKA_TEST,
    }
}

/// The test file beside `file`: `NAME.test.yaml`, with `NAME` the route file's stem
/// before its first `.`.
fn test_file_for(file: &Path, id: &str) -> PathBuf {
    file.with_file_name(format!("{id}.test.yaml"))
}

fn starter(template: Template) -> &'static str {
    match template {
        Template::Timer => TIMER,
        Template::Rest => REST,
        Template::Outbox => OUTBOX,
        Template::Kafka => KAFKA,
    }
}

/// The file name: `NAME.camel.yaml` unless NAME already ends in `.yaml` or `.yml`.
fn file_for(name: &Path) -> PathBuf {
    match name.extension().and_then(|e| e.to_str()) {
        Some("yaml" | "yml") => name.to_path_buf(),
        _ => {
            let mut file = name.as_os_str().to_owned();
            file.push(".camel.yaml");
            PathBuf::from(file)
        }
    }
}

/// A route id from the file's name: its stem before the first `.`, with everything but
/// ASCII letters, digits, `-` and `_` made `-`, so it is also a safe endpoint name.
fn route_id(file: &Path) -> Option<String> {
    let stem = file.file_name()?.to_str()?.split('.').next()?;
    let id: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let id = id.trim_matches('-').to_string();
    (!id.is_empty()).then_some(id)
}

/// The text of the starter for `file`.
fn render(template: Template, id: &str, file: &Path) -> String {
    starter(template)
        .replace("ROUTE_ID", id)
        .replace("FILE", &file.display().to_string())
}

pub(crate) fn run(args: &InitArgs) -> ExitCode {
    let file = file_for(&args.name);
    let Some(id) = route_id(&file) else {
        eprintln!(
            "error: `{}` gives no route id: use a name with a letter or a digit",
            args.name.display()
        );
        return ExitCode::FAILURE;
    };
    let text = render(args.from, &id, &file);
    let test_file = test_file_for(&file, &id);
    let routes_name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let test_text = starter_test(args.from)
        .replace("ROUTE_ID", &id)
        .replace("ROUTES", &routes_name)
        .replace("TEST", &test_file.display().to_string());
    if let Err(e) = write_new(&file, &text) {
        return refuse(&file, &e);
    }
    // The route file is written; a test file already there is kept, and said so.
    match write_new(&test_file, &test_text) {
        Ok(()) => println!(
            "wrote {} and {} (run it: camel run {}; test it: camel test {})",
            file.display(),
            test_file.display(),
            file.display(),
            test_file.display()
        ),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => println!(
            "wrote {} (run it: camel run {}); kept the existing {}",
            file.display(),
            file.display(),
            test_file.display()
        ),
        Err(e) => return refuse(&test_file, &e),
    }
    ExitCode::SUCCESS
}

/// Writes `text` to a new file. `create_new` fails on an existing file and on a symbolic
/// link, dangling or not: nothing already there is overwritten or followed.
fn write_new(file: &Path, text: &str) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(file)
        .and_then(|mut f| f.write_all(text.as_bytes()))
}

fn refuse(file: &Path, e: &std::io::Error) -> ExitCode {
    if e.kind() == std::io::ErrorKind::AlreadyExists {
        eprintln!(
            "error: {} already exists; camel init never overwrites a file",
            file.display()
        );
    } else {
        eprintln!("error: cannot write {}: {e}", file.display());
    }
    ExitCode::FAILURE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_name_becomes_a_camel_yaml_file() {
        assert_eq!(file_for(Path::new("hello")), Path::new("hello.camel.yaml"));
        assert_eq!(file_for(Path::new("a/b.yaml")), Path::new("a/b.yaml"));
        assert_eq!(file_for(Path::new("x.yml")), Path::new("x.yml"));
        assert_eq!(file_for(Path::new("v1.2")), Path::new("v1.2.camel.yaml"));
    }

    #[test]
    fn the_route_id_comes_from_the_stem_made_safe() {
        assert_eq!(
            route_id(Path::new("dir/my orders.camel.yaml")).unwrap(),
            "my-orders"
        );
        assert_eq!(route_id(Path::new("hello.camel.yaml")).unwrap(), "hello");
        assert_eq!(route_id(Path::new("&?.camel.yaml")), None);
    }

    #[test]
    fn every_starter_names_its_route_and_file() {
        for t in [
            Template::Timer,
            Template::Rest,
            Template::Outbox,
            Template::Kafka,
        ] {
            let text = render(t, "demo", Path::new("demo.camel.yaml"));
            assert!(
                !text.contains("ROUTE_ID") && !text.contains("FILE"),
                "{text}"
            );
            assert!(text.contains("demo"), "{text}");
        }
    }
}
