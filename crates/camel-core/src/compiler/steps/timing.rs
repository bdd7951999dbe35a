//! `throttle`, `delay` and `sample`.
//!
//! ```yaml
//! - throttle: {constant: 100, time_period_millis: 1000, correlation_expression: {header: tenant}}
//! - delay: {simple: "${header.wait}"}
//! - sample: {sample_period: 5s}        # or {message_frequency: 10}
//! ```

use std::time::Duration;

use camel_api::BoxProcessor;
use camel_eip::config::{Delay as DelayStep, Sample as SampleStep, Throttle as ThrottleStep};
use camel_eip::delay::Delay;
use camel_eip::sample::{Sample, Sampling};
use camel_eip::throttle::{Throttle, ThrottleOptions};

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

pub(super) fn throttle(
    config: ThrottleStep,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    if let Some(mode) = &config.mode {
        if !mode.eq_ignore_ascii_case("TotalRequests") {
            return Err(cx.error_at(
                "/mode",
                RouteErrorKind::InvalidValue(format!(
                    "throttle mode `{mode}` is not supported; only `TotalRequests` (limit concurrency with a tower `ConcurrencyLimitLayer` in a `layer` step)"
                )),
            ));
        }
    }
    let maximum = cx.expression_in(&config, "")?;
    let period = config.time_period_millis.unwrap_or(1000);
    if period == 0 {
        return Err(cx.error_at(
            "/time_period_millis",
            RouteErrorKind::InvalidValue("`time_period_millis` must be at least 1".into()),
        ));
    }
    let correlation = match &config.correlation_expression {
        Some(e) => Some(cx.expression(e, "/correlation_expression")?),
        None => None,
    };
    let options = ThrottleOptions {
        maximum,
        period: Duration::from_millis(period),
        correlation,
        reject: config.reject_execution,
    };
    Ok(Throttle::new(options, BoxProcessor::identity()).into_processor())
}

pub(super) fn delay(
    config: DelayStep,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let millis = cx.expression_in(&config, "")?;
    Ok(Delay::new(millis, BoxProcessor::identity()).into_processor())
}

pub(super) fn sample(
    config: SampleStep,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let sampling = match (config.message_frequency, config.sample_period) {
        (Some(_), Some(_)) => {
            return Err(cx.error(RouteErrorKind::InvalidValue(
                "give `sample_period` or `message_frequency`, not both".into(),
            )))
        }
        (Some(0), None) => {
            return Err(cx.error_at(
                "/message_frequency",
                RouteErrorKind::InvalidValue("`message_frequency` must be at least 1".into()),
            ))
        }
        (Some(n), None) => Sampling::Every(n),
        (None, period) => Sampling::Period(Duration::from_millis(period.unwrap_or(1000))),
    };
    Ok(Sample::new(sampling, BoxProcessor::identity()).into_processor())
}
