//! `load_balance`: Camel's shape, one balancer key beside the target steps.
//!
//! ```yaml
//! - load_balance:
//!     weighted_load_balancer: {distribution_ratio: "3,1", round_robin: true}
//!     steps: [{to: direct:a}, {to: direct:b}]
//! ```

use camel_api::definition::{ExpressionDefinition, StepConfig, StepDefinition};
use camel_api::expression_config;
use serde::{Deserialize, Deserializer, Serialize};

use super::errors::number;

/// `load_balance: {<kind>_load_balancer: {...}, steps: [...]}`: each step is one target;
/// exactly one balancer key says how a target is chosen for each exchange.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadBalance {
    /// Each target in turn.
    #[serde(
        default,
        alias = "roundRobinLoadBalancer",
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub round_robin_load_balancer: Option<NoOptions>,
    /// A target at random.
    #[serde(
        default,
        alias = "randomLoadBalancer",
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub random_load_balancer: Option<NoOptions>,
    /// Targets in proportion to their ratios.
    #[serde(
        default,
        alias = "weightedLoadBalancer",
        skip_serializing_if = "Option::is_none"
    )]
    pub weighted_load_balancer: Option<WeightedBalancer>,
    /// The same target for the same correlation value.
    #[serde(
        default,
        alias = "stickyLoadBalancer",
        skip_serializing_if = "Option::is_none"
    )]
    pub sticky_load_balancer: Option<StickyBalancer>,
    /// Every target, each with its own copy (like a topic).
    #[serde(
        default,
        alias = "topicLoadBalancer",
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub topic_load_balancer: Option<NoOptions>,
    /// The first target, and the next ones when it fails.
    #[serde(
        default,
        alias = "failoverLoadBalancer",
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub failover_load_balancer: Option<FailoverBalancer>,
    /// A balancer written in Rust, registered on the context as a resource.
    #[serde(
        default,
        alias = "customLoadBalancer",
        skip_serializing_if = "Option::is_none"
    )]
    pub custom_load_balancer: Option<CustomBalancer>,
    /// Camel's `inheritErrorHandler`: accepted; the route's error handler wraps the whole
    /// step either way (ADR 0052).
    #[serde(
        default,
        alias = "inheritErrorHandler",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub inherit_error_handler: Option<bool>,
    /// The targets: each step is one.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
}

impl StepConfig for LoadBalance {
    const NAME: &'static str = "load_balance";
}

/// A balancer without options (`round_robin_load_balancer: {}`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoOptions {}

/// `weighted_load_balancer: {distribution_ratio: "4,2,1", round_robin: false}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WeightedBalancer {
    /// One whole-number weight per target, in target order (`"4,2,1"`).
    #[serde(alias = "distributionRatio")]
    pub distribution_ratio: String,
    /// What separates the ratios (`,` by default).
    #[serde(
        default,
        alias = "distributionRatioDelimiter",
        skip_serializing_if = "Option::is_none"
    )]
    pub distribution_ratio_delimiter: Option<String>,
    /// Interleave the targets by weight (true) or pick at random by weight (false, the
    /// default, as in Camel).
    #[serde(
        default,
        alias = "roundRobin",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub round_robin: Option<bool>,
}

/// `sticky_load_balancer: {correlation_expression: {simple: "${header.customer}"}}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StickyBalancer {
    /// The value whose equal values go to the same target.
    #[serde(alias = "correlationExpression")]
    pub correlation_expression: Correlation,
}

expression_config! {
    /// The correlation expression of a sticky balancer.
    pub struct Correlation {}
}

/// `failover_load_balancer: {exception: [...], maximum_failover_attempts, round_robin, sticky}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailoverBalancer {
    /// Fail over only on these error kinds or Java class names (ADR 0052's matching);
    /// empty: on any error.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exception: Vec<String>,
    /// How many times to fail over before giving up: −1 (default) no limit, 0 never.
    #[serde(
        default,
        alias = "maximumFailoverAttempts",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub maximum_failover_attempts: Option<i64>,
    /// Start each exchange at the next target and wrap around the list.
    #[serde(
        default,
        alias = "roundRobin",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub round_robin: Option<bool>,
    /// Start each exchange at the last target that succeeded.
    #[serde(
        default,
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub sticky: Option<bool>,
}

/// `custom_load_balancer: {ref: name}`: a `camel_eip::load_balance::CustomBalancer`
/// registered with `CamelContext::add_resource(name, …)`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomBalancer {
    /// The resource name.
    #[serde(rename = "ref")]
    pub reference: String,
}

impl LoadBalance {
    /// Each target in turn.
    pub fn round_robin() -> Self {
        LoadBalance {
            round_robin_load_balancer: Some(NoOptions {}),
            ..Default::default()
        }
    }

    /// A target at random.
    pub fn random() -> Self {
        LoadBalance {
            random_load_balancer: Some(NoOptions {}),
            ..Default::default()
        }
    }

    /// Targets in proportion to `ratios` (one per target), picked at random by weight;
    /// `.weighted_round_robin()` interleaves them instead.
    pub fn weighted(ratios: &[u32]) -> Self {
        let text: Vec<String> = ratios.iter().map(u32::to_string).collect();
        LoadBalance {
            weighted_load_balancer: Some(WeightedBalancer {
                distribution_ratio: text.join(","),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// Interleaves a weighted balancer's targets by weight instead of picking at random.
    ///
    /// # Panics
    /// When this is not a weighted balancer: a programming error.
    #[track_caller]
    pub fn weighted_round_robin(mut self) -> Self {
        match &mut self.weighted_load_balancer {
            Some(w) => w.round_robin = Some(true),
            None => panic!("weighted_round_robin applies to LoadBalance::weighted"),
        }
        self
    }

    /// The same target for exchanges whose `correlation` is equal.
    pub fn sticky(correlation: ExpressionDefinition) -> Self {
        let mut c = Correlation::default();
        camel_api::definition::WithExpression::set_expression(&mut c, correlation);
        LoadBalance {
            sticky_load_balancer: Some(StickyBalancer {
                correlation_expression: c,
            }),
            ..Default::default()
        }
    }

    /// Every target gets its own copy of the exchange.
    pub fn topic() -> Self {
        LoadBalance {
            topic_load_balancer: Some(NoOptions {}),
            ..Default::default()
        }
    }

    /// The first target, and the next one whenever a target fails (see
    /// [`FailoverBalancer`] for the options, set through [`LoadBalance::failover_with`]).
    pub fn failover() -> Self {
        Self::failover_with(FailoverBalancer::default())
    }

    /// Failover with its options.
    pub fn failover_with(options: FailoverBalancer) -> Self {
        LoadBalance {
            failover_load_balancer: Some(options),
            ..Default::default()
        }
    }

    /// A balancer registered on the context under `reference`.
    pub fn custom(reference: &str) -> Self {
        LoadBalance {
            custom_load_balancer: Some(CustomBalancer {
                reference: reference.into(),
            }),
            ..Default::default()
        }
    }
}

impl FailoverBalancer {
    /// Fail over only on errors of this kind (or Java class name); may be repeated.
    pub fn exception(mut self, kind: &str) -> Self {
        self.exception.push(kind.into());
        self
    }

    /// At most `n` failovers per exchange (−1: no limit; 0: never).
    pub fn maximum_failover_attempts(mut self, n: i64) -> Self {
        self.maximum_failover_attempts = Some(n);
        self
    }

    /// Start each exchange at the next target, wrapping around the list.
    pub fn round_robin(mut self, yes: bool) -> Self {
        self.round_robin = Some(yes);
        self
    }

    /// Start each exchange at the last target that succeeded.
    pub fn sticky(mut self, yes: bool) -> Self {
        self.sticky = Some(yes);
        self
    }
}

/// A key written with no value (`random_load_balancer:`) means that balancer with its
/// defaults.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(
    d: D,
) -> Result<Option<T>, D::Error> {
    Ok(Some(Option::<T>::deserialize(d)?.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn camel_spellings_read() {
        let lb: LoadBalance = serde_json::from_value(json!({
            "weightedLoadBalancer": {"distributionRatio": "4,2,1", "roundRobin": "true"},
            "steps": [{"to": "log:a"}]
        }))
        .unwrap();
        let w = lb.weighted_load_balancer.unwrap();
        assert_eq!(w.distribution_ratio, "4,2,1");
        assert_eq!(w.round_robin, Some(true));
        let lb: LoadBalance = serde_json::from_value(json!({
            "failoverLoadBalancer": {"maximumFailoverAttempts": "3", "exception": ["java.io.IOException"]},
        }))
        .unwrap();
        let f = lb.failover_load_balancer.unwrap();
        assert_eq!(f.maximum_failover_attempts, Some(3));
        assert_eq!(f.exception, ["java.io.IOException"]);
        let lb: LoadBalance =
            serde_json::from_value(json!({"round_robin_load_balancer": null})).unwrap();
        assert!(lb.round_robin_load_balancer.is_some());
        let lb: LoadBalance = serde_json::from_value(json!({
            "stickyLoadBalancer": {"correlationExpression": {"simple": "${header.k}"}}
        }))
        .unwrap();
        assert!(lb.sticky_load_balancer.is_some());
    }

    #[test]
    fn builder_values_read_back() {
        for lb in [
            LoadBalance::round_robin(),
            LoadBalance::random(),
            LoadBalance::weighted(&[2, 1]).weighted_round_robin(),
            LoadBalance::sticky(ExpressionDefinition::new("header", "k")),
            LoadBalance::topic(),
            LoadBalance::failover_with(
                FailoverBalancer::default()
                    .exception("IOException")
                    .maximum_failover_attempts(2)
                    .round_robin(true),
            ),
            LoadBalance::custom("mine"),
        ] {
            let back: LoadBalance =
                serde_json::from_value(serde_json::to_value(&lb).unwrap()).unwrap();
            assert_eq!(back, lb);
        }
    }

    #[test]
    fn misspelt_option_is_refused() {
        let e = serde_json::from_value::<LoadBalance>(json!({
            "failoverLoadBalancer": {"maximumFailoverAttempt": 3}
        }))
        .unwrap_err();
        assert!(e.to_string().contains("maximumFailoverAttempt"), "{e}");
    }
}
