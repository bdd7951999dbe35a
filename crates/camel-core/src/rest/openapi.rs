//! The OpenAPI 3.0 document of the REST DSL's operations.
//!
//! Built once, when the routes are read, from what the `rest:` items declare: every
//! enabled operation with `api_docs` not `false`, its parameters (a `{name}` of the path
//! that no `param` declares is added as a required string), its request body (a `body`
//! parameter, or `consumes`/`type` on a method that takes one) and its responses
//! (`response_message`, else `200`).

use serde_json::{json, Map, Value as Json};

use super::{join_paths, ParamDefinition, RestConfiguration, RestDefinition, VerbDefinition};

/// The OpenAPI version the document declares.
pub const OPENAPI_VERSION: &str = "3.0.3";

/// The document of `rests` under `config`. Paths are relative to the context path, which
/// is the document's server URL (as Camel writes it).
pub fn document(config: &RestConfiguration, rests: &[RestDefinition]) -> Json {
    let prop = |key: &str| {
        config
            .api_property
            .iter()
            .find(|p| p.key == key)
            .map(|p| p.value.clone())
    };
    let mut info = Map::new();
    info.insert(
        "title".into(),
        prop("api.title")
            .unwrap_or_else(|| "camel-rs REST API".into())
            .into(),
    );
    info.insert(
        "version".into(),
        prop("api.version").unwrap_or_else(|| "1.0.0".into()).into(),
    );
    if let Some(d) = prop("api.description") {
        info.insert("description".into(), d.into());
    }
    let contact: Map<String, Json> = [("name", "api.contact.name"), ("email", "api.contact.email")]
        .into_iter()
        .filter_map(|(k, p)| prop(p).map(|v| (k.to_string(), Json::from(v))))
        .collect();
    if !contact.is_empty() {
        info.insert("contact".into(), contact.into());
    }
    if let Some(name) = prop("api.license.name") {
        info.insert("license".into(), json!({ "name": name }));
    }

    let mut paths = Map::new();
    let mut tags = Vec::new();
    for rest in rests
        .iter()
        .filter(|r| r.disabled != Some(true) && r.api_docs != Some(false))
    {
        let tag = rest
            .tag
            .clone()
            .or_else(|| rest.path.clone())
            .unwrap_or_else(|| "default".into());
        let mut tag_doc = json!({ "name": tag });
        if let Some(d) = &rest.description {
            tag_doc["description"] = d.clone().into();
        }
        if !tags.contains(&tag_doc) {
            tags.push(tag_doc);
        }
        for (verb, _, op) in rest.operations() {
            if op.disabled == Some(true) || op.api_docs == Some(false) {
                continue;
            }
            let path = join_paths(&[
                rest.path.as_deref().unwrap_or(""),
                op.path.as_deref().unwrap_or(""),
            ]);
            let item = paths
                .entry(path.clone())
                .or_insert_with(|| Json::Object(Map::new()));
            item[verb] = operation(rest, verb, op, &path, &tag);
        }
    }
    let server = match (
        config.api_host.as_deref().or(config.host.as_deref()),
        &config.port,
    ) {
        (Some(host), port) => {
            let scheme = config.scheme.as_deref().unwrap_or("http");
            let port = match port {
                Some(Json::String(p)) => format!(":{p}"),
                Some(Json::Number(p)) => format!(":{p}"),
                _ => String::new(),
            };
            let base = join_paths(&[config.context_path.as_deref().unwrap_or("")]);
            format!("{scheme}://{host}{port}{}", base.trim_end_matches('/'))
        }
        (None, _) => join_paths(&[config.context_path.as_deref().unwrap_or("")]),
    };
    json!({
        "openapi": OPENAPI_VERSION,
        "info": info,
        "servers": [{ "url": server }],
        "tags": tags,
        "paths": paths,
    })
}

/// One operation object.
fn operation(
    rest: &RestDefinition,
    verb: &str,
    op: &VerbDefinition,
    path: &str,
    tag: &str,
) -> Json {
    let mut doc = Map::new();
    doc.insert("tags".into(), json!([tag]));
    if let Some(id) = op.id.as_ref().or(op.route_id.as_ref()) {
        doc.insert("operationId".into(), id.clone().into());
    }
    if let Some(d) = &op.description {
        doc.insert("summary".into(), d.clone().into());
    }
    if op.deprecated == Some(true) {
        doc.insert("deprecated".into(), true.into());
    }
    let mut params: Vec<Json> = Vec::new();
    let mut body: Option<&ParamDefinition> = None;
    for p in &op.param {
        match p.kind.as_deref().unwrap_or("path") {
            "body" => body = Some(p),
            // Form fields are part of the request body in OpenAPI 3; not documented here.
            "formData" | "form_data" => {}
            kind => params.push(parameter(p, kind)),
        }
    }
    for name in path_names(path) {
        let declared = op
            .param
            .iter()
            .any(|p| p.name == name && p.kind.as_deref().unwrap_or("path") == "path");
        if !declared {
            params.push(json!({
                "name": name, "in": "path", "required": true, "schema": {"type": "string"}
            }));
        }
    }
    if !params.is_empty() {
        doc.insert("parameters".into(), params.into());
    }
    let consumes = op.consumes.as_deref().or(rest.consumes.as_deref());
    let produces = op.produces.as_deref().or(rest.produces.as_deref());
    let takes_body = matches!(verb, "post" | "put" | "patch");
    if body.is_some() || (takes_body && (consumes.is_some() || op.type_name.is_some())) {
        let mut schema = json!({ "type": "object" });
        if let Some(t) = &op.type_name {
            schema["title"] = t.clone().into();
        }
        let mut request = Map::new();
        if let Some(d) = body.and_then(|b| b.description.clone()) {
            request.insert("description".into(), d.into());
        }
        request.insert(
            "required".into(),
            body.and_then(|b| b.required).unwrap_or(true).into(),
        );
        request.insert("content".into(), media(consumes, &schema));
        doc.insert("requestBody".into(), request.into());
    }
    let mut responses = Map::new();
    let mut out_schema = json!({ "type": "object" });
    if let Some(t) = &op.out_type {
        out_schema["title"] = t.clone().into();
    }
    for r in &op.response_message {
        let code = match &r.code {
            Some(Json::String(c)) => c.clone(),
            Some(Json::Number(c)) => c.to_string(),
            _ => "200".into(),
        };
        let mut resp = json!({
            "description": r.message.clone().unwrap_or_else(|| reason(&code).into()),
        });
        if let Some(model) = &r.response_model {
            resp["content"] = media(produces, &json!({"type": "object", "title": model}));
        }
        responses.insert(code, resp);
    }
    if responses.is_empty() {
        let mut ok = json!({ "description": "OK" });
        if produces.is_some() || op.out_type.is_some() {
            ok["content"] = media(produces, &out_schema);
        }
        responses.insert("200".into(), ok);
    }
    doc.insert("responses".into(), responses.into());
    doc.into()
}

/// A `parameters` entry.
fn parameter(p: &ParamDefinition, kind: &str) -> Json {
    let location = match kind {
        "query" | "header" | "cookie" => kind,
        _ => "path",
    };
    let mut schema = schema_of(p.data_type.as_deref(), p.data_format.as_deref());
    if schema["type"] == "array" {
        schema["items"] = schema_of(p.array_type.as_deref(), None);
    }
    if let Some(d) = &p.default_value {
        schema["default"] = d.clone();
    }
    if !p.allowable_values.is_empty() {
        let values: Vec<Json> = p
            .allowable_values
            .iter()
            .map(|v| v.get("value").cloned().unwrap_or_else(|| v.clone()))
            .collect();
        schema["enum"] = values.into();
    }
    let mut doc = json!({
        "name": p.name,
        "in": location,
        // OpenAPI requires path parameters to be required.
        "required": location == "path" || p.required == Some(true),
        "schema": schema,
    });
    if let Some(d) = &p.description {
        doc["description"] = d.clone().into();
    }
    doc
}

/// A schema for Camel's `dataType` names.
fn schema_of(data_type: Option<&str>, format: Option<&str>) -> Json {
    let (kind, implied) = match data_type.unwrap_or("string") {
        "integer" | "int" => ("integer", Some("int32")),
        "long" => ("integer", Some("int64")),
        "number" => ("number", None),
        "double" => ("number", Some("double")),
        "float" => ("number", Some("float")),
        "boolean" => ("boolean", None),
        "array" => ("array", None),
        "object" => ("object", None),
        "date" => ("string", Some("date")),
        "dateTime" | "date-time" | "date_time" => ("string", Some("date-time")),
        _ => ("string", None),
    };
    let mut schema = json!({ "type": kind });
    if let Some(f) = format.or(implied) {
        schema["format"] = f.into();
    }
    schema
}

/// A `content` map: one entry per listed media type (JSON when none is listed).
fn media(types: Option<&str>, schema: &Json) -> Json {
    let listed: Vec<&str> = types
        .unwrap_or("application/json")
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    listed
        .into_iter()
        .map(|t| (t.to_string(), json!({ "schema": schema })))
        .collect::<Map<String, Json>>()
        .into()
}

/// The `{name}`s of a path template.
fn path_names(path: &str) -> Vec<&str> {
    path.split('/')
        .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .collect()
}

fn reason(code: &str) -> &'static str {
    match code {
        "200" => "OK",
        "201" => "Created",
        "202" => "Accepted",
        "204" => "No Content",
        "400" => "Bad Request",
        "401" => "Unauthorized",
        "403" => "Forbidden",
        "404" => "Not Found",
        "409" => "Conflict",
        "422" => "Unprocessable Content",
        "500" => "Internal Server Error",
        _ => "Response",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_parameters_bodies_and_responses() {
        let config: RestConfiguration = crate::compiler::decode::decode(&json!({
            "contextPath": "/api",
            "apiProperty": [{"key": "api.title", "value": "Orders"}, {"key": "api.version", "value": "2.1"}]
        }))
        .unwrap();
        let rest: RestDefinition = crate::compiler::decode::decode(&json!({
            "path": "/orders",
            "consumes": "application/json",
            "produces": "application/json",
            "post": [{"id": "createOrder", "type": "Order", "to": "direct:c",
                      "responseMessage": [{"code": 201, "message": "created"}, {"code": "400"}]}],
            "get": [
                {"path": "/{id}", "to": "direct:g", "description": "one order",
                 "param": [{"name": "id", "type": "path", "dataType": "long"},
                           {"name": "fields", "type": "query", "dataType": "array", "arrayType": "string"}]},
                {"path": "/{id}/lines/{line}", "to": "direct:l", "apiDocs": true},
                {"path": "/hidden", "to": "direct:h", "apiDocs": false}
            ]
        }))
        .unwrap();
        let doc = document(&config, &[rest]);
        assert_eq!(doc["openapi"], "3.0.3");
        assert_eq!(doc["info"]["title"], "Orders");
        assert_eq!(doc["info"]["version"], "2.1");
        assert_eq!(doc["servers"][0]["url"], "/api");
        let paths = doc["paths"].as_object().unwrap();
        let mut keys: Vec<&str> = paths.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["/orders", "/orders/{id}", "/orders/{id}/lines/{line}"]
        );
        let post = &doc["paths"]["/orders"]["post"];
        assert_eq!(post["operationId"], "createOrder");
        assert_eq!(
            post["requestBody"]["content"]["application/json"]["schema"]["title"],
            "Order"
        );
        assert_eq!(post["responses"]["201"]["description"], "created");
        assert_eq!(post["responses"]["400"]["description"], "Bad Request");
        let get = &doc["paths"]["/orders/{id}"]["get"];
        assert_eq!(get["summary"], "one order");
        assert_eq!(get["parameters"][0]["schema"]["format"], "int64");
        assert_eq!(get["parameters"][0]["required"], true);
        assert_eq!(get["parameters"][1]["in"], "query");
        assert_eq!(get["parameters"][1]["schema"]["items"]["type"], "string");
        assert!(get.get("requestBody").is_none());
        let lines = &doc["paths"]["/orders/{id}/lines/{line}"]["get"]["parameters"];
        let names: Vec<&str> = lines
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["id", "line"],
            "undeclared path parameters are added"
        );
    }
}
