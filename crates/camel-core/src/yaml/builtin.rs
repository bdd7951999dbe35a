//! The Kamelets built in: catalog names mapped onto the components camel-rs ships,
//! written here against the catalog's documented parameters. A Kamelet of the same name
//! given by the user replaces one of these.

use std::sync::Arc;

use super::templates::{DefinitionReader, Library};

/// `(name, text)` of each built-in Kamelet.
const BUILTIN: &[(&str, &str)] = &[
    (
        "aws-sqs-sink",
        include_str!("kamelets/aws-sqs-sink.kamelet.yaml"),
    ),
    (
        "aws-sqs-source",
        include_str!("kamelets/aws-sqs-source.kamelet.yaml"),
    ),
    (
        "cron-source",
        include_str!("kamelets/cron-source.kamelet.yaml"),
    ),
    (
        "delay-action",
        include_str!("kamelets/delay-action.kamelet.yaml"),
    ),
    (
        "drop-header-action",
        include_str!("kamelets/drop-header-action.kamelet.yaml"),
    ),
    (
        "extract-field-action",
        include_str!("kamelets/extract-field-action.kamelet.yaml"),
    ),
    ("http-sink", include_str!("kamelets/http-sink.kamelet.yaml")),
    (
        "http-source",
        include_str!("kamelets/http-source.kamelet.yaml"),
    ),
    (
        "insert-header-action",
        include_str!("kamelets/insert-header-action.kamelet.yaml"),
    ),
    (
        "json-deserialize-action",
        include_str!("kamelets/json-deserialize-action.kamelet.yaml"),
    ),
    (
        "json-serialize-action",
        include_str!("kamelets/json-serialize-action.kamelet.yaml"),
    ),
    (
        "kafka-not-secured-sink",
        include_str!("kamelets/kafka-not-secured-sink.kamelet.yaml"),
    ),
    (
        "kafka-not-secured-source",
        include_str!("kamelets/kafka-not-secured-source.kamelet.yaml"),
    ),
    (
        "kafka-sink",
        include_str!("kamelets/kafka-sink.kamelet.yaml"),
    ),
    (
        "kafka-source",
        include_str!("kamelets/kafka-source.kamelet.yaml"),
    ),
    (
        "log-action",
        include_str!("kamelets/log-action.kamelet.yaml"),
    ),
    ("log-sink", include_str!("kamelets/log-sink.kamelet.yaml")),
    ("nats-sink", include_str!("kamelets/nats-sink.kamelet.yaml")),
    (
        "nats-source",
        include_str!("kamelets/nats-source.kamelet.yaml"),
    ),
    (
        "predicate-filter-action",
        include_str!("kamelets/predicate-filter-action.kamelet.yaml"),
    ),
    (
        "set-body-action",
        include_str!("kamelets/set-body-action.kamelet.yaml"),
    ),
    (
        "simple-filter-action",
        include_str!("kamelets/simple-filter-action.kamelet.yaml"),
    ),
    (
        "spring-rabbitmq-sink",
        include_str!("kamelets/spring-rabbitmq-sink.kamelet.yaml"),
    ),
    (
        "spring-rabbitmq-source",
        include_str!("kamelets/spring-rabbitmq-source.kamelet.yaml"),
    ),
    (
        "throttle-action",
        include_str!("kamelets/throttle-action.kamelet.yaml"),
    ),
    (
        "timer-source",
        include_str!("kamelets/timer-source.kamelet.yaml"),
    ),
    (
        "webhook-source",
        include_str!("kamelets/webhook-source.kamelet.yaml"),
    ),
];

/// A library holding the built-in Kamelets.
pub(super) fn library() -> Library {
    let mut library = Library::default();
    for (name, text) in BUILTIN {
        let file: Arc<str> = format!("builtin:{name}.kamelet.yaml").into();
        let Ok(docs) = super::node::parse_all(text, &file) else {
            continue;
        };
        for doc in docs {
            let positions = Arc::new(doc.positions);
            let reader = DefinitionReader {
                file: &file,
                positions: &positions,
            };
            if let Some(map) = doc.value.as_object() {
                if let Ok(template) = reader.kamelet(map) {
                    library.kamelets.insert(template.name.clone(), template);
                }
            }
        }
    }
    library
}
