//! `resequence`: only valid as a top-level step, where it becomes the route's continuation
//! boundary (see `compiler::route`).

use camel_api::{BoxProcessor, CamelError};
use camel_eip::resequencer::{ResequenceConfig, ResequencerService};
use serde_json::Value as Json;

use crate::compiler::{StepCompiler, StepContext};
use crate::error::{RouteError, RouteErrorKind};

/// Reached only for a nested `resequence` (inside filter, choice, …): rule N4. A
/// top-level one is compiled by the route compiler as the continuation boundary.
#[derive(Debug)]
pub(super) struct Nested;

impl StepCompiler for Nested {
    fn compile(
        &self,
        _config: &Json,
        cx: &mut StepContext<'_>,
    ) -> Result<BoxProcessor, RouteError> {
        Err(cx.error(RouteErrorKind::Rejected {
            rule: "N4",
            message:
                "resequence must be a top-level step of the route, not nested inside another step"
                    .into(),
        }))
    }
}

/// Builds the resequencer for a top-level `resequence` with its continuation; its
/// lifecycle joins the route's, under the stable name `resequence` (one per route, N3) so
/// a hot swap hands its state to the replacement.
pub(crate) fn compile_top_level(
    config: &Json,
    continuation: BoxProcessor,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let config: ResequenceConfig = cx.decode(&camel_spelling(config))?;
    let dead_letter = match &config.dead_letter_uri {
        None => None,
        Some(uri) => Some(cx.producer(uri, "/dead_letter_uri")?),
    };
    let built = ResequencerService::build(
        &config,
        cx.route_id(),
        "resequence",
        continuation,
        dead_letter,
    )
    .map_err(|e| match e {
        CamelError::Expression(x) => cx.error(RouteErrorKind::Expression(x)),
        other => cx.error(RouteErrorKind::InvalidValue(other.to_string())),
    })?;
    cx.add_lifecycle(built.lifecycle);
    Ok(built.processor)
}

/// Camel writes the expression beside the mode options
/// (`{simple: "${header.seq}", stream_config: {...}}`); ours puts it inside the mode
/// (`{stream: {sequence: ...}}`). Moves a top-level expression into the mode config (batch
/// when no mode is named, as in Camel).
fn camel_spelling(config: &Json) -> Json {
    let Json::Object(map) = config else {
        return config.clone();
    };
    let mut map = map.clone();
    let text = match map.remove("simple") {
        Some(Json::String(s)) => Some(s),
        Some(other) => {
            map.insert("simple".into(), other);
            None
        }
        None => match map
            .get("expression")
            .and_then(|e| e.get("simple"))
            .and_then(Json::as_str)
        {
            Some(s) => {
                let s = s.to_string();
                map.remove("expression");
                Some(s)
            }
            None => None,
        },
    };
    let Some(text) = text else {
        return Json::Object(map);
    };
    // The mode key as written (Camel's `streamConfig`, ours `stream`, …); batch when none.
    let written = |keys: [&'static str; 3]| keys.into_iter().find(|k| map.contains_key(*k));
    let (key, field) = match written(["stream", "stream_config", "streamConfig"]) {
        Some(k) => (k, "sequence"),
        None => (
            written(["batch", "batch_config", "batchConfig"]).unwrap_or("batch"),
            "sort",
        ),
    };
    let entry = map
        .entry(key.to_string())
        .or_insert_with(|| Json::Object(Default::default()));
    if let Json::Object(mode) = entry {
        mode.entry(field.to_string()).or_insert(Json::String(text));
    }
    Json::Object(map)
}
