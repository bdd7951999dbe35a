//! What Apache Camel's YAML DSL knows that camel-rs does not run (ADR 0051).
//!
//! A Camel file that names an EIP, a top-level construct, a language or a component we do
//! not implement is not misspelt: telling its author "unknown key" (or suggesting a
//! spelling that is not in the file) sends them looking for a typo. These lists, taken
//! from Camel 4's YAML DSL schema (`camelYamlDsl.json`) and its component catalogue, let
//! every such name get "a Camel X that camel-rs does not support yet" instead. Names are
//! snake_case, the form the reader gives keys. What *is* implemented is decided by the
//! registries at compile time, so a step added later leaves these lists untouched.
//!
//! ```
//! use camel_core::model::camel_dsl::{unsupported, Kind};
//! assert_eq!(
//!     unsupported(Kind::Eip, "saga").unwrap(),
//!     "`saga` is a Camel EIP that camel-rs does not support yet"
//! );
//! assert!(unsupported(Kind::Eip, "sag4").is_none());
//! ```

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

/// Camel's processors (EIPs), as YAML step names. Steps that another part of camel-rs is
/// adding (error handling) are left out so they stay plain "unknown" until they land.
pub const EIPS: &[&str] = &[
    "choice",
    "convert_body_to",
    "filter",
    "kamelet",
    "log",
    "marshal",
    "multicast",
    "pausable",
    "pipeline",
    "policy",
    "poll",
    "process",
    "remove_header",
    "remove_headers",
    "remove_properties",
    "remove_property",
    "resequence",
    "resumable",
    "rollback",
    "saga",
    "script",
    "service_call",
    "set_body",
    "set_header",
    "set_headers",
    "set_property",
    "stop",
    "threads",
    "to",
    "tokenizer",
    "transacted",
    "transform",
    "transform_data_type",
    "unmarshal",
];

/// Camel's components that speak JMS (a Java API).
const JMS: &[&str] = &["jms", "activemq", "sjms", "sjms2", "amqp"];

/// Camel's top-level items other than `route` and `from` (and the error-handling ones
/// being added separately).
pub const TOP_LEVEL: &[&str] = &["data_formats", "route_template", "templated_route"];

/// Camel's data formats (`marshal`/`unmarshal` keys) from Camel 4's YAML DSL schema,
/// snake_case. The ones camel-rs implements are decided by `camel_eip::config::DataFormat`.
pub const DATA_FORMATS: &[&str] = &[
    "asn1",
    "avro",
    "barcode",
    "base64",
    "beanio",
    "bindy",
    "cbor",
    "crypto",
    "csv",
    "custom",
    "fhir_json",
    "fhir_xml",
    "flatpack",
    "fory",
    "grok",
    "gzip_deflater",
    "hl7",
    "ical",
    "iso8583",
    "jackson_xml",
    "jaxb",
    "json",
    "json_api",
    "lzf",
    "mime_multipart",
    "ocsf",
    "parquet_avro",
    "pgp",
    "protobuf",
    "rss",
    "smooks",
    "soap",
    "swift_mt",
    "swift_mx",
    "syslog",
    "tar_file",
    "thrift",
    "tidy_markup",
    "univocity_csv",
    "univocity_fixed",
    "univocity_tsv",
    "xml_security",
    "yaml",
    "zip_deflater",
    "zip_file",
];

/// Camel's expression languages.
pub const LANGUAGES: &[&str] = &[
    "bean",
    "constant",
    "datasonnet",
    "exchange_property",
    "file",
    "groovy",
    "header",
    "hl7terser",
    "java",
    "joor",
    "js",
    "jsonpath",
    "method",
    "mvel",
    "ognl",
    "python",
    "ref",
    "simple",
    "spel",
    "variable",
    "wasm",
    "xpath",
    "xquery",
    "xtokenize",
];

/// Languages whose expressions are code for the JVM (or a script engine inside it).
const JVM_LANGUAGES: &[&str] = &[
    "bean", "groovy", "java", "joor", "js", "method", "mvel", "ognl", "python", "spel",
];

/// Camel components (URI schemes) a route file commonly names. Not the whole catalogue:
/// a scheme missing here is reported as unknown, with the nearest scheme we have.
pub const COMPONENTS: &[&str] = &[
    "activemq",
    "activemq6",
    "amqp",
    "arangodb",
    "as2",
    "aws-bedrock",
    "aws-bedrock-agent-runtime",
    "aws-secrets-manager",
    "aws2-comprehend",
    "aws2-cw",
    "aws2-ddb",
    "aws2-ddbstream",
    "aws2-ec2",
    "aws2-eventbridge",
    "aws2-kinesis",
    "aws2-kinesis-firehose",
    "aws2-lambda",
    "aws2-polly",
    "aws2-s3",
    "aws2-sns",
    "aws2-sqs",
    "aws2-translate",
    "azure-cosmosdb",
    "azure-eventhubs",
    "azure-servicebus",
    "azure-storage-blob",
    "azure-storage-queue",
    "browse",
    "caffeine-cache",
    "cassandraql",
    "chunk",
    "class",
    "controlbus",
    "couchdb",
    "cxf",
    "cxfrs",
    "dataformat",
    "dataset",
    "debezium-mysql",
    "debezium-postgres",
    "dns",
    "docling",
    "dropbox",
    "elasticsearch",
    "exec",
    "fhir",
    "freemarker",
    "ftp",
    "ftps",
    "github",
    "github2",
    "google-calendar-stream",
    "google-functions",
    "google-pubsub",
    "google-sheets-stream",
    "google-storage",
    "grpc",
    "http",
    "https",
    "ibm-cos",
    "ibm-watson-language",
    "imap",
    "imaps",
    "infinispan",
    "jdbc",
    "jira",
    "jms",
    "jolt",
    "jpa",
    "jslt",
    "json-patch",
    "json-validator",
    "jsonata",
    "kafka",
    "kamelet",
    "keycloak",
    "knative",
    "kubernetes-namespaces",
    "kubernetes-nodes",
    "kubernetes-pods",
    "langchain4j-agent",
    "langchain4j-chat",
    "langchain4j-embeddings",
    "langchain4j-tools",
    "language",
    "ldap",
    "mail",
    "master",
    "micrometer",
    "minio",
    "mongodb",
    "mqtt",
    "mustache",
    "mvel",
    "netty",
    "netty-http",
    "openai",
    "paho",
    "paho-mqtt5",
    "pdf",
    "platform-http",
    "pop3",
    "pqc",
    "pulsar",
    "rabbitmq",
    "redis",
    "ref",
    "rest",
    "rest-api",
    "rest-openapi",
    "salesforce",
    "sftp",
    "sjms",
    "sjms2",
    "slack",
    "smooks",
    "smtp",
    "smtps",
    "soap",
    "splunk",
    "splunk-hec",
    "spring-jdbc",
    "spring-rabbitmq",
    "spring-redis",
    "sql",
    "ssh",
    "string-template",
    "stub",
    "telegram",
    "twitter-directmessage",
    "twitter-search",
    "twitter-timeline",
    "undertow",
    "velocity",
    "vertx",
    "vertx-http",
    "vm",
    "websocket",
    "xchange",
    "xj",
    "xslt",
    "xslt-saxon",
];

/// The kind of Camel name being looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// A step (processor).
    Eip,
    /// A top-level item of a route file.
    TopLevel,
    /// An expression language.
    Language,
    /// A component (URI scheme).
    Component,
    /// A data format of `marshal`/`unmarshal`.
    DataFormat,
}

/// The message for `name` when Camel knows it as a `kind` that camel-rs lacks, or `None`
/// when Camel does not know it either (a true unknown, reported as such by the caller).
/// The caller decides first that camel-rs does not have it.
pub fn unsupported(kind: Kind, name: &str) -> Option<String> {
    let (list, what) = match kind {
        Kind::Eip => (EIPS, "EIP"),
        Kind::TopLevel => (TOP_LEVEL, "top-level construct"),
        Kind::Language => (LANGUAGES, "language"),
        Kind::Component => (COMPONENTS, "component"),
        Kind::DataFormat => (DATA_FORMATS, "data format"),
    };
    if !list.contains(&name) {
        return None;
    }
    if kind == Kind::Language && JVM_LANGUAGES.contains(&name) {
        return Some(format!(
            "`{name}` is a Camel language that runs JVM code, which cannot run here: \
             use `simple`, `jsonpath` or `jq`, or a Rust bean (`bean: {{ref: name}}`)"
        ));
    }
    if kind == Kind::Component && name == "class" {
        return Some(java_class_message(name));
    }
    if kind == Kind::Component && JMS.contains(&name) {
        return Some(format!(
            "`{name}` is a Camel component for JMS brokers, and JMS is a Java API, which cannot \
             run here: for queues and topics use `rabbitmq:` (AMQP 0-9-1, also \
             spring-rabbitmq's options), `kafka:`, `nats:` or `aws2-sqs:`"
        ));
    }
    Some(format!(
        "`{name}` is a Camel {what} that camel-rs does not support yet"
    ))
}

/// The message for a Java class or bean reference that would need a JVM.
pub fn java_class_message(name: &str) -> String {
    format!(
        "Java classes cannot run here: register a Rust bean `{name}` \
         (`CamelContext::register_bean(\"{name}\", bean)`, or a bean type with \
         `CamelContext::register_bean_type`) and call it with `bean: {{ref: {name}}}`"
    )
}

/// Logs, once per process and per name, that Camel options with no effect here were
/// accepted: a file written for Camel keeps working, and its author learns the option is
/// ignored without being told again for every route and reload.
pub fn warn_ignored(place: &str, names: &[String]) {
    static SEEN: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    let seen = SEEN.get_or_init(|| Mutex::new(HashSet::new()));
    let fresh: Vec<&str> = match seen.lock() {
        Ok(mut seen) => names
            .iter()
            .filter(|n| seen.insert(format!("{place}/{n}")))
            .map(String::as_str)
            .collect(),
        Err(_) => return,
    };
    if !fresh.is_empty() {
        tracing::warn!(
            place,
            options = %fresh.join(", "),
            "Camel options accepted without effect in camel-rs"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_camel_names_get_a_message_and_unknown_ones_none() {
        assert!(unsupported(Kind::TopLevel, "route_template")
            .unwrap()
            .contains("top-level construct"));
        assert!(unsupported(Kind::Language, "groovy")
            .unwrap()
            .contains("JVM"));
        assert!(unsupported(Kind::Component, "kafka")
            .unwrap()
            .contains("component"));
        assert!(unsupported(Kind::Component, "class")
            .unwrap()
            .starts_with("Java classes cannot run here"));
        assert!(unsupported(Kind::Eip, "frobnicate").is_none());
        // Error handling is being added elsewhere; it must not be called unsupported.
        for name in ["do_try", "throw_exception", "on_exception", "on_completion"] {
            assert!(unsupported(Kind::Eip, name).is_none(), "{name}");
        }
        for name in ["error_handler", "on_exception", "route_configuration"] {
            assert!(unsupported(Kind::TopLevel, name).is_none(), "{name}");
        }
    }
}
