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
    // `create_new` fails on an existing file and on a symbolic link, dangling or not:
    // nothing already there is overwritten or followed.
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&file)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    match written {
        Ok(()) => {
            println!(
                "wrote {} (run it: camel run {})",
                file.display(),
                file.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            eprintln!(
                "error: {} already exists; camel init never overwrites a file",
                file.display()
            );
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", file.display());
            ExitCode::FAILURE
        }
    }
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
