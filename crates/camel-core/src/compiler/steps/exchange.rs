//! `validate`, `set_exchange_pattern`, `step` and `convert_header_to`.

use camel_api::definition::WithExpression;
use camel_api::BoxProcessor;
use camel_eip::config::{ConvertHeaderTo, SetExchangePattern, Step, Validate};
use camel_eip::exchange::{self as eip, Charset, ConvertHeader, HeaderType};

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

/// `validate: {simple: "…"}`: a failed predicate is a `PredicateValidationException`.
pub(super) fn validate(
    config: Validate,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let predicate = cx.predicate_in(&config, "")?;
    let text = config
        .expression()
        .map(|(_, e)| format!("{}: {}", e.language, e.text))
        .unwrap_or_default();
    Ok(camel_eip::validate::validate(predicate, &text))
}

pub(super) fn set_exchange_pattern(
    config: SetExchangePattern,
    _cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    Ok(eip::set_exchange_pattern(config.pattern.into()))
}

/// `step: {id, steps}`: the steps as one pipeline; the id names it in paths and spans.
pub(super) fn step(config: Step, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    cx.compile_steps(&config.steps, "/steps")
}

pub(super) fn convert_header_to(
    config: ConvertHeaderTo,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    if config.name.is_empty() {
        return Err(cx.error_at(
            "/name",
            RouteErrorKind::InvalidValue("`name` must not be empty".into()),
        ));
    }
    let to = HeaderType::parse(&config.to).ok_or_else(|| {
        cx.error_at(
            "/type",
            RouteErrorKind::InvalidValue(format!(
                "cannot convert a header to `{}` (use String, Integer, Long, Double, Float, Boolean or byte[])",
                config.to
            )),
        )
    })?;
    let charset = match &config.charset {
        None => Charset::default(),
        Some(c) => Charset::parse(c).ok_or_else(|| {
            cx.error_at(
                "/charset",
                RouteErrorKind::InvalidValue(format!(
                    "camel-rs does not support the charset `{c}` yet (UTF-8, US-ASCII or ISO-8859-1)"
                )),
            )
        })?,
    };
    Ok(eip::convert_header_to(ConvertHeader {
        name: config.name,
        to_name: config.to_name,
        to,
        mandatory: config.mandatory.unwrap_or(true),
        charset,
    }))
}
