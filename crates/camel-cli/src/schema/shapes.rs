//! The parts of a route file that the loader reads by hand rather than through a typed
//! configuration (`crates/camel-core/src/yaml/`): the file's items, `route`, `from`,
//! `beans`, `route_configuration`, route templates and Camel K resources. Their keys are
//! the loader's; a test compares them with the keys the loader names in its errors.

use camel_core::model::intercept::{
    InterceptDefinition, InterceptFromDefinition, InterceptSendToEndpointDefinition,
};
use camel_core::rest::{RestConfiguration, RestDefinition};
use camel_eip::config::{ErrorHandlerConfig, OnCompletionConfig, OnException};
use schemars::SchemaGenerator;
use serde_json::{json, Map, Value as Json};

/// `$ref` to a definition of the document.
pub(super) fn reference(name: &str) -> Json {
    json!({"$ref": format!("#/$defs/{name}")})
}

/// One value or a list of them; a list item may also be wrapped in its key
/// (`- onException: {…}`).
fn one_or_list(item: Json, wrapper: &str) -> Json {
    json!({"anyOf": [
        item.clone(),
        {"type": "array", "items": {"anyOf": [
            item.clone(),
            {"type": "object", "properties": {wrapper: item}, "required": [wrapper], "additionalProperties": false}
        ]}}
    ]})
}

/// The definitions of the hand-read parts, by name.
pub(super) fn definitions(g: &mut SchemaGenerator) -> Map<String, Json> {
    let error_handler = g.subschema_for::<ErrorHandlerConfig>().to_value();
    let on_exception = one_or_list(g.subschema_for::<OnException>().to_value(), "on_exception");
    let on_completion = one_or_list(
        g.subschema_for::<OnCompletionConfig>().to_value(),
        "on_completion",
    );
    let intercept = g.subschema_for::<InterceptDefinition>().to_value();
    let intercept_from = g.subschema_for::<InterceptFromDefinition>().to_value();
    let intercept_send = g
        .subschema_for::<InterceptSendToEndpointDefinition>()
        .to_value();
    let steps =
        json!({"description": "The steps, in order.", "type": "array", "items": reference("Step")});
    let text = json!({"type": "string"});
    let ignored = json!({"description": "A Camel route option that changes nothing here (accepted, with a warning)."});
    let mut defs = Map::new();
    defs.insert(
        "Item".into(),
        json!({
            "description": "One item of a route file: a map with one key.",
            "type": "object",
            "minProperties": 1,
            "maxProperties": 1,
            "properties": {
                "route": reference("Route"),
                "from": reference("From"),
                "beans": reference("Beans"),
                "error_handler": error_handler,
                "on_exception": on_exception,
                "on_completion": on_completion,
                "route_configuration": reference("RouteConfiguration"),
                "intercept": intercept,
                "intercept_from": intercept_from,
                "intercept_send_to_endpoint": intercept_send,
                "rest": g.subschema_for::<RestDefinition>().to_value(),
                "rest_configuration": g.subschema_for::<RestConfiguration>().to_value(),
                "route_template": reference("RouteTemplate"),
                "templated_route": reference("TemplatedRoute")
            },
            "additionalProperties": false
        }),
    );
    defs.insert(
        "Route".into(),
        json!({
            "description": "A route: where exchanges come from and the steps they go through.",
            "type": "object",
            "properties": {
                "id": {"description": "The route id; one is generated when absent.", "type": "string", "minLength": 1, "maxLength": camel_core::model::MAX_ROUTE_ID_BYTES},
                "description": text,
                "from": reference("From"),
                "steps": steps,
                "auto_startup": {"description": "Start with the context.", "type": "boolean", "default": true},
                "startup_order": {"description": "Routes start in ascending order of this number, then in definition order.", "type": "integer"},
                "error_handler": error_handler,
                "on_exception": on_exception,
                "on_completion": on_completion,
                "route_configuration_id": {"description": "The route configurations this route takes (comma-separated ids, `*` wildcards).", "type": "string"},
                "route_policy": {"description": "`{leader: NAMESPACE}`: the route's consumer runs only on the process leading NAMESPACE (camel.cluster.* properties; docs/cluster.md).", "type": "object", "properties": {"leader": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,128}$"}}, "required": ["leader"], "additionalProperties": false},
                "partitions": {"description": "Split the `from` poll (file: or sql:) into this many partitions, each owned by one process of the cluster at a time (camel.cluster.* properties; docs/cluster.md).", "type": "integer", "minimum": 1, "maximum": 256},
                "group": ignored, "node_prefix_id": ignored, "stream_cache": ignored,
                "message_history": ignored, "log_mask": ignored, "trace": ignored,
                "delayer": ignored, "shutdown_route": ignored, "shutdown_running_task": ignored
            },
            "required": ["from"],
            "additionalProperties": false
        }),
    );
    defs.insert(
        "From".into(),
        json!({
            "description": "The source endpoint: a URI, or a map with `uri`, `parameters` and the route's `steps`.",
            "if": {"type": "object"},
            "else": {"type": "string"},
            "then": {
                    "properties": {
                        "uri": {"description": "The URI (`timer:tick?period=1000`, `rest:get:/hello`).", "type": "string"},
                        "parameters": {"description": "Endpoint parameters beside the URI (they win over its query).", "type": ["object", "null"]},
                        "steps": steps,
                        "id": text,
                        "description": text,
                        "variable_receive": {"description": "Receive the message into this variable instead of the body.", "type": "string"}
                    },
                    "required": ["uri"],
                    "additionalProperties": false
            }
        }),
    );
    defs.insert(
        "Beans".into(),
        json!({
            "description": "Beans built with the file's routes from bean types registered in Rust.",
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": text,
                    "type": {"description": "The name of a bean type registered in Rust (or a JDBC DataSource class).", "type": "string"},
                    "properties": {"type": ["object", "null"]},
                    "constructors": {}, "factory_method": {}, "factory_bean": {}, "builder_class": {},
                    "builder_method": {}, "init_method": {}, "destroy_method": {}, "script": {},
                    "script_language": {}
                },
                "required": ["name", "type"],
                "additionalProperties": false
            }
        }),
    );
    let intercepts = |item: Json, wrapper: &str| one_or_list(item, wrapper);
    defs.insert(
        "RouteConfiguration".into(),
        json!({
            "description": "Error handling and interceptors for the routes that name its id (or for every route, without one).",
            "type": "object",
            "properties": {
                "id": text,
                "error_handler": error_handler,
                "on_exception": on_exception,
                "on_completion": on_completion,
                "intercept": intercepts(intercept.clone(), "intercept"),
                "intercept_from": intercepts(intercept_from.clone(), "intercept_from"),
                "intercept_send_to_endpoint": intercepts(intercept_send.clone(), "intercept_send_to_endpoint")
            },
            "additionalProperties": false
        }),
    );
    defs.insert(
        "RouteTemplate".into(),
        json!({
            "description": "A route with `{{parameters}}`, made into routes by `templated_route` items or Kamelet uses.",
            "type": "object",
            "properties": {
                "id": text,
                "description": text,
                "parameters": {"type": "array", "items": reference("TemplateParameter")},
                "route": reference("Route"),
                "from": reference("From"),
                "beans": {}, "template_bean": {}
            },
            "required": ["id"],
            "additionalProperties": false
        }),
    );
    defs.insert(
        "TemplateParameter".into(),
        json!({
            "type": "object",
            "properties": {
                "name": text,
                "default_value": {},
                "description": text,
                "required": {"type": "boolean"}
            },
            "required": ["name"],
            "additionalProperties": false
        }),
    );
    defs.insert(
        "TemplatedRoute".into(),
        json!({
            "description": "A route made from a route template.",
            "type": "object",
            "properties": {
                "route_template_ref": {"description": "The template's id.", "type": "string"},
                "route_id": text,
                "parameters": {
                    "description": "The template's parameters: a map, or Camel's list of `{name, value}`.",
                    "anyOf": [
                        {"type": ["object", "null"]},
                        {"type": "array", "items": {"type": "object", "properties": {"name": text, "value": {}}, "required": ["name"]}}
                    ]
                },
                "description": text, "prefix_id": text, "id": text, "beans": {}
            },
            "required": ["route_template_ref"],
            "additionalProperties": false
        }),
    );
    defs.insert(
        "CamelKResource".into(),
        json!({
            "description": "A Camel K resource: an `Integration` (its `spec.flows` are route-file items), a `Pipe`/`KameletBinding` (`source` → `sink`) or a `Kamelet`.",
            "type": "object",
            "properties": {
                "apiVersion": text,
                "kind": {"type": "string", "enum": ["Integration", "Pipe", "KameletBinding", "Kamelet"]},
                "metadata": {"type": "object"},
                "spec": {
                    "type": "object",
                    "properties": {
                        "flows": {"type": "array", "items": reference("Item")},
                        "template": {"type": "object"}
                    }
                }
            },
            "required": ["kind"]
        }),
    );
    defs
}
