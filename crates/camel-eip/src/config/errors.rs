//! Error handling configurations (ADR 0052): `error_handler`, `redelivery_policy`,
//! `on_exception` and the `throw_exception` step, in the shape of Camel's YAML DSL.

use std::str::FromStr;

use camel_api::definition::{ExpressionDefinition, StepConfig, StepDefinition};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize};

/// `error_handler: {dead_letter_channel: {...}}` (or `default_error_handler`,
/// `no_error_handler`): exactly one kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorHandlerConfig {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Redeliver, then send the exchange to a dead letter endpoint and count it handled.
    #[serde(
        default,
        alias = "deadLetterChannel",
        skip_serializing_if = "Option::is_none"
    )]
    pub dead_letter_channel: Option<DeadLetterChannel>,
    /// Redeliver, then log and fail the exchange.
    #[serde(
        default,
        alias = "defaultErrorHandler",
        skip_serializing_if = "Option::is_none"
    )]
    pub default_error_handler: Option<DefaultErrorHandler>,
    /// No handling: a failure fails the exchange at once.
    #[serde(
        default,
        alias = "noErrorHandler",
        skip_serializing_if = "Option::is_none"
    )]
    pub no_error_handler: Option<NoErrorHandler>,
}

/// `dead_letter_channel: {dead_letter_uri, redelivery_policy, …}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeadLetterChannel {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Where exhausted exchanges go.
    #[serde(alias = "deadLetterUri")]
    pub dead_letter_uri: String,
    /// Camel's `level`: the level of the handler's line when redeliveries are exhausted
    /// (`ERROR` by default; TRACE, DEBUG, INFO, WARN, ERROR or OFF). The policy's
    /// `retries_exhausted_log_level` wins when both are given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
    /// Send the message as it entered the route instead of its state at the failure.
    #[serde(default, alias = "useOriginalMessage")]
    pub use_original_message: bool,
    /// Like `use_original_message`, for the body only (headers as at the failure).
    #[serde(default, alias = "useOriginalBody")]
    pub use_original_body: bool,
    /// When the dead letter endpoint fails too: count the exchange handled anyway
    /// (default, Camel's) or fail it with the new error.
    #[serde(
        default = "yes",
        alias = "deadLetterHandleNewException",
        skip_serializing_if = "is_true"
    )]
    pub dead_letter_handle_new_exception: bool,
    /// The redelivery policy.
    #[serde(
        default,
        alias = "redeliveryPolicy",
        skip_serializing_if = "Option::is_none"
    )]
    pub redelivery_policy: Option<RedeliveryPolicyConfig>,
}

/// `default_error_handler: {redelivery_policy, …}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DefaultErrorHandler {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Camel's `level`: the level of the handler's line when redeliveries are exhausted
    /// (`ERROR` by default; TRACE, DEBUG, INFO, WARN, ERROR or OFF). The policy's
    /// `retries_exhausted_log_level` wins when both are given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
    /// The redelivery policy.
    #[serde(
        default,
        alias = "redeliveryPolicy",
        skip_serializing_if = "Option::is_none"
    )]
    pub redelivery_policy: Option<RedeliveryPolicyConfig>,
}

/// `no_error_handler: {}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoErrorHandler {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// Camel's `redeliveryPolicy`. Numbers may be written as text (`"5"`), as Camel's schema
/// allows; delays are milliseconds or a duration text (`2s`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedeliveryPolicyConfig {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// How many redeliveries after the first failure (0 by default; −1: forever).
    #[serde(
        default,
        alias = "maximumRedeliveries",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub maximum_redeliveries: Option<i64>,
    /// The first delay, in milliseconds (1000 by default).
    #[serde(
        default,
        alias = "redeliveryDelay",
        deserialize_with = "millis",
        skip_serializing_if = "Option::is_none"
    )]
    pub redelivery_delay: Option<u64>,
    /// The longest delay, in milliseconds (60000 by default).
    #[serde(
        default,
        alias = "maximumRedeliveryDelay",
        deserialize_with = "millis",
        skip_serializing_if = "Option::is_none"
    )]
    pub maximum_redelivery_delay: Option<u64>,
    /// The factor of exponential back-off (2 by default).
    #[serde(
        default,
        alias = "backOffMultiplier",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub back_off_multiplier: Option<f64>,
    /// Multiply the delay by `back_off_multiplier` after each redelivery.
    #[serde(
        default,
        alias = "useExponentialBackOff",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub use_exponential_back_off: Option<bool>,
    /// Vary each delay randomly by up to `collision_avoidance_factor`.
    #[serde(
        default,
        alias = "useCollisionAvoidance",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub use_collision_avoidance: Option<bool>,
    /// The most a delay varies with collision avoidance (0.15 by default).
    #[serde(
        default,
        alias = "collisionAvoidanceFactor",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub collision_avoidance_factor: Option<f64>,
    /// `"1:1000;5:5000"`: from redelivery 1 wait 1 s, from redelivery 5 wait 5 s.
    #[serde(
        default,
        alias = "delayPattern",
        skip_serializing_if = "Option::is_none"
    )]
    pub delay_pattern: Option<String>,
    /// The level of the log line of each redelivery (`DEBUG` by default).
    #[serde(
        default,
        alias = "retryAttemptedLogLevel",
        skip_serializing_if = "Option::is_none"
    )]
    pub retry_attempted_log_level: Option<String>,
    /// The level of the log line when redeliveries are exhausted (`ERROR` by default).
    #[serde(
        default,
        alias = "retriesExhaustedLogLevel",
        skip_serializing_if = "Option::is_none"
    )]
    pub retries_exhausted_log_level: Option<String>,
    /// Log the error chain with the exhausted line (true by default).
    #[serde(
        default,
        alias = "logStackTrace",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub log_stack_trace: Option<bool>,
    /// Log a line when redeliveries are exhausted (true by default).
    #[serde(
        default,
        alias = "logExhausted",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub log_exhausted: Option<bool>,
    /// Log a line for each redelivery (true by default, at `retry_attempted_log_level`).
    #[serde(
        default,
        alias = "logRetryAttempted",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub log_retry_attempted: Option<bool>,
    /// Log only every n-th redelivery attempt (1, every one, by default), as Camel's
    /// `retryAttemptedLogInterval`.
    #[serde(
        default,
        alias = "retryAttemptedLogInterval",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub retry_attempted_log_interval: Option<u32>,
}

/// A predicate option that may also be written as a plain `true`/`false`
/// (`handled: true`, `handled: {constant: true}`, `handled: {simple: …}`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PredicateOption {
    /// A fixed answer.
    Fixed(bool),
    /// An expression evaluated on the failed exchange.
    Expression(ExpressionDefinition),
}

impl<'de> Deserialize<'de> for PredicateOption {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Bool(b) => Ok(PredicateOption::Fixed(b)),
            map @ serde_json::Value::Object(_) => ExpressionDefinition::deserialize(map)
                .map(PredicateOption::Expression)
                .map_err(D::Error::custom),
            other => Err(D::Error::custom(format!(
                "expected a predicate (`true`, `false` or `{{simple: …}}`), found `{other}`"
            ))),
        }
    }
}

/// `on_exception: {exception: [...], handled, continued, on_when, redelivery_policy,
/// steps}`: what to do with a failure of the listed kinds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OnException {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The kinds or Java class names this clause catches (at least one).
    pub exception: Vec<String>,
    /// Only when this predicate holds on the failed exchange.
    #[serde(default, alias = "onWhen", skip_serializing_if = "Option::is_none")]
    pub on_when: Option<ExpressionDefinition>,
    /// Count the failure handled: the route ends successfully after `steps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handled: Option<PredicateOption>,
    /// Ignore the failure: the route goes on after the failed step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued: Option<PredicateOption>,
    /// Keep redelivering while this predicate holds (within the policy's maximum).
    #[serde(default, alias = "retryWhile", skip_serializing_if = "Option::is_none")]
    pub retry_while: Option<ExpressionDefinition>,
    /// Overrides the error handler's redelivery policy for these kinds.
    #[serde(
        default,
        alias = "redeliveryPolicy",
        skip_serializing_if = "Option::is_none"
    )]
    pub redelivery_policy: Option<RedeliveryPolicyConfig>,
    /// Run `steps` on the message as it entered the route.
    #[serde(default, alias = "useOriginalMessage")]
    pub use_original_message: bool,
    /// Run `steps` on the original body (headers as at the failure).
    #[serde(default, alias = "useOriginalBody")]
    pub use_original_body: bool,
    /// The steps run once redeliveries are exhausted.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
}

/// `throw_exception: {exception_type: IllegalArgumentException, message: "…"}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThrowException {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The kind (or Java class name) of the failure.
    #[serde(alias = "exceptionType")]
    pub exception_type: String,
    /// The message, a simple expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl StepConfig for ThrowException {
    const NAME: &'static str = "throw_exception";
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// A number (or bool) written as itself or as text.
pub(super) fn number<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr + DeserializeOwned,
{
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::String(s) => s
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| D::Error::custom(format!("`{s}` is not a valid value here"))),
        other => T::deserialize(other).map(Some).map_err(D::Error::custom),
    }
}

/// Milliseconds, written as a number, as digits, or as a duration text (`2s`).
pub(super) fn millis<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::String(s) => {
            let t = s.trim();
            t.parse::<u64>()
                .ok()
                .or_else(|| camel_api::parse_duration(t).map(|d| d.as_millis() as u64))
                .map(Some)
                .ok_or_else(|| D::Error::custom(format!("`{s}` is not a delay")))
        }
        other => u64::deserialize(other).map(Some).map_err(D::Error::custom),
    }
}

/// `do_try: {steps: [...], do_catch: [{exception: [...], on_when, steps}], do_finally:
/// {steps}}`. Camel's tools also write the catches and the finally block as the last items
/// of `steps` (`- doCatch: {…}`, `- doFinally: {…}`); the compiler reads both forms.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoTry {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The guarded block.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
    /// The catches, closest match first, declaration order among equals.
    #[serde(default, alias = "doCatch", skip_serializing_if = "Vec::is_empty")]
    pub do_catch: Vec<DoCatch>,
    /// Steps run after the block and any catch, in every case.
    #[serde(default, alias = "doFinally", skip_serializing_if = "Option::is_none")]
    pub do_finally: Option<DoFinally>,
}

impl StepConfig for DoTry {
    const NAME: &'static str = "do_try";
}

/// One `do_catch`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoCatch {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The kinds or Java class names caught; none (Camel's default) catches every failure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exception: Vec<String>,
    /// Only when this predicate holds on the failed exchange.
    #[serde(default, alias = "onWhen", skip_serializing_if = "Option::is_none")]
    pub on_when: Option<ExpressionDefinition>,
    /// The steps run on a catch.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
}

/// `do_finally: {steps: [...]}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoFinally {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The steps.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
}

/// `on_completion: {on_complete_only, on_failure_only, on_when, mode, steps}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OnCompletionConfig {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Only for exchanges that completed.
    #[serde(default, alias = "onCompleteOnly", deserialize_with = "flag")]
    pub on_complete_only: bool,
    /// Only for exchanges that failed.
    #[serde(default, alias = "onFailureOnly", deserialize_with = "flag")]
    pub on_failure_only: bool,
    /// Only when this predicate holds on the finished exchange.
    #[serde(default, alias = "onWhen", skip_serializing_if = "Option::is_none")]
    pub on_when: Option<ExpressionDefinition>,
    /// `AfterConsumer` (default) or `BeforeConsumer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The steps.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
}

fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(number::<D, bool>(d)?.unwrap_or(false))
}
