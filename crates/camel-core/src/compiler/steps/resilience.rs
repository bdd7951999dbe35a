//! `load_balance` and `circuit_breaker`.

use camel_api::BoxProcessor;
use camel_eip::circuit_breaker::{self as breaker, BreakerSettings, Thresholds, WindowKind};
use camel_eip::config::{CircuitBreaker, LoadBalance, SlidingWindowType};
use camel_eip::load_balance::{self as lb, CustomBalancer, FailoverPolicy, Policy};

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

fn invalid(cx: &StepContext<'_>, at: &str, message: String) -> RouteError {
    cx.error_at(at, RouteErrorKind::InvalidValue(message))
}

/// The one balancer key of a `load_balance`, as a policy.
fn policy(config: &LoadBalance, cx: &StepContext<'_>) -> Result<Policy, RouteError> {
    let mut found: Vec<(&str, Policy)> = Vec::new();
    if config.round_robin_load_balancer.is_some() {
        found.push(("round_robin_load_balancer", Policy::RoundRobin));
    }
    if config.random_load_balancer.is_some() {
        found.push(("random_load_balancer", Policy::Random));
    }
    if config.topic_load_balancer.is_some() {
        found.push(("topic_load_balancer", Policy::Topic));
    }
    if let Some(w) = &config.weighted_load_balancer {
        let at = "/weighted_load_balancer/distribution_ratio";
        let delimiter = w.distribution_ratio_delimiter.as_deref().unwrap_or(",");
        let ratios = w
            .distribution_ratio
            .split(delimiter)
            .map(|r| r.trim().parse::<u32>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| {
                invalid(
                    cx,
                    at,
                    format!(
                        "`{}` is not a list of whole numbers separated by `{delimiter}`",
                        w.distribution_ratio
                    ),
                )
            })?;
        let round_robin = w.round_robin.unwrap_or(false);
        found.push((
            "weighted_load_balancer",
            Policy::Weighted {
                ratios,
                round_robin,
            },
        ));
    }
    if let Some(s) = &config.sticky_load_balancer {
        let at = "/sticky_load_balancer/correlation_expression";
        let key = cx.expression_in(&s.correlation_expression, at)?;
        found.push(("sticky_load_balancer", Policy::Sticky(key)));
    }
    if let Some(f) = &config.failover_load_balancer {
        let at = "/failover_load_balancer/maximum_failover_attempts";
        let maximum_failover_attempts = match f.maximum_failover_attempts.unwrap_or(-1) {
            -1 => None,
            n if n >= 0 => Some(u32::try_from(n).unwrap_or(u32::MAX)),
            n => {
                return Err(invalid(
                    cx,
                    at,
                    format!("`{n}`: use −1 (no limit), 0 or more"),
                ))
            }
        };
        found.push((
            "failover_load_balancer",
            Policy::Failover(FailoverPolicy {
                exceptions: f.exception.clone(),
                maximum_failover_attempts,
                round_robin: f.round_robin.unwrap_or(false),
                sticky: f.sticky.unwrap_or(false),
            }),
        ));
    }
    if let Some(c) = &config.custom_load_balancer {
        let custom = cx
            .registry
            .resource(&c.reference)
            .and_then(|r| r.downcast::<CustomBalancer>().ok())
            .ok_or_else(|| {
                invalid(
                    cx,
                    "/custom_load_balancer/ref",
                    format!(
                        "no load balancer is registered under `{}` (register a camel_eip::load_balance::CustomBalancer with add_resource)",
                        c.reference
                    ),
                )
            })?;
        found.push(("custom_load_balancer", Policy::Custom((*custom).clone())));
    }
    let mut found = found.into_iter();
    match (found.next(), found.next()) {
        (Some((_, p)), None) => Ok(p),
        (None, _) => Err(cx.error(RouteErrorKind::Missing(
            "a balancer: round_robin_load_balancer, random_load_balancer, weighted_load_balancer, sticky_load_balancer, topic_load_balancer, failover_load_balancer or custom_load_balancer".into(),
        ))),
        (Some((first, _)), Some((second, _))) => Err(invalid(
            cx,
            &format!("/{second}"),
            format!("`{second}` and `{first}` both given: a load balancer has one policy"),
        )),
    }
}

/// `load_balance: {<kind>_load_balancer: {...}, steps: [...]}`: each step is a target.
pub(super) fn load_balance(
    config: LoadBalance,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let policy = policy(&config, cx)?;
    let mut targets = Vec::with_capacity(config.steps.len());
    for (i, step) in config.steps.iter().enumerate() {
        targets.push(cx.compile_step(step, &format!("/steps/{i}"))?);
    }
    let at = if config.weighted_load_balancer.is_some() {
        "/weighted_load_balancer/distribution_ratio"
    } else {
        "/steps"
    };
    lb::LoadBalance::new(targets, policy)
        .map(lb::LoadBalance::into_processor)
        .map_err(|e| invalid(cx, at, e.to_string()))
}

fn percent(
    value: Option<f64>,
    default: f64,
    at: &str,
    cx: &StepContext<'_>,
) -> Result<f64, RouteError> {
    let v = value.unwrap_or(default);
    if v > 0.0 && v <= 100.0 {
        Ok(v)
    } else {
        Err(invalid(
            cx,
            at,
            format!("`{v}`: a percentage above 0 and at most 100"),
        ))
    }
}

fn at_least_one(
    value: Option<u32>,
    default: u32,
    at: &str,
    cx: &StepContext<'_>,
) -> Result<u32, RouteError> {
    match value.unwrap_or(default) {
        0 => Err(invalid(cx, at, "must be at least 1".into())),
        n => Ok(n),
    }
}

/// `circuit_breaker: {resilience4j_configuration, steps, on_fallback: {steps}}`.
pub(super) fn circuit_breaker(
    config: CircuitBreaker,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let o = config
        .resilience4j_configuration
        .clone()
        .unwrap_or_default();
    let d = Thresholds::default();
    let at = |name: &str| format!("/resilience4j_configuration/{name}");
    let thresholds = Thresholds {
        failure_rate: percent(
            o.failure_rate_threshold,
            d.failure_rate,
            &at("failure_rate_threshold"),
            cx,
        )?,
        slow_call_rate: percent(
            o.slow_call_rate_threshold,
            d.slow_call_rate,
            &at("slow_call_rate_threshold"),
            cx,
        )?,
        slow_call_duration: o
            .slow_call_duration_threshold
            .unwrap_or(d.slow_call_duration),
        window_size: at_least_one(
            o.sliding_window_size,
            d.window_size,
            &at("sliding_window_size"),
            cx,
        )?,
        window_kind: match o.sliding_window_type.unwrap_or_default() {
            SlidingWindowType::CountBased => WindowKind::Count,
            SlidingWindowType::TimeBased => WindowKind::Time,
        },
        minimum_number_of_calls: at_least_one(
            o.minimum_number_of_calls,
            d.minimum_number_of_calls,
            &at("minimum_number_of_calls"),
            cx,
        )?,
        wait_in_open: o.wait_duration_in_open_state.unwrap_or(d.wait_in_open),
        half_open_calls: at_least_one(
            o.permitted_number_of_calls_in_half_open_state,
            d.half_open_calls,
            &at("permitted_number_of_calls_in_half_open_state"),
            cx,
        )?,
    };
    let timeout = match (
        o.timeout_enabled.unwrap_or(false),
        o.timeout_duration.unwrap_or(1000),
    ) {
        (false, _) => None,
        (true, 0) => {
            return Err(invalid(
                cx,
                &at("timeout_duration"),
                "must be above 0".into(),
            ))
        }
        (true, ms) => Some(std::time::Duration::from_millis(ms)),
    };
    let id = cx.node_id().unwrap_or(cx.path()).to_string();
    let settings = BreakerSettings {
        thresholds,
        timeout,
        throw_when_open: o
            .throw_exception_when_half_open_or_open_state
            .unwrap_or(false),
        record_exceptions: o.record_exceptions.clone(),
        ignore_exceptions: o.ignore_exceptions.clone(),
        metric_labels: Some((cx.route_id().to_string(), id)),
    };
    let steps = cx.compile_steps(&config.steps, "/steps")?;
    let fallback = match &config.on_fallback {
        None => None,
        Some(f) => Some(cx.compile_steps(&f.steps, "/on_fallback/steps")?),
    };
    Ok(breaker::CircuitBreaker::new(settings, fallback, steps).into_processor())
}
