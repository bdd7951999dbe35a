//! Multicast options, as the route model embeds them.

use serde::{Deserialize, Serialize};

/// How a multicast runs its branches and combines their results.
///
/// Unknown keys are not refused here so the route model can flatten this next to the
/// step's `steps`; the model's own `deny_unknown_fields` catches typos.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MulticastConfig {
    /// Run the branches concurrently instead of one after another. Default false.
    #[serde(default, alias = "parallelProcessing", alias = "parallel_processing")]
    pub parallel: bool,
    /// How the branch results become one exchange. Default [`AggregationStrategy::LastWins`].
    #[serde(default, alias = "aggregationStrategy", alias = "aggregation_strategy")]
    pub strategy: AggregationStrategy,
}

/// How the results of a multicast's branches are combined.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AggregationStrategy {
    /// The result of the last branch (in declaration order, also when parallel).
    #[default]
    #[serde(alias = "lastWins")]
    LastWins,
    /// The incoming exchange with a JSON array body: one element per branch, in
    /// declaration order. A JSON body is taken as is, text as a string, bytes as lossy
    /// UTF-8 text, an empty body as `null`.
    #[serde(alias = "collectAll")]
    CollectAll,
    /// The incoming exchange, unchanged: the branches only have side effects.
    Original,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_spellings_and_defaults() {
        let c: MulticastConfig = serde_json::from_value(serde_json::json!({
            "parallelProcessing": true, "aggregationStrategy": "collectAll"
        }))
        .unwrap();
        assert_eq!(
            c,
            MulticastConfig {
                parallel: true,
                strategy: AggregationStrategy::CollectAll
            }
        );
        let d: MulticastConfig = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!(d, MulticastConfig::default());
        assert_eq!(d.strategy, AggregationStrategy::LastWins);
    }
}
