//! Contract-first REST (Camel 4.6's `rest: {openApi: {specification: …}}`): every
//! operation of an OpenAPI 3 document becomes a route on its method and path that sends
//! the request to `direct:{operationId}`, where the user's own route implements it.
//!
//! ```yaml
//! - rest:
//!     openApi:
//!       specification: petstore.json     # beside the route file, JSON or YAML
//! - route:
//!     from: {uri: direct:getPetById, steps: [...]}
//! ```
//!
//! The document is read when the route file is (the YAML reader puts it in
//! [`OpenApiDefinition::document`]); its `consumes`/`produces` come from each operation's
//! request body and first response media types.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};

use super::{VerbDefinition, VERBS};

/// `open_api: {specification, missing_operation, …}` of a `rest` item.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct OpenApiDefinition {
    /// The OpenAPI 3 document: a file name, relative to the route file's folder (a
    /// `classpath:` or `file:` prefix is dropped).
    pub specification: String,
    /// Camel's id of the contract's route group: accepted, not used (each operation's
    /// route is named by its operationId).
    pub route_id: Option<String>,
    /// What to do about an operation no route implements: `fail` (Camel's default) or
    /// `ignore`; both leave a missing `direct:` to fail the request here. `mock` is not
    /// supported.
    pub missing_operation: Option<String>,
    /// Camel's mock files: not supported.
    pub mock_include_pattern: Option<String>,
    /// A disabled contract makes no routes.
    pub disabled: Option<bool>,
    /// The document, read with the route file.
    #[serde(skip)]
    pub document: Option<Json>,
}

impl OpenApiDefinition {
    /// The document's file name as written, without Camel's resource prefix.
    pub fn file_name(&self) -> &str {
        let s = self.specification.trim();
        s.strip_prefix("classpath:")
            .or_else(|| s.strip_prefix("file:"))
            .unwrap_or(s)
    }

    /// The operations of the document, each as the verb it is and the operation it
    /// makes, in the document's order.
    pub fn operations(&self) -> Result<Vec<(&'static str, VerbDefinition)>, String> {
        match self.missing_operation.as_deref() {
            None | Some("fail" | "ignore") => {}
            Some("mock") => {
                return Err(
                    "`missingOperation: mock` is a Camel option camel-rs does not support yet"
                        .into(),
                )
            }
            Some(other) => {
                return Err(format!(
                    "`missingOperation` is `fail`, `ignore` or `mock`, not `{other}`"
                ))
            }
        }
        let Some(doc) = &self.document else {
            return Err(format!(
                "the OpenAPI document `{}` was not read",
                self.specification
            ));
        };
        let Some(paths) = doc.get("paths").and_then(Json::as_object) else {
            return Err(format!("`{}` has no `paths`", self.specification));
        };
        let mut out = Vec::new();
        for (path, item) in paths {
            let Some(item) = item.as_object() else {
                continue;
            };
            for &verb in VERBS {
                let Some(op) = item.get(verb) else { continue };
                let Some(id) = op.get("operationId").and_then(Json::as_str) else {
                    return Err(format!(
                        "`{verb} {path}` of `{}` has no operationId: it names the \
                         `direct:` endpoint the request goes to",
                        self.specification
                    ));
                };
                out.push((
                    verb,
                    VerbDefinition {
                        id: Some(id.to_string()),
                        path: Some(path.clone()),
                        to: Some(json!(format!("direct:{id}"))),
                        consumes: media_types(op.pointer("/requestBody/content")),
                        produces: op
                            .get("responses")
                            .and_then(Json::as_object)
                            .and_then(|r| r.values().find_map(|v| media_types(v.get("content")))),
                        description: op.get("summary").and_then(Json::as_str).map(str::to_string),
                        ..Default::default()
                    },
                ));
            }
        }
        Ok(out)
    }
}

/// The media types of a `content` map, comma-separated.
fn media_types(content: Option<&Json>) -> Option<String> {
    let map = content?.as_object()?;
    (!map.is_empty()).then(|| map.keys().cloned().collect::<Vec<_>>().join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_operation_goes_to_its_direct_endpoint() {
        let api = OpenApiDefinition {
            specification: "pets.json".into(),
            document: Some(json!({
                "openapi": "3.0.0",
                "paths": {
                    "/pets/{id}": {
                        "get": {"operationId": "getPet", "responses": {"200": {"content": {"application/json": {}}}}},
                        "delete": {"operationId": "deletePet"}
                    },
                    "/pets": {"post": {"operationId": "addPet", "requestBody": {"content": {"application/json": {}}}}}
                }
            })),
            ..Default::default()
        };
        let ops = api.operations().unwrap();
        let names: Vec<_> = ops
            .iter()
            .map(|(v, o)| (*v, o.path.clone().unwrap(), o.to.clone().unwrap()))
            .collect();
        assert!(names.contains(&("get", "/pets/{id}".into(), json!("direct:getPet"))));
        assert!(names.contains(&("delete", "/pets/{id}".into(), json!("direct:deletePet"))));
        assert!(names.contains(&("post", "/pets".into(), json!("direct:addPet"))));
        let get = ops.iter().find(|(v, _)| *v == "get").unwrap();
        assert_eq!(get.1.produces.as_deref(), Some("application/json"));
        let missing = OpenApiDefinition {
            document: Some(json!({"paths": {"/a": {"get": {}}}})),
            ..Default::default()
        };
        assert!(missing.operations().unwrap_err().contains("no operationId"));
    }
}
