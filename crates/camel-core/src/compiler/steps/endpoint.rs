//! `to` and `process`.

use camel_api::BoxProcessor;
use serde_json::Value as Json;

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};
use crate::model::EndpointDefinition;

/// `to: "uri"` or `to: {uri, parameters}`.
pub(super) fn to(config: &Json, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    let def: EndpointDefinition = match config {
        Json::String(uri) => EndpointDefinition::new(uri.clone()),
        _ => cx.decode(config)?,
    };
    let at = if config.is_string() { "" } else { "/uri" };
    let endpoint = cx.endpoint(&def, at)?;
    endpoint
        .producer()
        .map_err(|e| cx.error_at(at, RouteErrorKind::Endpoint(e)))
}

/// `process: {ref: name}` or `process: name`: a Rust processor registered by name.
pub(super) fn process(config: &Json, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    let name = match config {
        Json::String(s) => s.clone(),
        Json::Object(m) => {
            let mut m = m.clone();
            let name = m
                .remove("ref")
                .and_then(|v| v.as_str().map(str::to_string))
                .ok_or_else(|| cx.error(RouteErrorKind::Missing("ref".into())))?;
            cx.no_more_keys(&m, &["ref"])?;
            name
        }
        _ => {
            return Err(cx.error(RouteErrorKind::InvalidValue(
                "`process` takes a processor name or `{ref: name}`".into(),
            )))
        }
    };
    cx.processor(&name).ok_or_else(|| {
        cx.error(RouteErrorKind::InvalidValue(format!(
            "no processor is registered under `{name}`"
        )))
    })
}
