//! What the routes and their properties need from Kubernetes.

use std::collections::BTreeMap;

use camel_core::properties::Properties;
use camel_core::RouteDefinition;
use serde_json::Value as Json;

/// What an export writes, read off the loaded routes, the route files' text and the
/// merged properties.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Uses {
    /// A route's consumer is `platform-http:` or `rest:`: a container port and a Service.
    pub(crate) http: bool,
    /// The cluster's leases are Kubernetes Leases (`camel.cluster.backend=kubernetes`, or
    /// a `master:` route with no backend named, ADR 0172): a
    /// ServiceAccount allowed to read and write them. Leases in PostgreSQL, Redis or NATS
    /// need nothing of the API server.
    pub(crate) leases: bool,
    /// Data in a file of the pod: an `outbox:` endpoint with no `datasource` while the
    /// properties name no database (the embedded SQLite file under `camel-data/`), or a
    /// `sqlite:` database file. It must outlive the pod: a StatefulSet with a volume,
    /// one replica (SQLite is one process's).
    pub(crate) embedded_state: bool,
    /// `{{env:NAME}}` placeholders: NAME → true when a default makes it optional.
    pub(crate) env: BTreeMap<String, bool>,
    /// Properties whose names say they hold credentials: mounted from a Secret, never
    /// written into the ConfigMap.
    pub(crate) secret_keys: Vec<String>,
    /// Every other property, for the ConfigMap.
    pub(crate) config: Vec<(String, String)>,
}

/// Property keys that name a database for `sql:` and the outbox (camel-sql reads them).
const DATASOURCE_KEYS: &[&str] = &[
    "spring.datasource.url",
    "quarkus.datasource.jdbc.url",
    "quarkus.datasource.reactive.url",
];

impl Uses {
    pub(crate) fn of(
        routes: &[RouteDefinition],
        texts: &[String],
        properties: &Properties,
    ) -> Self {
        let mut uses = Uses::default();
        let mut uris = Vec::new();
        let mut outbox_without_datasource = false;
        // A leader-only or partitioned route (loaded as `master:`) with no backend named
        // runs on Kubernetes Leases in the pod (ADR 0172), which need their role.
        let backend_named = properties.get("camel.cluster.backend").is_some();
        for route in routes {
            let scheme = scheme(&route.from.uri);
            uses.leases |= scheme == "master" && !backend_named;
            uses.http |= matches!(scheme, "platform-http" | "rest");
            uris.push(route.from.uri.clone());
            outbox_without_datasource |=
                scheme == "outbox" && !has_datasource(&route.from.uri, &route.from.parameters);
            for step in &route.steps {
                strings(&step.config, &mut uris);
                outbox_without_datasource |= embedded_outbox(&step.config);
            }
        }
        for route in routes {
            for value in route.from.parameters.values() {
                strings(value, &mut uris);
            }
        }
        let named_database = DATASOURCE_KEYS.iter().any(|k| properties.get(k).is_some());
        let sqlite_file = uris
            .iter()
            .map(String::as_str)
            .chain(properties.iter().map(|(_, v)| v))
            .any(is_sqlite_file);
        uses.embedded_state = (outbox_without_datasource && !named_database) || sqlite_file;
        for (key, value) in properties.iter() {
            if key == "camel.cluster.backend" && value.trim().eq_ignore_ascii_case("kubernetes") {
                uses.leases = true;
            }
            if camel_api::is_secret_name(key) {
                uses.secret_keys.push(key.to_string());
            } else {
                uses.config.push((key.to_string(), value.to_string()));
            }
            env_placeholders(value, &mut uses.env);
        }
        for text in texts {
            env_placeholders(text, &mut uses.env);
        }
        uses
    }
}

/// True for a SQLite URL that names a file (not `:memory:`), wherever it stands in a
/// URI or a value.
fn is_sqlite_file(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.match_indices("sqlite:").any(|(at, _)| {
        let rest = &lower[at + "sqlite:".len()..];
        let url = rest.split(['&', ' ', '\'', '"']).next().unwrap_or_default();
        !url.is_empty() && !url.contains(":memory:") && !url.contains("mode=memory")
    })
}

fn scheme(uri: &str) -> &str {
    uri.split(':').next().unwrap_or_default().trim()
}

fn has_datasource(uri: &str, parameters: &BTreeMap<String, Json>) -> bool {
    uri.to_ascii_lowercase().contains("datasource")
        || parameters
            .keys()
            .any(|k| k.eq_ignore_ascii_case("datasource"))
}

/// True when `config` sends to an `outbox:` endpoint that names no `datasource`, in its
/// query or in `parameters` beside it.
fn embedded_outbox(config: &Json) -> bool {
    match config {
        Json::String(uri) => scheme(uri) == "outbox" && !has_datasource(uri, &BTreeMap::new()),
        Json::Object(map) => {
            if let Some(uri) = map.get("uri").and_then(Json::as_str) {
                if scheme(uri) == "outbox" {
                    let named = map
                        .get("parameters")
                        .and_then(Json::as_object)
                        .is_some_and(|p| p.keys().any(|k| k.eq_ignore_ascii_case("datasource")));
                    if !named && !has_datasource(uri, &BTreeMap::new()) {
                        return true;
                    }
                }
            }
            map.iter()
                .filter(|(k, _)| *k != "uri")
                .any(|(_, v)| embedded_outbox(v))
        }
        Json::Array(items) => items.iter().any(embedded_outbox),
        _ => false,
    }
}

/// Every string inside `value` (URIs among them).
fn strings(value: &Json, out: &mut Vec<String>) {
    match value {
        Json::String(s) => out.push(s.clone()),
        Json::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Json::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// Adds the names of the `{{env:NAME}}` and `{{env:NAME:default}}` placeholders of `text`.
pub(crate) fn env_placeholders(text: &str, out: &mut BTreeMap<String, bool>) {
    let mut rest = text;
    while let Some(at) = rest.find("{{env:") {
        rest = &rest[at + "{{env:".len()..];
        let Some(end) = rest.find("}}") else { break };
        let inner = &rest[..end];
        let (name, optional) = match inner.split_once(':') {
            Some((name, _default)) => (name.trim(), true),
            None => (inner.trim(), false),
        };
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if valid {
            // Needed once anywhere without a default: needed.
            let entry = out.entry(name.to_string()).or_insert(optional);
            *entry &= optional;
        }
        rest = &rest[end..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_placeholders_with_and_without_defaults() {
        let mut env = BTreeMap::new();
        env_placeholders(
            "{{env:DB_URL}} and {{env:REGION:eu}} {{env:REGION}} {{env:}}",
            &mut env,
        );
        env_placeholders(
            "{{env:GREETING:hi}} {{env:bad name}} {{env:UNCLOSED",
            &mut env,
        );
        assert_eq!(
            env.into_iter().collect::<Vec<_>>(),
            [
                ("DB_URL".to_string(), false),
                ("GREETING".to_string(), true),
                ("REGION".to_string(), false),
            ]
        );
    }

    #[test]
    fn sqlite_files_are_state_and_memory_is_not() {
        assert!(is_sqlite_file("sqlite:camel-data/orders.db"));
        assert!(is_sqlite_file(
            "sql:select 1?datasource=sqlite:/var/app.db&x=1"
        ));
        assert!(!is_sqlite_file("sqlite::memory:"));
        assert!(!is_sqlite_file("sqlite:file:a?mode=memory"));
        assert!(!is_sqlite_file("postgres://h/db"));
    }

    #[test]
    fn an_outbox_without_a_datasource_is_embedded() {
        use serde_json::json;
        assert!(embedded_outbox(&json!("outbox:orders")));
        assert!(!embedded_outbox(&json!(
            "outbox:orders?datasource=postgres://h/db"
        )));
        assert!(!embedded_outbox(
            &json!({"steps": [{"uri": "outbox:orders", "parameters": {"dataSource": "x"}}]})
        ));
        assert!(embedded_outbox(
            &json!({"steps": [{"to": {"uri": "outbox:orders"}}]})
        ));
        assert!(!embedded_outbox(&json!({"to": "log:x"})));
    }
}
