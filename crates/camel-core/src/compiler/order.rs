//! The relay check: a route whose source hands out ordered exchanges (an outbox relay)
//! and whose `to` sends them somewhere that does not keep order (an SQS standard queue)
//! loses that order without an error. The route cannot refuse it — a user may not care —
//! so it says so once at every start.

use camel_api::{Endpoint, EndpointUri};
use serde_json::Value as Json;

use crate::compiler::Registry;
use crate::model::{EndpointDefinition, RouteDefinition};

/// The `to` destinations of `route` (nested ones included) whose component says they do
/// not keep order, redacted for logs; empty unless `source` delivers in order.
pub(super) fn unordered_destinations(
    registry: &Registry,
    route: &RouteDefinition,
    source: &dyn Endpoint,
) -> Vec<String> {
    if !source.delivers_in_order() {
        return Vec::new();
    }
    let mut found = Vec::new();
    for step in &route.steps {
        if step.name == "to" {
            push_endpoint(&step.config, &mut found);
        } else {
            collect_nested(&step.config, &mut found);
        }
    }
    let mut out: Vec<String> = found
        .into_iter()
        .filter(|def| keeps_order(registry, def) == Some(false))
        .map(|def| camel_api::redact_url(&def.uri))
        .collect();
    out.dedup();
    out
}

/// Looks for `to:` entries in a step's configuration: nested step lists are lists of
/// one-key maps, so any `to` key holding a URI or an endpoint map counts.
fn collect_nested(config: &Json, found: &mut Vec<EndpointDefinition>) {
    match config {
        Json::Object(map) => {
            for (key, value) in map {
                if key == "to" {
                    push_endpoint(value, found);
                } else {
                    collect_nested(value, found);
                }
            }
        }
        Json::Array(items) => items.iter().for_each(|i| collect_nested(i, found)),
        _ => {}
    }
}

fn push_endpoint(value: &Json, found: &mut Vec<EndpointDefinition>) {
    match value {
        Json::String(uri) => found.push(EndpointDefinition::new(uri.clone())),
        Json::Object(_) => {
            if let Ok(def) = serde_json::from_value::<EndpointDefinition>(value.clone()) {
                found.push(def);
            }
        }
        _ => {}
    }
}

/// What the destination's component says, from its URI alone (`None` for a URI that does
/// not parse or a scheme nobody serves: the compile reports those).
fn keeps_order(registry: &Registry, def: &EndpointDefinition) -> Option<bool> {
    let def = crate::model::endpoint_path::camel_form(def);
    let uri = EndpointUri::parse(&def.uri)
        .ok()?
        .with_parameters(def.parameter_strings());
    registry.component(uri.scheme())?.keeps_order(&uri)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_to_steps_are_found_in_either_shape() {
        let mut found = Vec::new();
        collect_nested(
            &json!({
                "simple": "${header.x}",
                "steps": [
                    {"to": "sqs:a"},
                    {"choice": {"when": [{"simple": "x", "steps": [{"to": {"uri": "sqs:b"}}]}]}},
                    {"log": "to"}
                ]
            }),
            &mut found,
        );
        let uris: Vec<&str> = found.iter().map(|d| d.uri.as_str()).collect();
        assert_eq!(uris, ["sqs:a", "sqs:b"]);
    }
}
