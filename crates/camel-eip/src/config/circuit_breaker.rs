//! `circuit_breaker`: Camel's shape with its resilience4j options.
//!
//! ```yaml
//! - circuit_breaker:
//!     resilience4j_configuration: {minimum_number_of_calls: 5, wait_duration_in_open_state: 30}
//!     steps: [{to: http://flaky/api}]
//!     on_fallback: {steps: [{set_body: {constant: cached}}]}
//! ```

use std::time::Duration;

use camel_api::definition::{StepConfig, StepDefinition};
use serde::{Deserialize, Deserializer, Serialize};

use super::errors::{millis, number};

/// `circuit_breaker: {resilience4j_configuration: {...}, steps: [...], on_fallback: {steps}}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CircuitBreaker {
    /// The breaker's options (resilience4j's defaults when absent).
    #[serde(
        default,
        alias = "resilience4jConfiguration",
        skip_serializing_if = "Option::is_none"
    )]
    pub resilience4j_configuration: Option<Resilience4jConfiguration>,
    /// Camel's `inheritErrorHandler`: accepted; the route's error handler wraps the whole
    /// step either way (ADR 0052).
    #[serde(
        default,
        alias = "inheritErrorHandler",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub inherit_error_handler: Option<bool>,
    /// The protected steps.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
    /// What runs instead when the steps fail, time out, or the circuit is open.
    #[serde(default, alias = "onFallback", skip_serializing_if = "Option::is_none")]
    pub on_fallback: Option<OnFallback>,
}

impl StepConfig for CircuitBreaker {
    const NAME: &'static str = "circuit_breaker";
}

/// `on_fallback: {steps: [...]}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OnFallback {
    /// The fallback steps.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
}

/// How the sliding window of recent calls is measured.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(transform = camel_api::schema::serde_variants::<Self>)]
pub enum SlidingWindowType {
    /// The last `sliding_window_size` calls.
    #[default]
    #[serde(rename = "COUNT_BASED", alias = "count_based")]
    CountBased,
    /// The calls of the last `sliding_window_size` seconds.
    #[serde(rename = "TIME_BASED", alias = "time_based")]
    TimeBased,
}

/// Camel's `resilience4jConfiguration`. Numbers may be written as text; durations are a
/// number in Camel's unit for the option (seconds or milliseconds, as each says) or a
/// duration text (`500ms`, `30s`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Resilience4jConfiguration {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Percentage of failed calls at or above which the circuit opens (50).
    #[serde(
        default,
        alias = "failureRateThreshold",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub failure_rate_threshold: Option<f64>,
    /// Calls (COUNT_BASED) or seconds (TIME_BASED) the failure rate is measured over (100).
    #[serde(
        default,
        alias = "slidingWindowSize",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub sliding_window_size: Option<u32>,
    /// `COUNT_BASED` (default) or `TIME_BASED`.
    #[serde(
        default,
        alias = "slidingWindowType",
        skip_serializing_if = "Option::is_none"
    )]
    pub sliding_window_type: Option<SlidingWindowType>,
    /// Calls the window must hold before a rate is computed (100).
    #[serde(
        default,
        alias = "minimumNumberOfCalls",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub minimum_number_of_calls: Option<u32>,
    /// How long the circuit stays open before letting trial calls through: seconds, or a
    /// duration text (60 s).
    #[serde(
        default,
        alias = "waitDurationInOpenState",
        deserialize_with = "seconds",
        serialize_with = "write_seconds",
        skip_serializing_if = "Option::is_none"
    )]
    pub wait_duration_in_open_state: Option<Duration>,
    /// Trial calls let through while half open (10).
    #[serde(
        default,
        alias = "permittedNumberOfCallsInHalfOpenState",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub permitted_number_of_calls_in_half_open_state: Option<u32>,
    /// Give each call at most `timeout_duration` (false).
    #[serde(
        default,
        alias = "timeoutEnabled",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_enabled: Option<bool>,
    /// The call's deadline when `timeout_enabled`: milliseconds, or a duration text (1000).
    #[serde(
        default,
        alias = "timeoutDuration",
        deserialize_with = "millis",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_duration: Option<u64>,
    /// Percentage of slow calls at or above which the circuit opens (100).
    #[serde(
        default,
        alias = "slowCallRateThreshold",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub slow_call_rate_threshold: Option<f64>,
    /// A call at least this long is slow: seconds, or a duration text (60 s).
    #[serde(
        default,
        alias = "slowCallDurationThreshold",
        deserialize_with = "seconds",
        serialize_with = "write_seconds",
        skip_serializing_if = "Option::is_none"
    )]
    pub slow_call_duration_threshold: Option<Duration>,
    /// Fail a call refused by an open or half-open circuit with `CallNotPermittedException`
    /// when there is no fallback, instead of passing the exchange on unchanged (false).
    #[serde(
        default,
        alias = "throwExceptionWhenHalfOpenOrOpenState",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub throw_exception_when_half_open_or_open_state: Option<bool>,
    /// Only these error kinds count as failures (others as successes); empty: all.
    #[serde(
        default,
        alias = "recordExceptions",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub record_exceptions: Vec<String>,
    /// These error kinds count neither as failures nor as successes.
    #[serde(
        default,
        alias = "ignoreExceptions",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub ignore_exceptions: Vec<String>,
}

/// Seconds written as a number or digits, or a duration text (`500ms`, `2m`).
fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    use serde::de::Error;
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::String(s) => {
            let t = s.trim();
            t.parse::<u64>()
                .ok()
                .map(Duration::from_secs)
                .or_else(|| camel_api::parse_duration(t).filter(|_| !t.ends_with(char::is_numeric)))
                .map(Some)
                .ok_or_else(|| D::Error::custom(format!("`{s}` is not a duration")))
        }
        other => u64::deserialize(other)
            .map(|n| Some(Duration::from_secs(n)))
            .map_err(D::Error::custom),
    }
}

/// Whole seconds as a number, anything finer as milliseconds text (`seconds` reads both).
fn write_seconds<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) if d.subsec_nanos() == 0 => s.serialize_u64(d.as_secs()),
        Some(d) => s.serialize_str(&format!("{}ms", d.as_millis())),
        None => s.serialize_none(),
    }
}

impl CircuitBreaker {
    /// A breaker with resilience4j's defaults.
    pub fn new() -> Self {
        CircuitBreaker::default()
    }

    fn options(&mut self) -> &mut Resilience4jConfiguration {
        self.resilience4j_configuration
            .get_or_insert_with(Default::default)
    }

    /// Percentage of failed calls at or above which the circuit opens.
    pub fn failure_rate_threshold(mut self, percent: f64) -> Self {
        self.options().failure_rate_threshold = Some(percent);
        self
    }

    /// Size of the sliding window, and whether it counts calls or seconds.
    pub fn sliding_window(mut self, size: u32, kind: SlidingWindowType) -> Self {
        let o = self.options();
        o.sliding_window_size = Some(size);
        o.sliding_window_type = Some(kind);
        self
    }

    /// Calls the window must hold before a rate is computed.
    pub fn minimum_number_of_calls(mut self, n: u32) -> Self {
        self.options().minimum_number_of_calls = Some(n);
        self
    }

    /// How long the circuit stays open.
    pub fn wait_duration_in_open_state(mut self, d: Duration) -> Self {
        self.options().wait_duration_in_open_state = Some(d);
        self
    }

    /// Trial calls let through while half open.
    pub fn permitted_number_of_calls_in_half_open_state(mut self, n: u32) -> Self {
        self.options().permitted_number_of_calls_in_half_open_state = Some(n);
        self
    }

    /// Gives each call a deadline (a timed-out call counts as failed).
    pub fn timeout(mut self, d: Duration) -> Self {
        let o = self.options();
        o.timeout_enabled = Some(true);
        o.timeout_duration = Some(d.as_millis() as u64);
        self
    }

    /// Calls at least `slower_than` long are slow; at `percent` slow calls the circuit opens.
    pub fn slow_calls(mut self, percent: f64, slower_than: Duration) -> Self {
        let o = self.options();
        o.slow_call_rate_threshold = Some(percent);
        o.slow_call_duration_threshold = Some(slower_than);
        self
    }

    /// Fail refused calls with `CallNotPermittedException` when there is no fallback.
    pub fn throw_when_open(mut self) -> Self {
        self.options().throw_exception_when_half_open_or_open_state = Some(true);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn camel_spellings_and_units() {
        let c: CircuitBreaker = serde_json::from_value(json!({
            "resilience4jConfiguration": {
                "failureRateThreshold": "25",
                "slidingWindowSize": 4,
                "slidingWindowType": "TIME_BASED",
                "minimumNumberOfCalls": 2,
                "waitDurationInOpenState": 30,
                "permittedNumberOfCallsInHalfOpenState": "1",
                "timeoutEnabled": true,
                "timeoutDuration": "250ms",
                "slowCallRateThreshold": 50,
                "slowCallDurationThreshold": "500ms",
                "throwExceptionWhenHalfOpenOrOpenState": "true",
                "recordExceptions": ["java.io.IOException"],
                "ignoreExceptions": ["IllegalArgumentException"],
            },
            "steps": [{"to": "log:x"}],
            "onFallback": {"steps": [{"to": "log:y"}]},
        }))
        .unwrap();
        let o = c.resilience4j_configuration.unwrap();
        assert_eq!(o.failure_rate_threshold, Some(25.0));
        assert_eq!(o.sliding_window_type, Some(SlidingWindowType::TimeBased));
        assert_eq!(o.wait_duration_in_open_state, Some(Duration::from_secs(30)));
        assert_eq!(o.timeout_duration, Some(250));
        assert_eq!(
            o.slow_call_duration_threshold,
            Some(Duration::from_millis(500))
        );
        assert_eq!(o.permitted_number_of_calls_in_half_open_state, Some(1));
        assert_eq!(c.on_fallback.unwrap().steps.len(), 1);
    }

    #[test]
    fn bad_window_type_and_unknown_option_are_refused() {
        let e = serde_json::from_value::<CircuitBreaker>(json!({
            "resilience4jConfiguration": {"slidingWindowType": "SIZE_BASED"}
        }))
        .unwrap_err();
        assert!(e.to_string().contains("SIZE_BASED"), "{e}");
        assert!(serde_json::from_value::<CircuitBreaker>(json!({
            "resilience4jConfiguration": {"failureRate": 3}
        }))
        .is_err());
    }

    #[test]
    fn builder_values_read_back() {
        let c = CircuitBreaker::new()
            .failure_rate_threshold(40.0)
            .sliding_window(10, SlidingWindowType::CountBased)
            .minimum_number_of_calls(3)
            .wait_duration_in_open_state(Duration::from_secs(5))
            .permitted_number_of_calls_in_half_open_state(2)
            .timeout(Duration::from_millis(300))
            .slow_calls(80.0, Duration::from_secs(2))
            .throw_when_open();
        let back: CircuitBreaker =
            serde_json::from_value(serde_json::to_value(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }
}
