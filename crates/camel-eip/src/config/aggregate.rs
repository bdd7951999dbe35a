//! `aggregate` and `idempotent_consumer`: the stateful EIPs' typed configurations.

use camel_api::definition::{ExpressionDefinition, StepConfig, StepDefinition};
use serde::{Deserialize, Deserializer, Serialize};

/// `aggregate: {correlation_expression: {header: id}, aggregation_strategy: …,
/// completion_size: 3, steps: […]}`: collects exchanges with the same correlation key into
/// one, and runs `steps` on it when the group completes. Names are Camel's (snake_case,
/// camelCase accepted).
///
/// ```
/// use camel_api::definition::ExpressionDefinition;
/// use camel_eip::config::Aggregate;
///
/// let a = Aggregate::new(ExpressionDefinition::new("header", "id"), "grouped_body")
///     .completion_size(3)
///     .completion_timeout_ms(500);
/// assert_eq!(a.completion_size, Some(3));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Aggregate {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Gives each exchange's group (`{header: id}`, `{simple: …}`).
    #[serde(alias = "correlationExpression")]
    pub correlation_expression: ExpressionDefinition,
    /// A built-in strategy name (short or Camel class name) or a context resource of type
    /// `SharedStrategy`.
    #[serde(default, alias = "aggregationStrategy")]
    pub aggregation_strategy: String,
    /// Accepted for Camel files: our strategies always see `None` as the first aggregate.
    #[serde(
        default,
        alias = "aggregationStrategyMethodAllowNull",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub aggregation_strategy_method_allow_null: bool,
    /// A context resource (an `AggregationRepository`) or a database URL
    /// (`postgres://…`, `sqlite:…`) keeping the open groups; in memory when absent.
    #[serde(
        default,
        alias = "aggregationRepository",
        skip_serializing_if = "Option::is_none"
    )]
    pub aggregation_repository: Option<String>,
    /// Complete a group when it holds this many exchanges.
    #[serde(
        default,
        alias = "completionSize",
        skip_serializing_if = "Option::is_none"
    )]
    pub completion_size: Option<usize>,
    /// Complete a group at the size this expression gives (evaluated on each exchange).
    #[serde(
        default,
        alias = "completionSizeExpression",
        skip_serializing_if = "Option::is_none"
    )]
    pub completion_size_expression: Option<ExpressionDefinition>,
    /// Complete a group this long after its last exchange (re-armed by each exchange).
    #[serde(
        default,
        alias = "completionTimeout",
        deserialize_with = "millis",
        skip_serializing_if = "Option::is_none"
    )]
    pub completion_timeout: Option<u64>,
    /// A group found in the repository at start (left by a crash) completes by
    /// `completion_timeout` no sooner than this long after the start, so that a broker
    /// can redeliver the exchange that was in flight first (our own option).
    #[serde(
        default,
        alias = "restoredGroupDelay",
        deserialize_with = "millis",
        skip_serializing_if = "Option::is_none"
    )]
    pub restored_group_delay: Option<u64>,
    /// The timeout in milliseconds from an expression on each exchange.
    #[serde(
        default,
        alias = "completionTimeoutExpression",
        skip_serializing_if = "Option::is_none"
    )]
    pub completion_timeout_expression: Option<ExpressionDefinition>,
    /// Complete every open group this often.
    #[serde(
        default,
        alias = "completionInterval",
        deserialize_with = "millis",
        skip_serializing_if = "Option::is_none"
    )]
    pub completion_interval: Option<u64>,
    /// Complete a group when this predicate holds (on the aggregate, or on the incoming
    /// exchange with `eager_check_completion`).
    #[serde(
        default,
        alias = "completionPredicate",
        skip_serializing_if = "Option::is_none"
    )]
    pub completion_predicate: Option<ExpressionDefinition>,
    /// Complete every group when a batch consumer's batch (`CamelBatchSize`) is in.
    #[serde(
        default,
        alias = "completionFromBatchConsumer",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub completion_from_batch_consumer: bool,
    /// Complete the open groups when an exchange starts a new group.
    #[serde(
        default,
        alias = "completionOnNewCorrelationGroup",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub completion_on_new_correlation_group: bool,
    /// Evaluate the completion predicate on the incoming exchange, before aggregating.
    #[serde(
        default,
        alias = "eagerCheckCompletion",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub eager_check_completion: bool,
    /// On a route stop, complete the open groups instead of keeping them.
    #[serde(
        default,
        alias = "forceCompletionOnStop",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub force_completion_on_stop: bool,
    /// Accepted as a synonym of `force_completion_on_stop`.
    #[serde(
        default,
        alias = "completeAllOnStop",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub complete_all_on_stop: bool,
    /// A group that times out is dropped instead of completed.
    #[serde(
        default,
        alias = "discardOnCompletionTimeout",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub discard_on_completion_timeout: bool,
    /// A group whose strategy fails is dropped instead of failing the exchange.
    #[serde(
        default,
        alias = "discardOnAggregationFailure",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub discard_on_aggregation_failure: bool,
    /// Refuse exchanges for a key whose group completed; the value bounds how many keys
    /// are remembered (0: no bound).
    #[serde(
        default,
        alias = "closeCorrelationKeyOnCompletion",
        skip_serializing_if = "Option::is_none"
    )]
    pub close_correlation_key_on_completion: Option<usize>,
    /// Pass on exchanges whose correlation key is empty instead of failing them.
    #[serde(
        default,
        alias = "ignoreInvalidCorrelationKeys",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub ignore_invalid_correlation_keys: bool,
    /// No lock around an update: a conflicting update is retried (a repository that
    /// versions its groups detects it).
    #[serde(
        default,
        alias = "optimisticLocking",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub optimistic_locking: bool,
    /// Redeliver completed groups whose steps did not finish (after a failure or a
    /// crash); needs a repository.
    #[serde(
        default,
        alias = "useRecovery",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub use_recovery: bool,
    /// How often unconfirmed completed groups are looked for (default 5 s).
    #[serde(
        default,
        alias = "recoveryInterval",
        deserialize_with = "millis",
        skip_serializing_if = "Option::is_none"
    )]
    pub recovery_interval: Option<u64>,
    /// Recovery attempts before the group goes to `dead_letter_uri` (0: no limit).
    #[serde(
        default,
        alias = "maximumRedeliveries",
        skip_serializing_if = "is_zero"
    )]
    pub maximum_redeliveries: u32,
    /// Where a group goes once its redeliveries are exhausted.
    #[serde(
        default,
        alias = "deadLetterUri",
        skip_serializing_if = "Option::is_none"
    )]
    pub dead_letter_uri: Option<String>,
    /// Run on each completed group.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
}

impl Aggregate {
    /// Groups by `correlation`, combining with the strategy called `strategy`.
    pub fn new(correlation: ExpressionDefinition, strategy: impl Into<String>) -> Self {
        Aggregate {
            correlation_expression: correlation,
            aggregation_strategy: strategy.into(),
            ..Default::default()
        }
    }

    /// Complete a group at `n` exchanges.
    pub fn completion_size(mut self, n: usize) -> Self {
        self.completion_size = Some(n);
        self
    }

    /// Complete a group `ms` milliseconds after its last exchange.
    pub fn completion_timeout_ms(mut self, ms: u64) -> Self {
        self.completion_timeout = Some(ms);
        self
    }

    /// Complete every open group every `ms` milliseconds.
    pub fn completion_interval_ms(mut self, ms: u64) -> Self {
        self.completion_interval = Some(ms);
        self
    }

    /// Complete a group when `predicate` holds.
    pub fn completion_predicate(mut self, predicate: ExpressionDefinition) -> Self {
        self.completion_predicate = Some(predicate);
        self
    }

    /// Keep the groups in the repository named (a context resource or a database URL).
    pub fn repository(mut self, name: impl Into<String>) -> Self {
        self.aggregation_repository = Some(name.into());
        self
    }

    /// Complete the open groups when the route stops.
    pub fn force_completion_on_stop(mut self) -> Self {
        self.force_completion_on_stop = true;
        self
    }
}

impl StepConfig for Aggregate {
    const NAME: &'static str = "aggregate";
}

camel_api::expression_config! {
    /// `idempotent_consumer: {header: id, message_id_repository: …, steps: […]}`: runs
    /// `steps` once per message id.
    pub struct IdempotentConsumer {
        /// Camel's node id: accepted, not used.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub id: Option<String>,
        /// A context resource (an `IdempotentRepository`), `memory:N` (an LRU of N ids) or
        /// a database URL; an in-memory LRU of 1000 ids when absent.
        #[serde(
            default,
            alias = "messageIdRepository",
            alias = "idempotentRepository",
            skip_serializing_if = "Option::is_none"
        )]
        pub message_id_repository: Option<String>,
        /// Record the id before `steps` run (default true), so a concurrent duplicate is seen.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub eager: Option<bool>,
        /// Skip `steps` for a duplicate (default true); false runs them with
        /// `CamelDuplicateMessage = true`.
        #[serde(default, alias = "skipDuplicate", skip_serializing_if = "Option::is_none")]
        pub skip_duplicate: Option<bool>,
        /// Forget the id when `steps` fail (default true), so a redelivery is processed.
        #[serde(default, alias = "removeOnFailure", skip_serializing_if = "Option::is_none")]
        pub remove_on_failure: Option<bool>,
        /// Complete the id when `steps` return (true) instead of when the route is done
        /// with the exchange (false, Camel's default: a failure after the block also
        /// forgets the id).
        #[serde(default, alias = "completionEager", skip_serializing_if = "std::ops::Not::not")]
        pub completion_eager: bool,
        /// Run on each message seen for the first time.
        #[serde(default)]
        pub steps: Vec<StepDefinition>,
    }
}

impl StepConfig for IdempotentConsumer {
    const NAME: &'static str = "idempotent_consumer";
}

/// A duration in milliseconds written as a number or as text (`500ms`, `2s`, `1m`).
fn millis<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    use serde::de::Error;
    match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Number(n)) => n
            .as_u64()
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("`{n}` is not a duration in milliseconds"))),
        Some(serde_json::Value::String(s)) => camel_api::parse_duration(&s)
            .map(|d| Some(d.as_millis() as u64))
            .ok_or_else(|| {
                D::Error::custom(format!("`{s}` is not a duration (use 1000, 500ms, 2s, 1m)"))
            }),
        Some(other) => Err(D::Error::custom(format!(
            "`{other}` is not a duration (use 1000, 500ms, 2s, 1m)"
        ))),
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}
