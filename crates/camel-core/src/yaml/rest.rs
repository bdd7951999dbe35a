//! The `- rest:` and `- restConfiguration:` items: read here, expanded by
//! [`crate::rest`] into `platform-http:` routes once the whole list is read (a
//! `restConfiguration` written after the `rest` items still applies to them).

use serde_json::Value as Json;

use super::loader::{Read, Reader};
use crate::compiler::decode::decode;
use crate::error::{RouteError, RouteErrorKind};
use crate::model::RouteDefinition;
use crate::rest::{RestConfiguration, RestDefinition};

/// The REST items of one route list, with their pointers.
#[derive(Debug, Default)]
pub(crate) struct RestItems {
    configuration: Option<(RestConfiguration, String)>,
    rests: Vec<(RestDefinition, String)>,
}

impl Reader {
    /// A `- rest:` item, kept until the list is read.
    pub(super) fn rest(&self, body: Json, pointer: &str) -> Result<(), RouteError> {
        let mut rest: RestDefinition =
            decode(&body).map_err(|(at, kind)| self.error(kind, &format!("{pointer}{at}")))?;
        if let Some(api) = rest.open_api.as_mut().filter(|a| a.disabled != Some(true)) {
            let at = format!("{pointer}/open_api/specification");
            api.document = Some(
                self.contract(api.file_name())
                    .map_err(|why| self.error(RouteErrorKind::InvalidValue(why), &at))?,
            );
        }
        self.rest_items
            .borrow_mut()
            .rests
            .push((rest, pointer.to_string()));
        Ok(())
    }

    /// The OpenAPI document `name` of a contract-first `rest`: beside the route file, or
    /// as given (from the working folder). JSON or YAML.
    fn contract(&self, name: &str) -> Result<Json, String> {
        if name.is_empty() {
            return Err("`specification` names the OpenAPI document".into());
        }
        let file = self.source_map("", "").file;
        let given = std::path::Path::new(name);
        let beside = std::path::Path::new(&*file)
            .parent()
            .map(|dir| dir.join(given))
            .filter(|p| given.is_relative() && p.is_file());
        let path = beside.unwrap_or_else(|| given.to_path_buf());
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read the OpenAPI document `{}`: {e}", path.display()))?;
        let mut docs = super::parse_values(&text).map_err(|(why, line, column)| {
            format!(
                "the OpenAPI document `{}`:{line}:{column}: {why}",
                path.display()
            )
        })?;
        if docs.len() != 1 {
            return Err(format!(
                "the OpenAPI document `{}` holds {} documents, not one",
                path.display(),
                docs.len()
            ));
        }
        let doc = docs.remove(0);
        match doc.get("openapi").and_then(Json::as_str) {
            Some(v) if v.starts_with('3') => Ok(doc),
            _ => Err(format!(
                "`{}` is not an OpenAPI 3 document (no `openapi: 3.x`)",
                path.display()
            )),
        }
    }

    /// A `- restConfiguration:` item: one per list.
    pub(super) fn rest_configuration(&self, body: Json, pointer: &str) -> Result<(), RouteError> {
        let config: RestConfiguration =
            decode(&body).map_err(|(at, kind)| self.error(kind, &format!("{pointer}{at}")))?;
        let mut items = self.rest_items.borrow_mut();
        if items.configuration.is_some() {
            return Err(self.error(
                RouteErrorKind::InvalidValue(
                    "a second `restConfiguration`: a file has at most one".into(),
                ),
                pointer,
            ));
        }
        items.configuration = Some((config, pointer.to_string()));
        Ok(())
    }

    /// The routes of the list's REST items, each located at its operation.
    pub(super) fn rest_routes(&self) -> Read<Vec<RouteDefinition>> {
        let RestItems {
            configuration,
            rests,
        } = std::mem::take(&mut *self.rest_items.borrow_mut());
        if rests.is_empty() {
            return Ok(Vec::new());
        }
        let (config, config_pointer) = configuration.unwrap_or_default();
        let definitions: Vec<RestDefinition> = rests.iter().map(|(r, _)| r.clone()).collect();
        match crate::rest::routes_at(&config, &definitions) {
            Ok(routes) => Ok(routes
                .into_iter()
                .map(|(mut route, at)| {
                    let pointer = match at {
                        Some((r, op)) => format!("{}{op}", rests[r].1),
                        None if !config_pointer.is_empty() => config_pointer.clone(),
                        None => rests[0].1.clone(),
                    };
                    route.source = Some(self.source_map(&pointer, &pointer));
                    route
                })
                .collect()),
            Err(errors) => Err(errors
                .into_iter()
                .map(|e| {
                    let base = if e.in_configuration {
                        &config_pointer
                    } else {
                        &rests[e.rest].1
                    };
                    self.error(
                        RouteErrorKind::InvalidValue(e.message),
                        &format!("{base}{}", e.pointer),
                    )
                })
                .collect()),
        }
    }
}
