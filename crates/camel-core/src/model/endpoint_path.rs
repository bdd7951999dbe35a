//! Endpoints in the form Kaoto and Karavan write them: the scheme alone in `uri` and the
//! path in `parameters`, under the component's path parameter name (`uri: timer` +
//! `parameters: {timerName: tick}` is `timer:tick`). Also drops the Camel options that
//! mean nothing without a JVM (`bridgeErrorHandler`, `lazyStartProducer` …), with a
//! one-time warning, so a file written for Camel loads unchanged (ADR 0051).
//!
//! ```
//! use camel_core::model::endpoint_path::camel_form;
//! use camel_core::EndpointDefinition;
//!
//! let def = EndpointDefinition::new("timer").parameter("timerName", "tick").parameter("period", 5);
//! let def = camel_form(&def);
//! assert_eq!(def.uri, "timer:tick");
//! assert_eq!(def.parameter_strings(), [("period", "5".to_string())]);
//! ```

use camel_api::suggest::to_snake_case;
use serde_json::Value as Json;

use super::camel_dsl::warn_ignored;
use super::EndpointDefinition;

/// Each component's path parameters, in path order, as Camel's component docs name them,
/// and the text between them.
const PATHS: &[(&str, &[&str], &str)] = &[
    ("direct", &["name"], ""),
    ("bean", &["beanName"], ""),
    ("sql", &["query"], ""),
    ("seda", &["name"], ""),
    ("timer", &["timerName"], ""),
    ("scheduler", &["name"], ""),
    ("cron", &["name"], ""),
    ("quartz", &["groupName", "triggerName"], "/"),
    ("log", &["loggerName"], ""),
    ("file", &["directoryName"], ""),
    ("mock", &["name"], ""),
    ("outbox", &["name"], ""),
    ("sqs", &["queueNameOrArn"], ""),
    ("nats", &["topic"], ""),
    ("aws2-sqs", &["queueNameOrArn"], ""),
    ("kafka", &["topic"], ""),
    ("rabbitmq", &["exchangeName"], ""),
    ("spring-rabbitmq", &["exchangeName"], ""),
    ("platform-http", &["path"], ""),
    ("http", &["httpUri"], ""),
    ("https", &["httpUri"], ""),
    ("once", &["name"], ""),
    ("stream", &["kind"], ""),
    ("file-watch", &["path"], ""),
    ("xslt", &["resourceUri"], ""),
    ("aws2-s3", &["bucketNameOrArn"], ""),
    ("aws2-sns", &["topicNameOrArn"], ""),
    ("paho-mqtt5", &["topic"], ""),
    ("paho", &["topic"], ""),
    ("google-pubsub", &["projectId", "destinationName"], ":"),
];

/// Remote file components: `//host[:port][/directoryName]`, the parts Camel's docs name.
const REMOTE_FILE: &[&str] = &["ftp", "ftps", "sftp"];

/// Options every Camel endpoint has that govern the JVM's threads, bean binding or
/// Camel's own error handler: nothing here reads them, and nothing changes without them.
const IGNORED: &[&str] = &[
    "autowired_enabled",
    "basic_property_binding",
    "bridge_error_handler",
    "exception_handler",
    "exchange_pattern",
    "lazy_start_producer",
    "synchronous",
];

/// Options of one component with no meaning here.
const IGNORED_BY_SCHEME: &[(&str, &[&str])] =
    &[("timer", &["daemon"]), ("seda", &["purge_when_stopping"])];

/// `def` with its path taken from `parameters` when `uri` holds only the scheme, and
/// without the Camel options that mean nothing here.
pub fn camel_form(def: &EndpointDefinition) -> EndpointDefinition {
    let mut def = def.clone();
    let (head, query) = match def.uri.split_once('?') {
        Some((h, q)) => (h.to_string(), Some(q.to_string())),
        None => (def.uri.clone(), None),
    };
    let (scheme, path) = match head.split_once(':') {
        Some((s, p)) => (s.trim().to_string(), p.to_string()),
        None => (head.trim().to_string(), String::new()),
    };
    // `uri: docling` (the scheme alone, as Kaoto writes it) names the component even when
    // no path follows, so the error is about the component or its path, not the scheme.
    let mut uri = if head.contains(':') || head.trim().is_empty() {
        head.clone()
    } else {
        format!("{scheme}:")
    };
    if path.is_empty() && REMOTE_FILE.contains(&scheme.as_str()) {
        if let Some(host) = take(&mut def, "host") {
            let mut path = format!("//{host}");
            if let Some(port) = take(&mut def, "port") {
                path = format!("{path}:{port}");
            }
            if let Some(dir) = take(&mut def, "directoryName") {
                path = format!("{path}/{}", dir.trim_start_matches('/'));
            }
            uri = format!("{scheme}:{path}");
        }
    } else if path.is_empty() {
        if let Some((_, names, separator)) = PATHS.iter().find(|(s, _, _)| *s == scheme) {
            let parts: Vec<String> = names
                .iter()
                .filter_map(|name| take(&mut def, name))
                .collect();
            if !parts.is_empty() {
                uri = format!("{scheme}:{}", parts.join(separator));
            }
        }
    }
    let mut ignored = Vec::new();
    let ignorable = |name: &str| {
        let name = to_snake_case(name);
        IGNORED.contains(&name.as_str())
            || IGNORED_BY_SCHEME
                .iter()
                .any(|(s, names)| *s == scheme && names.contains(&name.as_str()))
    };
    def.parameters.retain(|k, _| {
        let keep = !ignorable(k);
        if !keep {
            ignored.push(k.clone());
        }
        keep
    });
    if let Some(query) = query {
        let kept: Vec<&str> = query
            .split('&')
            .filter(|pair| {
                let name = pair.split_once('=').map_or(*pair, |(k, _)| k);
                let keep = !ignorable(name);
                if !keep {
                    ignored.push(name.to_string());
                }
                keep
            })
            .collect();
        if !kept.is_empty() {
            uri = format!("{uri}?{}", kept.join("&"));
        }
    }
    if !ignored.is_empty() {
        warn_ignored(&scheme, &ignored);
    }
    def.uri = uri;
    def
}

/// Removes the parameter `name` (in any spelling) and returns it as text.
fn take(def: &mut EndpointDefinition, name: &str) -> Option<String> {
    let wanted = to_snake_case(name);
    let key = def
        .parameters
        .keys()
        .find(|k| to_snake_case(k) == wanted)?
        .clone();
    match def.parameters.remove(&key)? {
        Json::String(s) => Some(s),
        Json::Null => None,
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(uri: &str, params: &[(&str, &str)]) -> EndpointDefinition {
        let mut def = EndpointDefinition::new(uri);
        for (k, v) in params {
            def = def.parameter(*k, *v);
        }
        camel_form(&def)
    }

    #[test]
    fn path_parameters_build_the_path() {
        assert_eq!(form("direct", &[("name", "x")]).uri, "direct:x");
        assert_eq!(form("file:", &[("directoryName", "in")]).uri, "file:in");
        assert_eq!(form("log", &[("loggerName", "l")]).uri, "log:l");
        assert_eq!(
            form("quartz", &[("groupName", "g"), ("triggerName", "t")]).uri,
            "quartz:g/t"
        );
        // A path already in the URI wins: `name` stays a parameter (and is refused or
        // read by the component).
        let kept = form("seda:a", &[("name", "b")]);
        assert_eq!((kept.uri.as_str(), kept.parameters.len()), ("seda:a", 1));
        assert_eq!(form("kafka", &[("topic", "t")]).uri, "kafka:t");
        // An unknown scheme keeps its parameters and is named as a scheme, so the error
        // says the component is missing rather than that the URI has no scheme.
        assert_eq!(form("jms", &[("destinationName", "q")]).uri, "jms:");
        // As Kaoto writes a remote folder (Camel JBang's `ftp` example).
        let ftp = form(
            "ftp",
            &[
                ("host", "localhost"),
                ("port", "2221"),
                ("passiveMode", "true"),
            ],
        );
        assert_eq!(ftp.uri, "ftp://localhost:2221");
        assert_eq!(
            ftp.parameter_strings(),
            [("passiveMode", "true".to_string())]
        );
        assert_eq!(
            form("sftp", &[("host", "h"), ("directoryName", "/in")]).uri,
            "sftp://h/in"
        );
        assert_eq!(
            form(
                "google-pubsub",
                &[("projectId", "p"), ("destinationName", "s")]
            )
            .uri,
            "google-pubsub:p:s"
        );
        assert_eq!(
            form("aws2-s3", &[("bucketNameOrArn", "b")]).uri,
            "aws2-s3:b"
        );
    }

    #[test]
    fn jvm_only_options_are_dropped_from_parameters_and_query() {
        let def = form(
            "timer:t?period=5&bridgeErrorHandler=true",
            &[("lazyStartProducer", "true"), ("repeatCount", "1")],
        );
        assert_eq!(def.uri, "timer:t?period=5");
        assert_eq!(def.parameter_strings(), [("repeatCount", "1".to_string())]);
        assert_eq!(form("timer:t?daemon=false", &[]).uri, "timer:t");
        // `daemon` means something only to the timer.
        assert_eq!(form("seda:a?daemon=1", &[]).uri, "seda:a?daemon=1");
    }
}
