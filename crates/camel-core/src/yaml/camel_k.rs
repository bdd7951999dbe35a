//! Camel K resources as route files: an `Integration` carries ordinary routes under
//! `spec.flows`; a `Pipe` (formerly `KameletBinding`) is one route from `spec.source`
//! through `spec.steps` to `spec.sink`, each an endpoint given by `uri` or by a `ref` to a
//! Kamelet (made a `kamelet:` URI before the Pipe is read, see `expand`).

use serde_json::{Map, Value as Json};

use super::loader::{Loaded, Read, Reader};
use crate::error::{RouteError, RouteErrorKind};
use crate::model::{EndpointDefinition, RouteDefinition, StepDefinition};
use crate::properties::Properties;

impl Reader {
    /// A document whose root map has `kind`.
    pub(super) fn camel_k(&self, map: Map<String, Json>) -> Loaded {
        match self.camel_k_routes(map) {
            Ok(loaded) => loaded,
            Err(errors) => (Vec::new(), errors),
        }
    }

    fn camel_k_routes(&self, mut map: Map<String, Json>) -> Read<Loaded> {
        let kind = map
            .get("kind")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string();
        let name = map
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Json::as_str)
            .map(str::to_string);
        let camel = map
            .get("apiVersion")
            .and_then(Json::as_str)
            .is_none_or(|v| v.starts_with("camel.apache.org/"));
        if !camel && !matches!(kind.as_str(), "Integration" | "Pipe" | "KameletBinding") {
            // A Kubernetes resource an example folder keeps beside its routes (a secret
            // store, a broker): `camel run *` is about the routes.
            tracing::warn!(
                file = %self.file(),
                kind = %kind,
                "a Kubernetes resource, not routes: passed over"
            );
            return Ok((Vec::new(), Vec::new()));
        }
        let spec = match map.remove("spec") {
            Some(Json::Object(spec)) => spec,
            _ => {
                return Err(vec![
                    self.invalid(format!("a `{kind}` needs a `spec` map"), "")
                ])
            }
        };
        match kind.as_str() {
            "Integration" => match spec.get("flows") {
                Some(Json::Array(flows)) => Ok(self.items(flows.clone(), "/spec/flows")),
                _ => Err(vec![self.invalid(
                    "an `Integration` is read from `spec.flows` (a list of routes); \
                     `spec.sources` is not supported yet"
                        .into(),
                    "/spec",
                )]),
            },
            "Pipe" | "KameletBinding" => self.pipe(spec, name).map(|r| (vec![r], Vec::new())),
            other => Err(vec![self.invalid(
                format!(
                    "a `{other}` resource holds no routes; route files are route lists, \
                     Camel K `Integration`s or `Pipe`s"
                ),
                "/kind",
            )]),
        }
    }

    fn invalid(&self, message: String, pointer: &str) -> RouteError {
        self.error(RouteErrorKind::InvalidValue(message), pointer)
    }

    /// `source` → `steps` → `sink`.
    fn pipe(&self, mut spec: Map<String, Json>, name: Option<String>) -> Read<RouteDefinition> {
        let mut errors = Vec::new();
        let mut endpoint = |value: Option<Json>, pointer: &str| -> Option<EndpointDefinition> {
            match self.pipe_endpoint(value, pointer) {
                Ok(e) => Some(e),
                Err(e) => {
                    errors.push(e);
                    None
                }
            }
        };
        let source = endpoint(spec.remove("source"), "/spec/source");
        let mut steps = Vec::new();
        if let Some(Json::Array(items)) = spec.remove("steps") {
            for (i, item) in items.into_iter().enumerate() {
                if let Some(e) = endpoint(Some(item), &format!("/spec/steps/{i}")) {
                    steps.push(to_step(e));
                }
            }
        }
        if let Some(sink) = endpoint(spec.remove("sink"), "/spec/sink") {
            steps.push(to_step(sink));
        }
        let Some(from) = source else {
            return Err(errors);
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        let mut route = RouteDefinition {
            id: name,
            from,
            steps,
            auto_startup: true,
            ..Default::default()
        };
        // Steps are located at the pipe's `spec`; the positions of the list are not the
        // route's own (the sink is not in `spec.steps`).
        route.source = Some(self.source_map("/spec/source", "/spec/steps"));
        Ok(route)
    }

    /// `{uri, properties}` (or `{ref: {kind: Kamelet, name}}`, refused).
    fn pipe_endpoint(
        &self,
        value: Option<Json>,
        pointer: &str,
    ) -> Result<EndpointDefinition, RouteError> {
        let Some(value) = value else {
            return Err(self.error(
                RouteErrorKind::Missing(pointer.rsplit('/').next().unwrap_or("").into()),
                "/spec",
            ));
        };
        let mut map = self.object(value, pointer, "a pipe endpoint is a map with `uri`")?;
        // Kamelet references were made `kamelet:` URIs before the Pipe was read.
        if let Some(reference) = map.get("ref") {
            let kind = reference.get("kind").and_then(Json::as_str).unwrap_or("?");
            let message = match reference.get("name").and_then(Json::as_str) {
                None if kind == "Kamelet" => "a `ref` to a Kamelet needs its `name`".to_string(),
                _ => format!(
                    "a Pipe `ref` to a `{kind}` is not supported: camel-rs resolves references \
                     to Kamelets (`kind: Kamelet`); give other endpoints as `uri:`"
                ),
            };
            return Err(self.invalid(message, &format!("{pointer}/ref")));
        }
        let uri = match map.remove("uri") {
            Some(v) => self.string(v, &format!("{pointer}/uri"), "uri")?,
            None => return Err(self.error(RouteErrorKind::Missing("uri".into()), pointer)),
        };
        let mut def = EndpointDefinition::new(uri);
        if let Some(properties) = map.remove("properties") {
            def.parameters = self
                .object(
                    properties,
                    &format!("{pointer}/properties"),
                    "`properties` takes a map",
                )?
                .into_iter()
                .collect();
        }
        Ok(def)
    }
}

fn to_step(def: EndpointDefinition) -> StepDefinition {
    let mut config = Map::new();
    config.insert("uri".into(), Json::String(def.uri));
    if !def.parameters.is_empty() {
        config.insert(
            "parameters".into(),
            Json::Object(def.parameters.into_iter().collect()),
        );
    }
    StepDefinition::new("to", Json::Object(config))
}

/// The properties a Camel K resource configures for itself
/// (`spec.integration.configuration` of a Pipe, `spec.configuration` of an
/// Integration: `{type: property, value: "key=value"}`; the camel trait's `properties`),
/// added to `properties` where the command line has not set the key.
pub(super) fn resource_properties(value: &Json, properties: &mut Properties) {
    let Some(spec) = value.get("spec") else {
        return;
    };
    let lists = [
        spec.get("integration").and_then(|i| i.get("configuration")),
        spec.get("configuration"),
    ];
    for entry in lists
        .into_iter()
        .flatten()
        .filter_map(Json::as_array)
        .flatten()
    {
        if entry.get("type").and_then(Json::as_str) != Some("property") {
            continue;
        }
        if let Some((key, v)) = entry
            .get("value")
            .and_then(Json::as_str)
            .and_then(|v| v.split_once('='))
        {
            if properties.get(key.trim()).is_none() {
                properties.set(key.trim(), v);
            }
        }
    }
    // The camel trait's `properties` (`spec.traits.camel.properties`, also under a Pipe's
    // `spec.integration`): a list of `key = value` texts, spaces around `=` not part of
    // either.
    let traits = [
        spec.get("traits"),
        spec.get("integration").and_then(|i| i.get("traits")),
    ];
    for entry in traits
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("camel")?.get("properties")?.as_array())
        .flatten()
    {
        if let Some((key, v)) = entry.as_str().and_then(|v| v.split_once('=')) {
            if properties.get(key.trim()).is_none() {
                properties.set(key.trim(), v.trim());
            }
        }
    }
}
