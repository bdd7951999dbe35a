//! `resequence`: only valid as a top-level step, where it becomes the route's continuation
//! boundary (see `compiler::route`).

use camel_api::BoxProcessor;
use serde_json::Value as Json;

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

/// Reached only for a nested `resequence` (inside filter, choice, …): rule N4.
pub(super) fn nested(_config: &Json, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    Err(cx.error(RouteErrorKind::Rejected {
        rule: "N4",
        message: "resequence must be a top-level step of the route, not nested inside another step"
            .into(),
    }))
}

/// Builds the resequencer for a top-level `resequence` with its continuation.
pub(crate) fn compile_top_level(
    _config: &Json,
    _continuation: BoxProcessor,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    Err(cx.error(RouteErrorKind::Rejected {
        rule: "resequence",
        message: "the resequencer runtime is not wired in yet".into(),
    }))
}
