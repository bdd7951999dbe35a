//! Steps that set or remove parts of the message, `log` and `stop`.

use camel_api::BoxProcessor;
use camel_eip::config::{
    Log, RemoveHeader, RemoveHeaders, RemoveProperty, SetBody, SetHeader, SetHeaders, SetProperty,
    Stop,
};
use camel_eip::{log as log_eip, message as eip};

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

fn name_of<'a>(name: &'a str, cx: &StepContext<'_>) -> Result<&'a str, RouteError> {
    name_at(name, "/name", cx)
}

fn name_at<'a>(name: &'a str, at: &str, cx: &StepContext<'_>) -> Result<&'a str, RouteError> {
    if name.is_empty() {
        return Err(cx.error_at(
            at,
            RouteErrorKind::InvalidValue("`name` must not be empty".into()),
        ));
    }
    Ok(name)
}

pub(super) fn set_header(
    config: SetHeader,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let expression = cx.expression_in(&config, "")?;
    Ok(eip::set_header(name_of(&config.name, cx)?, expression))
}

/// `set_headers: {headers: [{name, simple: …}, …]}` (Camel 4).
pub(super) fn set_headers(
    config: SetHeaders,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let mut headers = Vec::with_capacity(config.headers.len());
    for (i, item) in config.headers.iter().enumerate() {
        let at = format!("/headers/{i}");
        let expression = cx.expression_in(item, &at)?;
        let name = name_at(&item.name, &format!("{at}/name"), cx)?;
        headers.push((name.to_string(), expression));
    }
    Ok(eip::set_headers(headers))
}

pub(super) fn set_property(
    config: SetProperty,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let expression = cx.expression_in(&config, "")?;
    Ok(eip::set_property(name_of(&config.name, cx)?, expression))
}

/// `set_body` and `transform`.
pub(super) fn set_body(
    config: SetBody,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    Ok(eip::set_body(cx.expression_in(&config, "")?))
}

/// `transform`: an expression, as `set_body`. Camel's data type transformers (`toType`,
/// `fromType`: `http:application-cloudevents`, `aws2-ddb:application-json` …) are Java
/// classes of its components: refused by name rather than as unknown keys.
pub(super) struct Transform;

impl crate::compiler::StepCompiler for Transform {
    fn compile(
        &self,
        config: &serde_json::Value,
        cx: &mut StepContext<'_>,
    ) -> Result<BoxProcessor, RouteError> {
        if let Some(map) = config.as_object() {
            for key in ["toType", "to_type", "fromType", "from_type"] {
                if let Some(value) = map.get(key) {
                    return Err(cx.error_at(
                        &format!("/{key}"),
                        RouteErrorKind::InvalidValue(format!(
                            "`{key}: {}` names a Camel data type transformer, which camel-rs \
                             does not support yet: convert the body with `marshal`, \
                             `unmarshal` or `setBody`",
                            value.as_str().unwrap_or("…")
                        )),
                    ));
                }
            }
        }
        set_body(cx.config(config)?, cx)
    }
}

pub(super) fn remove_header(
    config: RemoveHeader,
    _cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    Ok(eip::remove_header(&config.name))
}

pub(super) fn remove_headers(
    config: RemoveHeaders,
    _cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    Ok(eip::remove_headers(&config.pattern))
}

pub(super) fn remove_property(
    config: RemoveProperty,
    _cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    Ok(eip::remove_property(&config.name))
}

pub(super) fn stop(_config: Stop, _cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    Ok(eip::stop())
}

/// `log: "text ${body}"` or `log: {message, logging_level, log_name, marker, log_language}`.
pub(super) fn log(config: Log, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    if config.logger.is_some() {
        return Err(cx.error_at(
            "/logger",
            RouteErrorKind::InvalidValue(
                "`logger` refers to a Java logger bean, which cannot run here; name the logger with `log_name`".into(),
            ),
        ));
    }
    let level = match &config.logging_level {
        None => log_eip::LogLevel::Info,
        Some(l) => log_eip::LogLevel::parse(l).ok_or_else(|| {
            cx.error_at(
                "/logging_level",
                RouteErrorKind::InvalidValue(format!(
                    "unknown level `{l}` (use TRACE, DEBUG, INFO, WARN or ERROR)"
                )),
            )
        })?,
    };
    // A scalar `log: text` has no `/message` node; the locator falls back to the step.
    let language = config.log_language.as_deref().unwrap_or("simple");
    let expression = cx.expression_text(language, &config.message, "/message")?;
    let logger = config
        .log_name
        .clone()
        .unwrap_or_else(|| cx.route_id().to_string());
    Ok(log_eip::log_marked(
        expression,
        level,
        &logger,
        config.marker.as_deref(),
    ))
}
