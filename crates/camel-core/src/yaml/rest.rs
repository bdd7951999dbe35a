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
        let rest: RestDefinition =
            decode(&body).map_err(|(at, kind)| self.error(kind, &format!("{pointer}{at}")))?;
        self.rest_items
            .borrow_mut()
            .rests
            .push((rest, pointer.to_string()));
        Ok(())
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
