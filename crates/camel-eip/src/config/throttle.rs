//! `throttle`, `delay` and `sample`: the steps that hold exchanges back in time.

use camel_api::definition::{ExpressionDefinition, StepConfig};
use camel_api::expression_config;
use serde::{Deserialize, Serialize};

use super::split::millis;

expression_config! {
    /// `throttle: {constant: 10, time_period_millis: 1000}`: at most the expression's
    /// number of exchanges per period (per correlation key) go on; the others wait for a
    /// later period, or fail with `reject_execution`.
    ///
    /// ```
    /// use camel_eip::config::Throttle;
    /// let t = Throttle::per_period(10, 1000).reject_execution(true);
    /// assert_eq!(t.time_period_millis, Some(1000));
    /// ```
    pub struct Throttle {
        /// The period in milliseconds (default 1000).
        #[serde(default, skip_serializing_if = "Option::is_none", alias = "timePeriodMillis", deserialize_with = "millis")]
        pub time_period_millis: Option<u64>,
        /// Exchanges with the same key share a limit; without it all share one.
        #[serde(default, skip_serializing_if = "Option::is_none", alias = "correlationExpression")]
        pub correlation_expression: Option<ExpressionDefinition>,
        /// Fail an exchange over the limit (`RejectedExecutionException`) instead of
        /// holding it back.
        #[serde(default, skip_serializing_if = "std::ops::Not::not", alias = "rejectExecution")]
        pub reject_execution: bool,
        /// Accepted for Camel files: a held exchange never blocks a thread here.
        #[serde(default, skip_serializing_if = "std::ops::Not::not", alias = "asyncDelayed")]
        pub async_delayed: bool,
        /// Accepted for Camel files; there is no thread pool to reject a task.
        #[serde(default, skip_serializing_if = "Option::is_none", alias = "callerRunsWhenRejected")]
        pub caller_runs_when_rejected: Option<bool>,
        /// Camel's throttling mode: `TotalRequests` (the default and the only one here).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub mode: Option<String>,
    }
}

impl StepConfig for Throttle {
    const NAME: &'static str = "throttle";

    /// `- throttle: 10`: ten per second.
    fn from_scalar(text: &str) -> Option<Self> {
        Some(Throttle {
            constant: Some(camel_api::definition::LanguageValue {
                text: text.to_string(),
                options: Default::default(),
            }),
            ..Default::default()
        })
    }
}

impl Throttle {
    /// At most `max` exchanges per `period_millis`.
    pub fn per_period(max: u64, period_millis: u64) -> Self {
        Throttle {
            constant: Some(camel_api::definition::LanguageValue {
                text: max.to_string(),
                options: Default::default(),
            }),
            time_period_millis: Some(period_millis),
            ..Default::default()
        }
    }

    /// Separate limits per value of `key`.
    pub fn correlation(mut self, key: ExpressionDefinition) -> Self {
        self.correlation_expression = Some(key);
        self
    }

    /// Fail exchanges over the limit instead of holding them.
    pub fn reject_execution(mut self, yes: bool) -> Self {
        self.reject_execution = yes;
        self
    }
}

expression_config! {
    /// `delay: {constant: 500}`: holds each exchange for the expression's milliseconds.
    pub struct Delay {
        /// Accepted for Camel files: a held exchange never blocks a thread here.
        #[serde(default, skip_serializing_if = "std::ops::Not::not", alias = "asyncDelayed")]
        pub async_delayed: bool,
        /// Accepted for Camel files; there is no thread pool to reject a task.
        #[serde(default, skip_serializing_if = "Option::is_none", alias = "callerRunsWhenRejected")]
        pub caller_runs_when_rejected: Option<bool>,
    }
}

impl StepConfig for Delay {
    const NAME: &'static str = "delay";

    /// `- delay: 500`.
    fn from_scalar(text: &str) -> Option<Self> {
        Some(Delay {
            constant: Some(camel_api::definition::LanguageValue {
                text: text.to_string(),
                options: Default::default(),
            }),
            ..Default::default()
        })
    }
}

/// `sample: {sample_period: 1000}` or `sample: {message_frequency: 10}`: lets one exchange
/// per period (or one in every N) go on; the others stop there.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    /// The period in milliseconds or as a duration (`1s`); default one second.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "samplePeriod",
        deserialize_with = "millis"
    )]
    pub sample_period: Option<u64>,
    /// Lets every Nth exchange through instead of one per period.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "messageFrequency",
        deserialize_with = "super::split::count_u64"
    )]
    pub message_frequency: Option<u64>,
}

impl StepConfig for Sample {
    const NAME: &'static str = "sample";

    /// `- sample: 5s`.
    fn from_scalar(text: &str) -> Option<Self> {
        camel_api::parse_duration(text).map(|d| Sample {
            sample_period: Some(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            message_frequency: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn camel_spellings_read() {
        let t: Throttle = serde_json::from_value(json!({
            "constant": 5, "timePeriodMillis": 2000, "rejectExecution": true,
            "asyncDelayed": true, "correlationExpression": {"header": "tenant"},
        }))
        .unwrap();
        assert_eq!(t.time_period_millis, Some(2000));
        assert!(t.reject_execution);
        assert_eq!(t.correlation_expression.unwrap().language, "header");
        let s: Sample = serde_json::from_value(json!({"samplePeriod": "2s"})).unwrap();
        assert_eq!(s.sample_period, Some(2000));
        let s: Sample = serde_json::from_value(json!({"messageFrequency": "3"})).unwrap();
        assert_eq!(s.message_frequency, Some(3));
        assert!(
            serde_json::from_value::<Delay>(json!({"constant": 5, "asyncDelay": true})).is_err()
        );
    }
}
