//! Camel's REST DSL: `- rest:` items (with `- restConfiguration:`) expanded into
//! `platform-http:` routes, plus the OpenAPI 3 document of their operations (ADR 0073).
//!
//! ```yaml
//! - restConfiguration:
//!     contextPath: /api
//!     bindingMode: json
//! - rest:
//!     path: /orders
//!     post:
//!       - to: direct:create-order
//!     get:
//!       - path: /{id}
//!         to: direct:get-order
//!         param:
//!           - {name: id, type: path, dataType: integer}
//! ```
//!
//! Each operation becomes one route `from: platform-http:/api/orders/{id}` (restricted to its
//! method, with its binding and media types as endpoint options) whose one step is its `to`.
//! The document is served by one more route, at `{contextPath}/openapi.json` or at
//! `{contextPath}{apiContextPath}`. Nothing here knows HTTP: the routes are plain route
//! definitions, compiled and run like any other.
//!
//! ```
//! use camel_core::rest::{RestConfiguration, RestDefinition};
//! let rest: RestDefinition = serde_json::from_value(serde_json::json!({
//!     "path": "/hello", "get": [{"path": "/{name}", "to": "direct:hello"}]
//! })).unwrap();
//! let routes = camel_core::rest::routes(&RestConfiguration::default(), &[rest]).unwrap();
//! assert_eq!(routes[0].from.uri, "platform-http:/hello/{name}");
//! assert_eq!(routes[1].from.uri, "platform-http:/openapi.json");
//! ```

pub mod contract;
pub mod openapi;
pub mod validation;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};

use crate::model::{EndpointDefinition, RouteDefinition, StepDefinition};

/// The HTTP methods of the REST DSL, in Camel's key names.
pub const VERBS: &[&str] = &["get", "post", "put", "delete", "patch", "head"];

/// `- restConfiguration:` — options shared by every `rest:` of the file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RestConfiguration {
    /// The HTTP component: only `platform-http` (the default) is available.
    pub component: Option<String>,
    /// The OpenAPI component: only `openapi` (the built-in document) is available.
    pub api_component: Option<String>,
    /// A path prefix of every operation (`/api`).
    pub context_path: Option<String>,
    /// Where the OpenAPI document is served, below `context_path` (default `/openapi.json`).
    pub api_context_path: Option<String>,
    /// The id of the route serving the document.
    pub api_context_route_id: Option<String>,
    /// `off` (default) or `json`, for every operation that does not set its own.
    pub binding_mode: Option<String>,
    /// Document properties: `api.title`, `api.version`, `api.description`,
    /// `api.contact.name`, `api.contact.email`, `api.license.name`.
    pub api_property: Vec<RestProperty>,
    /// Written into the document's `servers` (the server's port comes from `--port`).
    pub scheme: Option<String>,
    /// Written into the document's `servers`.
    pub host: Option<String>,
    /// Written into the document's `servers`.
    pub port: Option<Json>,
    /// Written into the document's `servers` instead of `host`.
    pub api_host: Option<String>,
    /// Camel's choice between one route per operation and inlined `direct:` routes: the
    /// expansion always makes one route per operation, so either value is accepted.
    pub inline_routes: Option<bool>,
    /// Check each request against its operation before routing it (see [`validation`]),
    /// for every `rest` that does not say otherwise.
    pub client_request_validation: Option<bool>,
    /// Camel's CORS switch: accepted, no CORS headers are added yet.
    #[serde(alias = "enableCors")]
    pub enable_cors: Option<bool>,
    /// Camel's option to skip the binding of error replies: accepted, no effect.
    pub skip_binding_on_error_code: Option<bool>,
    /// Camel's check of each reply against the contract: accepted, replies are not
    /// checked yet.
    pub client_response_validation: Option<bool>,
    /// Camel's 204 for an empty JSON reply: accepted, no effect (an empty body is
    /// answered 204 already).
    pub enable_no_content_response: Option<bool>,
    /// The options below tune Camel's Java components, data formats and document
    /// writer (vendor extensions, CORS headers, `X-Forwarded` handling, Jackson's
    /// `prettyPrint` …): accepted, no effect.
    pub api_vendor_extension: Option<Json>,
    /// See `api_vendor_extension`.
    pub binding_package_scan: Option<Json>,
    /// See `api_vendor_extension`.
    pub component_property: Option<Json>,
    /// See `api_vendor_extension`.
    pub consumer_property: Option<Json>,
    /// See `api_vendor_extension`.
    pub cors_headers: Option<Json>,
    /// See `api_vendor_extension`.
    pub data_format_property: Option<Json>,
    /// See `api_vendor_extension`.
    pub endpoint_property: Option<Json>,
    /// See `api_vendor_extension`.
    pub host_name_resolver: Option<Json>,
    /// See `api_vendor_extension`.
    pub json_data_format: Option<Json>,
    /// See `api_vendor_extension`.
    pub producer_api_doc: Option<Json>,
    /// See `api_vendor_extension`.
    pub producer_component: Option<Json>,
    /// See `api_vendor_extension`.
    pub use_x_forward_headers: Option<Json>,
    /// See `api_vendor_extension`.
    pub validation_levels: Option<Json>,
    /// See `api_vendor_extension`.
    pub xml_data_format: Option<Json>,
}

/// A `{key, value}` pair of `api_property`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestProperty {
    /// The property name.
    pub key: String,
    /// Its value.
    pub value: String,
}

/// `- rest:` — a group of operations under one path.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RestDefinition {
    /// Camel's node id (accepted, not used).
    pub id: Option<String>,
    /// Written into the document as the tag's description.
    pub description: Option<String>,
    /// A disabled `rest` makes no routes.
    pub disabled: Option<bool>,
    /// The path every operation of the group is below.
    pub path: Option<String>,
    /// Accepted media types, for operations that do not set their own.
    pub consumes: Option<String>,
    /// Produced media types, for operations that do not set their own.
    pub produces: Option<String>,
    /// `off` or `json`, for operations that do not set their own.
    pub binding_mode: Option<String>,
    /// The OpenAPI tag of the operations (default: the path).
    pub tag: Option<String>,
    /// `false` leaves the group out of the document.
    pub api_docs: Option<bool>,
    /// `GET` operations.
    pub get: Vec<VerbDefinition>,
    /// `POST` operations.
    pub post: Vec<VerbDefinition>,
    /// `PUT` operations.
    pub put: Vec<VerbDefinition>,
    /// `DELETE` operations.
    pub delete: Vec<VerbDefinition>,
    /// `PATCH` operations.
    pub patch: Vec<VerbDefinition>,
    /// `HEAD` operations.
    pub head: Vec<VerbDefinition>,
    /// Contract first: the operations of an OpenAPI 3 document, each routed to
    /// `direct:{operationId}` (see [`contract`]).
    pub open_api: Option<contract::OpenApiDefinition>,
    /// Check each request against its operation before routing it (see
    /// [`validation`]), for operations that do not say otherwise.
    pub client_request_validation: Option<bool>,
    /// Camel's CORS switch: accepted, no CORS headers are added yet.
    #[serde(alias = "enableCors")]
    pub enable_cors: Option<bool>,
    /// Camel's option to skip the binding of error replies: accepted, no effect (the
    /// JSON binding here never rewrites a reply).
    pub skip_binding_on_error_code: Option<bool>,
    /// Camel's security definitions, for the document: accepted, not written yet.
    pub security_definitions: Option<Json>,
    /// Camel's security requirements, for the document: accepted, not written yet.
    pub security_requirements: Option<Json>,
}

impl RestDefinition {
    /// The operations with their method name (`get`, …) and index in its list.
    pub fn operations(&self) -> impl Iterator<Item = (&'static str, usize, &VerbDefinition)> {
        [
            ("get", &self.get),
            ("post", &self.post),
            ("put", &self.put),
            ("delete", &self.delete),
            ("patch", &self.patch),
            ("head", &self.head),
        ]
        .into_iter()
        .flat_map(|(verb, list)| list.iter().enumerate().map(move |(i, v)| (verb, i, v)))
    }
}

/// One operation: a method on a path, sent to an endpoint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct VerbDefinition {
    /// The operation id in the document (and the route id unless `route_id` is given).
    pub id: Option<String>,
    /// The id of the route made for the operation.
    pub route_id: Option<String>,
    /// The operation's summary in the document, and the route's description.
    pub description: Option<String>,
    /// A disabled operation makes no route.
    pub disabled: Option<bool>,
    /// The path below the group's, with `{name}` parameters.
    pub path: Option<String>,
    /// Where the request goes: a URI, or `{uri, parameters}`.
    pub to: Option<Json>,
    /// Accepted media types (comma-separated).
    pub consumes: Option<String>,
    /// Produced media types (comma-separated); the first is the reply's default
    /// `Content-Type`.
    pub produces: Option<String>,
    /// `off` or `json`.
    pub binding_mode: Option<String>,
    /// The request body's type name (a Java class in Camel): the schema's title here.
    #[serde(rename = "type")]
    pub type_name: Option<String>,
    /// The reply body's type name: the schema's title here.
    pub out_type: Option<String>,
    /// Marks the operation deprecated in the document.
    pub deprecated: Option<bool>,
    /// `false` leaves the operation out of the document.
    pub api_docs: Option<bool>,
    /// Parameters (documentation: path parameters reach the route as headers whether
    /// declared or not).
    pub param: Vec<ParamDefinition>,
    /// Documented responses.
    pub response_message: Vec<ResponseMessage>,
    /// Check each request against the operation before routing it (see [`validation`]).
    pub client_request_validation: Option<bool>,
    /// Camel's check of the reply: accepted, no effect yet.
    pub client_response_validation: Option<bool>,
    /// Camel's CORS switch: accepted, no CORS headers are added yet.
    #[serde(alias = "enableCors")]
    pub enable_cors: Option<bool>,
    /// Camel's 204 for an empty JSON reply: accepted, no effect (an empty body is
    /// answered 204 already).
    pub enable_no_content_response: Option<bool>,
    /// Camel's option to skip the binding of error replies: accepted, no effect.
    pub skip_binding_on_error_code: Option<bool>,
    /// Camel's stream caching: accepted, no effect (bodies are in memory).
    pub stream_cache: Option<bool>,
    /// Camel's security requirements of the operation: accepted, not documented yet.
    pub security: Option<Json>,
}

/// A documented parameter.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParamDefinition {
    /// Its name.
    pub name: String,
    /// `path` (default), `query`, `header` or `body`.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// Its description.
    #[serde(default)]
    pub description: Option<String>,
    /// Required (path parameters always are).
    #[serde(default)]
    pub required: Option<bool>,
    /// `string` (default), `integer`, `int`, `long`, `number`, `double`, `float`,
    /// `boolean`, `array`, `object`.
    #[serde(default)]
    pub data_type: Option<String>,
    /// The schema's `format` (`int64`, `date-time`, …).
    #[serde(default)]
    pub data_format: Option<String>,
    /// The items' type of an `array`.
    #[serde(default)]
    pub array_type: Option<String>,
    /// The default value.
    #[serde(default)]
    pub default_value: Option<Json>,
    /// The values allowed: text, or `{value}` maps as Camel writes them.
    #[serde(default)]
    pub allowable_values: Vec<Json>,
    /// Camel's `collectionFormat` (accepted; OpenAPI 3 has none).
    #[serde(default)]
    pub collection_format: Option<String>,
    /// Camel's example values (`{key, value}` items): accepted, not written into the
    /// document yet.
    #[serde(default)]
    pub examples: Option<Json>,
}

/// A documented response.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ResponseMessage {
    /// The status (`200`, `404`, `default`); default `200`.
    pub code: Option<Json>,
    /// Its description.
    pub message: Option<String>,
    /// The body's type name.
    pub response_model: Option<String>,
    /// Camel's example bodies (`{key, value}` items): accepted, not written into the
    /// document yet.
    pub examples: Option<Json>,
    /// Camel's documented reply headers: accepted, not written into the document yet.
    pub header: Option<Json>,
    /// Camel's reply media type of this response: accepted, not written yet.
    pub content_type: Option<String>,
}

/// A mistake in a `rest:` item: where (a JSON pointer below the item, or below the
/// configuration when `in_configuration`) and why.
#[derive(Clone, Debug, PartialEq)]
pub struct RestError {
    /// Index of the `rest` in the list given to [`routes`].
    pub rest: usize,
    /// True when the mistake is in the configuration, not in a `rest`.
    pub in_configuration: bool,
    /// JSON pointer below the item (`/get/0/to`).
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

/// The routes of `rests`: one per enabled operation, in the order written, then the one
/// serving the OpenAPI document. Every mistake is reported, each at its place.
pub fn routes(
    config: &RestConfiguration,
    rests: &[RestDefinition],
) -> Result<Vec<RouteDefinition>, Vec<RestError>> {
    routes_at(config, rests).map(|routes| routes.into_iter().map(|(r, _)| r).collect())
}

/// Where an operation was declared: the index of its `rest`, and its pointer below it.
pub type Declared = (usize, String);

/// Like [`routes`], each route with where it was declared: the index of its `rest` and
/// the pointer of its operation below it (`/get/0`); `None` for the document's route.
pub fn routes_at(
    config: &RestConfiguration,
    rests: &[RestDefinition],
) -> Result<Vec<(RouteDefinition, Option<Declared>)>, Vec<RestError>> {
    let mut errors = Vec::new();
    let config_error = |pointer: &str, message: String| RestError {
        rest: 0,
        in_configuration: true,
        pointer: pointer.into(),
        message,
    };
    if let Some(c) = config
        .component
        .as_deref()
        .filter(|c| *c != "platform-http")
    {
        errors.push(config_error(
            "/component",
            format!("`{c}`: the REST DSL runs on `platform-http` only in camel-rs"),
        ));
    }
    if let Some(c) = config.api_component.as_deref().filter(|c| *c != "openapi") {
        errors.push(config_error(
            "/api_component",
            format!("`{c}`: the REST DSL's document is OpenAPI 3 (`openapi`) only"),
        ));
    }
    if let Err(why) = binding(config.binding_mode.as_deref()) {
        errors.push(config_error("/binding_mode", why));
    }
    let context_path = config.context_path.as_deref().unwrap_or("");
    let mut out = Vec::new();
    // Each method and path once, as Camel refuses a duplicate verb at start-up: the
    // operation's endpoint (path and method) → its method and path as declared first.
    let mut served: std::collections::HashMap<String, String> = Default::default();
    for (r, rest) in rests.iter().enumerate() {
        if rest.disabled == Some(true) {
            continue;
        }
        let error = |pointer: String, message: String| RestError {
            rest: r,
            in_configuration: false,
            pointer,
            message,
        };
        if let Err(why) = binding(rest.binding_mode.as_deref()) {
            errors.push(error("/binding_mode".into(), why));
        }
        if let Some(api) = rest.open_api.as_ref().filter(|a| a.disabled != Some(true)) {
            match api.operations() {
                Ok(ops) => {
                    for (verb, op) in ops {
                        match operation_route(config, rest, verb, &op, context_path) {
                            Ok(route) => out.push((route, Some((r, "/open_api".into())))),
                            Err((_, message)) => errors.push(error("/open_api".into(), message)),
                        }
                    }
                }
                Err(why) => errors.push(error("/open_api".into(), why)),
            }
        }
        for (verb, i, op) in rest.operations() {
            if op.disabled == Some(true) {
                continue;
            }
            let at = format!("/{verb}/{i}");
            match operation_route(config, rest, verb, op, context_path) {
                Ok(route) => {
                    let key = serde_json::to_string(&route.from).unwrap_or_default();
                    let path = format!(
                        "{}{}",
                        rest.path.as_deref().unwrap_or(""),
                        op.path.as_deref().unwrap_or("")
                    );
                    let shown = format!("{verb} {}", if path.is_empty() { "/" } else { &path });
                    if let Some(first) = served.get(&key) {
                        errors.push(error(
                            at.clone(),
                            format!(
                                "`{shown}` is declared twice (first as `{first}`): each method \
                                 and path of the REST DSL is served by one operation, as \
                                 Camel refuses a duplicate verb when the routes start"
                            ),
                        ));
                        continue;
                    }
                    served.insert(key, shown);
                    out.push((route, Some((r, at))));
                }
                Err((pointer, message)) => errors.push(error(format!("{at}{pointer}"), message)),
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if rests.iter().any(|r| r.disabled != Some(true)) {
        out.push((document_route(config, rests), None));
    }
    Ok(out)
}

/// Validates a binding mode; `None` is fine (inherited).
fn binding(mode: Option<&str>) -> Result<(), String> {
    match mode {
        None | Some("off" | "json") => Ok(()),
        Some(m @ ("auto" | "xml" | "json_xml")) => Err(format!(
            "binding mode `{m}` is not available in camel-rs: use `json` or `off`"
        )),
        Some(m) => Err(format!("`{m}` is not a binding mode (`off` or `json`)")),
    }
}

/// The route of one operation.
fn operation_route(
    config: &RestConfiguration,
    rest: &RestDefinition,
    verb: &str,
    op: &VerbDefinition,
    context_path: &str,
) -> Result<RouteDefinition, (String, String)> {
    binding(op.binding_mode.as_deref()).map_err(|why| ("/binding_mode".to_string(), why))?;
    let Some(to) = op.to.clone() else {
        return Err((
            String::new(),
            format!("a `{verb}` operation needs `to`: the endpoint that handles it"),
        ));
    };
    let step =
        StepDefinition::from_item(json!({ "to": to })).map_err(|why| ("/to".to_string(), why))?;
    let validate = op
        .client_request_validation
        .or(rest.client_request_validation)
        .or(config.client_request_validation)
        .unwrap_or(false);
    let consumes = op.consumes.as_deref().or(rest.consumes.as_deref());
    let produces = op.produces.as_deref().or(rest.produces.as_deref());
    let mut steps = Vec::new();
    if validate {
        steps.push(validation::step(op, consumes, produces));
    }
    steps.push(step);
    let path = join_paths(&[
        context_path,
        rest.path.as_deref().unwrap_or(""),
        op.path.as_deref().unwrap_or(""),
    ]);
    let mut from = EndpointDefinition::new(format!("platform-http:{path}"))
        .parameter("http_method_restrict", verb.to_ascii_uppercase());
    let mode = op
        .binding_mode
        .as_deref()
        .or(rest.binding_mode.as_deref())
        .or(config.binding_mode.as_deref());
    if let Some(mode) = mode {
        from = from.parameter("binding_mode", mode);
    }
    if let Some(c) = consumes {
        from = from.parameter("consumes", c);
    }
    if let Some(p) = produces {
        from = from.parameter("produces", p);
    }
    Ok(RouteDefinition {
        id: op.route_id.clone().or_else(|| op.id.clone()),
        description: op.description.clone(),
        from,
        steps,
        auto_startup: true,
        ..Default::default()
    })
}

/// The route serving the OpenAPI document of `rests`.
fn document_route(config: &RestConfiguration, rests: &[RestDefinition]) -> RouteDefinition {
    let path = join_paths(&[
        config.context_path.as_deref().unwrap_or(""),
        config
            .api_context_path
            .as_deref()
            .unwrap_or("/openapi.json"),
    ]);
    let doc = openapi::document(config, rests);
    RouteDefinition {
        id: config.api_context_route_id.clone(),
        description: Some("the OpenAPI document of the REST DSL's operations".into()),
        from: EndpointDefinition::new(format!("platform-http:{path}"))
            .parameter("http_method_restrict", "GET")
            .parameter("produces", "application/json"),
        steps: vec![StepDefinition::new(
            "set_body",
            json!({ "constant": doc.to_string() }),
        )],
        auto_startup: true,
        ..Default::default()
    }
}

/// Joins path pieces with single slashes: always a leading `/`, never a trailing one.
pub fn join_paths(parts: &[&str]) -> String {
    let mut out = String::new();
    for segment in parts
        .iter()
        .flat_map(|p| p.split('/'))
        .filter(|s| !s.is_empty())
    {
        out.push('/');
        out.push_str(segment);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decoded as the loader does, so Camel's camelCase keys are read too.
    fn rest(doc: Json) -> RestDefinition {
        crate::compiler::decode::decode(&doc).unwrap()
    }

    #[test]
    fn paths_join_with_single_slashes() {
        assert_eq!(
            join_paths(&["/api/", "orders", "/{id}"]),
            "/api/orders/{id}"
        );
        assert_eq!(join_paths(&["", "", ""]), "/");
        assert_eq!(join_paths(&["api", ""]), "/api");
    }

    #[test]
    fn operations_become_platform_http_routes() {
        let config = RestConfiguration {
            context_path: Some("/api".into()),
            binding_mode: Some("json".into()),
            ..Default::default()
        };
        let r = rest(json!({
            "path": "/orders",
            "produces": "application/json",
            "post": [{"to": "direct:create", "routeId": "create-order"}],
            "get": [
                {"path": "/{id}", "to": {"uri": "direct:get"}, "bindingMode": "off"},
                {"path": "/old", "to": "direct:old", "disabled": true}
            ]
        }));
        let routes = routes(&config, &[r]).unwrap();
        assert_eq!(routes.len(), 3);
        let get = &routes[0];
        assert_eq!(get.from.uri, "platform-http:/api/orders/{id}");
        assert_eq!(get.from.parameters["http_method_restrict"], "GET");
        assert_eq!(get.from.parameters["binding_mode"], "off");
        assert_eq!(get.from.parameters["produces"], "application/json");
        assert_eq!(get.steps[0].name, "to");
        let post = &routes[1];
        assert_eq!(post.id.as_deref(), Some("create-order"));
        assert_eq!(post.from.parameters["binding_mode"], "json");
        assert_eq!(routes[2].from.uri, "platform-http:/api/openapi.json");
    }

    #[test]
    fn mistakes_are_located() {
        let config = RestConfiguration {
            component: Some("servlet".into()),
            ..Default::default()
        };
        let r = rest(json!({
            "bindingMode": "xml",
            "get": [{"path": "/a"}],
            "put": [{"path": "/b", "to": "direct:b", "bindingMode": "auto"}]
        }));
        let errors = routes(&config, &[r]).unwrap_err();
        let at: Vec<(bool, &str)> = errors
            .iter()
            .map(|e| (e.in_configuration, e.pointer.as_str()))
            .collect();
        assert_eq!(
            at,
            [
                (true, "/component"),
                (false, "/binding_mode"),
                (false, "/get/0"),
                (false, "/put/0/binding_mode")
            ]
        );
        assert!(errors[2].message.contains("needs `to`"));
    }
}
