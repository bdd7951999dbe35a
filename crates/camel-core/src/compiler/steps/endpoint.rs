//! `to` and `process`.

use camel_api::BoxProcessor;

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};
use crate::model::{EndpointDefinition, Process};

/// `to: "uri"` or `to: {uri, parameters, pattern}`.
pub(super) fn to(
    config: EndpointDefinition,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    // A scalar `to: uri` has no `/uri` node; the locator falls back to the step.
    let at = "/uri";
    let endpoint = cx.endpoint(&config, at)?;
    let producer = endpoint
        .producer()
        .map_err(|e| cx.error_at(at, RouteErrorKind::Endpoint(e)))?;
    Ok(match config.pattern {
        Some(p) => camel_eip::exchange::send_with_pattern(producer, p.into()),
        None => producer,
    })
}

/// `process: {ref: name}` or `process: name`: a Rust processor registered by name.
pub(super) fn process(
    config: Process,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    cx.processor(&config.reference).ok_or_else(|| {
        cx.error(RouteErrorKind::InvalidValue(format!(
            "no processor is registered under `{}`",
            config.reference
        )))
    })
}
