//! Multicast options, as the route model embeds them.

use serde::{Deserialize, Serialize};

/// How a multicast runs its branches and combines their results.
///
/// Unknown keys are not refused here so the route model can flatten this next to the
/// step's `steps`; the model's own `deny_unknown_fields` catches typos.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
pub struct MulticastConfig {
    /// Run the branches concurrently instead of one after another. Default false.
    #[serde(default, alias = "parallelProcessing", alias = "parallel_processing")]
    pub parallel: bool,
    /// How the branch results become one exchange. Default [`AggregationStrategy::LastWins`].
    #[serde(default, alias = "aggregationStrategy", alias = "aggregation_strategy")]
    pub strategy: AggregationStrategy,
}

/// How the results of a multicast's branches are combined. Read from our names
/// (`last_wins`, `collect_all`, `original`, camelCase too) or from the Camel strategies
/// they are (`UseLatestAggregationStrategy`, `GroupedBodyAggregationStrategy`,
/// `UseOriginalAggregationStrategy`, with or without package and `#class:`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AggregationStrategy {
    /// The result of the last branch (in declaration order, also when parallel).
    #[default]
    LastWins,
    /// The incoming exchange with a JSON array body: one element per branch, in
    /// declaration order. A JSON body is taken as is, text as a string, bytes as lossy
    /// UTF-8 text, an empty body as `null`.
    CollectAll,
    /// The incoming exchange, unchanged: the branches only have side effects.
    Original,
}

impl AggregationStrategy {
    /// The strategy `name` names, if any.
    pub fn parse(name: &str) -> Option<Self> {
        let name = name.trim();
        let name = name.strip_prefix("#class:").unwrap_or(name);
        let name = name.rsplit('.').next().unwrap_or(name);
        let name = name.strip_suffix("AggregationStrategy").unwrap_or(name);
        let key: String = name
            .chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect();
        match key.as_str() {
            "lastwins" | "uselatest" | "latest" => Some(AggregationStrategy::LastWins),
            "collectall" | "groupedbody" => Some(AggregationStrategy::CollectAll),
            "original" | "useoriginal" => Some(AggregationStrategy::Original),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for AggregationStrategy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        AggregationStrategy::parse(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown multicast strategy `{name}` (last_wins, collect_all, original, or \
                 Camel's UseLatest, GroupedBody and UseOriginal AggregationStrategy; a \
                 registered strategy is not supported on multicast yet)"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_strategy_classes() {
        for (name, s) in [
            (
                "#class:org.apache.camel.processor.aggregate.GroupedBodyAggregationStrategy",
                AggregationStrategy::CollectAll,
            ),
            (
                "UseLatestAggregationStrategy",
                AggregationStrategy::LastWins,
            ),
            ("use_original", AggregationStrategy::Original),
            ("lastWins", AggregationStrategy::LastWins),
        ] {
            assert_eq!(AggregationStrategy::parse(name), Some(s), "{name}");
        }
        assert!(
            serde_json::from_value::<AggregationStrategy>(serde_json::json!("#bean:x")).is_err()
        );
    }

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
