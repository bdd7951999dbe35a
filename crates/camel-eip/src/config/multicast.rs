//! `multicast` and its parallel alias `scatter_gather`.

use camel_api::definition::{StepConfig, StepDefinition};
use serde::{Deserialize, Serialize};

pub use crate::multicast::AggregationStrategy as Strategy;
use crate::multicast::MulticastConfig;

/// `multicast: {parallel: true, strategy: collect_all, steps: [...]}`: every step of
/// `steps` is a branch that gets a copy of the exchange.
///
/// ```
/// use camel_eip::config::{Multicast, Strategy};
/// let m = Multicast::parallel().strategy(Strategy::CollectAll);
/// assert!(m.parallel);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields)]
pub struct Multicast {
    /// Run the branches concurrently (Camel's `parallelProcessing`). Default false.
    #[serde(default, alias = "parallelProcessing", alias = "parallel_processing")]
    pub parallel: bool,
    /// How the branch results become one exchange (Camel's `aggregationStrategy`).
    #[serde(default, alias = "aggregationStrategy", alias = "aggregation_strategy")]
    pub strategy: Strategy,
    /// The branches, one per step.
    pub steps: Vec<StepDefinition>,
}

impl Multicast {
    /// Branches run one after another.
    pub fn sequential() -> Self {
        Multicast::default()
    }

    /// Branches run concurrently.
    pub fn parallel() -> Self {
        Multicast {
            parallel: true,
            ..Default::default()
        }
    }

    /// How the results are combined (default [`Strategy::LastWins`]).
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// The options the multicast service takes.
    pub fn options(&self) -> MulticastConfig {
        MulticastConfig {
            parallel: self.parallel,
            strategy: self.strategy,
        }
    }
}

impl StepConfig for Multicast {
    const NAME: &'static str = "multicast";
}
