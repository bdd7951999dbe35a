//! Steps that set or remove parts of the message, `log` and `stop`.

use camel_api::BoxProcessor;
use camel_eip::{log as log_eip, message as eip};
use serde_json::Value as Json;

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

fn name_and_expression(
    config: &Json,
    cx: &mut StepContext<'_>,
) -> Result<(String, camel_api::BoxExpression), RouteError> {
    let mut map = cx.object(config)?;
    let name = map.remove("name");
    let expression = cx.take_expression(&mut map)?;
    cx.no_more_keys(
        &map,
        &[
            "name",
            "expression",
            "simple",
            "constant",
            "header",
            "jsonpath",
        ],
    )?;
    let name = match name {
        Some(Json::String(s)) if !s.is_empty() => s,
        Some(_) => {
            return Err(cx.error_at(
                "/name",
                RouteErrorKind::InvalidValue("`name` must be text".into()),
            ))
        }
        None => return Err(cx.error(RouteErrorKind::Missing("name".into()))),
    };
    Ok((name, expression))
}

pub(super) fn set_header(
    config: &Json,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let (name, expression) = name_and_expression(config, cx)?;
    Ok(eip::set_header(&name, expression))
}

pub(super) fn set_property(
    config: &Json,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let (name, expression) = name_and_expression(config, cx)?;
    Ok(eip::set_property(&name, expression))
}

/// `set_body` and `transform`.
pub(super) fn set_body(
    config: &Json,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let mut map = cx.object(config)?;
    let expression = cx.take_expression(&mut map)?;
    cx.no_more_keys(
        &map,
        &["expression", "simple", "constant", "header", "jsonpath"],
    )?;
    Ok(eip::set_body(expression))
}

fn single_name(config: &Json, key: &str, cx: &StepContext<'_>) -> Result<String, RouteError> {
    match config {
        Json::String(s) => Ok(s.clone()),
        _ => {
            let mut map = cx.object(config)?;
            let name = map
                .remove(key)
                .and_then(|v| v.as_str().map(str::to_string))
                .ok_or_else(|| cx.error(RouteErrorKind::Missing(key.into())))?;
            cx.no_more_keys(&map, &[key])?;
            Ok(name)
        }
    }
}

pub(super) fn remove_header(
    config: &Json,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    Ok(eip::remove_header(&single_name(config, "name", cx)?))
}

pub(super) fn remove_headers(
    config: &Json,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    Ok(eip::remove_headers(&single_name(config, "pattern", cx)?))
}

pub(super) fn remove_property(
    config: &Json,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    Ok(eip::remove_property(&single_name(config, "name", cx)?))
}

pub(super) fn stop(config: &Json, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    let map = cx.object(config)?;
    cx.no_more_keys(&map, &[])?;
    Ok(eip::stop())
}

/// `log: "text ${body}"` or `log: {message, logging_level, log_name}`.
pub(super) fn log(config: &Json, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    let (message, level, logger) = match config {
        Json::String(s) => (s.clone(), None, None),
        _ => {
            let mut map = cx.object(config)?;
            let text = |v: Option<Json>| v.and_then(|v| v.as_str().map(str::to_string));
            let message = text(map.remove("message"))
                .ok_or_else(|| cx.error(RouteErrorKind::Missing("message".into())))?;
            let level = text(map.remove("logging_level"));
            let logger = text(map.remove("log_name"));
            cx.no_more_keys(&map, &["message", "logging_level", "log_name"])?;
            (message, level, logger)
        }
    };
    let level = match level {
        None => log_eip::LogLevel::Info,
        Some(l) => log_eip::LogLevel::parse(&l).ok_or_else(|| {
            cx.error_at(
                "/logging_level",
                RouteErrorKind::InvalidValue(format!(
                    "unknown level `{l}` (use TRACE, DEBUG, INFO, WARN or ERROR)"
                )),
            )
        })?,
    };
    let at = if config.is_string() { "" } else { "/message" };
    let expression = cx.expression_text("simple", &message, at)?;
    let logger = logger.unwrap_or_else(|| cx.route_id().to_string());
    Ok(log_eip::log(expression, level, &logger))
}
