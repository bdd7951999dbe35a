//! `enrich` and `poll_enrich` (ADR 0061).

use camel_api::definition::{ExpressionDefinition, StepConfig, WithExpression};
use camel_api::expression_config;

use super::dynamic::{flag, is_false};
use super::errors::number;

expression_config! {
    /// `enrich: {constant: "direct:prices", aggregation_strategy: …}`: the exchange is
    /// sent to the endpoint the expression names and the reply is merged into it (by
    /// default the reply's message replaces the message).
    pub struct Enrich {
        /// A built-in strategy name or a `SharedStrategy` registered in the context; it
        /// gets the original exchange first, then the reply.
        #[serde(default, alias = "aggregationStrategy", skip_serializing_if = "Option::is_none")]
        pub aggregation_strategy: Option<String>,
        /// Call the strategy also when the endpoint failed (the original exchange then
        /// carries the error as `${exception}`); otherwise the failure fails the exchange.
        #[serde(default, alias = "aggregateOnException", deserialize_with = "flag", skip_serializing_if = "is_false")]
        pub aggregate_on_exception: bool,
        /// Pass the exchange on unchanged when the URI names no endpoint.
        #[serde(default, alias = "ignoreInvalidEndpoint", deserialize_with = "flag", skip_serializing_if = "is_false")]
        pub ignore_invalid_endpoint: bool,
        /// How many resolved endpoints to keep (default 1000; −1: none).
        #[serde(default, alias = "cacheSize", deserialize_with = "number", skip_serializing_if = "Option::is_none")]
        pub cache_size: Option<i64>,
    }
}

impl StepConfig for Enrich {
    const NAME: &'static str = "enrich";
}

impl Enrich {
    /// An enricher calling the endpoint `e` names.
    pub fn new(e: ExpressionDefinition) -> Self {
        let mut c = Enrich::default();
        c.set_expression(e);
        c
    }

    /// The aggregation strategy, by name.
    pub fn strategy(mut self, name: impl Into<String>) -> Self {
        self.aggregation_strategy = Some(name.into());
        self
    }

    /// Aggregate also when the endpoint failed.
    pub fn aggregate_on_exception(mut self) -> Self {
        self.aggregate_on_exception = true;
        self
    }
}

expression_config! {
    /// `poll_enrich: {constant: "seda:prices", timeout: 1000}`: one exchange is taken
    /// from the endpoint the expression names (it must be pollable: `seda:`) and merged
    /// into the exchange.
    pub struct PollEnrich {
        /// Milliseconds to wait for a message: −1 (default) waits as long as it takes, 0
        /// takes only what is already there. Nothing in time leaves the exchange as it was.
        #[serde(default, deserialize_with = "number", skip_serializing_if = "Option::is_none")]
        pub timeout: Option<i64>,
        /// As for `enrich`.
        #[serde(default, alias = "aggregationStrategy", skip_serializing_if = "Option::is_none")]
        pub aggregation_strategy: Option<String>,
        /// As for `enrich`.
        #[serde(default, alias = "aggregateOnException", deserialize_with = "flag", skip_serializing_if = "is_false")]
        pub aggregate_on_exception: bool,
        /// As for `enrich`.
        #[serde(default, alias = "ignoreInvalidEndpoint", deserialize_with = "flag", skip_serializing_if = "is_false")]
        pub ignore_invalid_endpoint: bool,
        /// How many resolved endpoints to keep (default 1000; −1: none).
        #[serde(default, alias = "cacheSize", deserialize_with = "number", skip_serializing_if = "Option::is_none")]
        pub cache_size: Option<i64>,
    }
}

impl StepConfig for PollEnrich {
    const NAME: &'static str = "poll_enrich";
}

impl PollEnrich {
    /// A poll enricher reading from the endpoint `e` names.
    pub fn new(e: ExpressionDefinition) -> Self {
        let mut c = PollEnrich::default();
        c.set_expression(e);
        c
    }

    /// How long to wait, in milliseconds (−1: as long as it takes).
    pub fn timeout_ms(mut self, ms: i64) -> Self {
        self.timeout = Some(ms);
        self
    }

    /// The wait as a duration: `None` waits as long as it takes.
    pub fn wait(&self) -> Option<std::time::Duration> {
        match self.timeout {
            None => None,
            Some(ms) if ms < 0 => None,
            Some(ms) => Some(std::time::Duration::from_millis(ms as u64)),
        }
    }
}
