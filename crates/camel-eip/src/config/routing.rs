//! `filter` and `choice`.

use camel_api::definition::{StepConfig, StepDefinition};
use camel_api::expression_config;
use serde::{Deserialize, Deserializer, Serialize};

expression_config! {
    /// `filter: {simple: "…", steps: [...]}`: the steps run only when the predicate holds.
    pub struct Filter {
        /// The steps run on a match.
        #[serde(default)]
        pub steps: Vec<StepDefinition>,
    }
}

impl StepConfig for Filter {
    const NAME: &'static str = "filter";
}

/// `choice: {when: [{simple: "…", steps: [...]}, …], otherwise: {steps: [...]}}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Choice {
    /// The branches, tested in order; the first match runs.
    pub when: Vec<When>,
    /// The branch run when no `when` matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otherwise: Option<Otherwise>,
    /// Camel's `precondition`: the branch is chosen once, when the route is built, from
    /// predicates that read only properties and Kamelet parameters (the catalog's
    /// `${propertiesExist:…}` tests), and only that branch is built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition: Option<bool>,
}

impl StepConfig for Choice {
    const NAME: &'static str = "choice";
}

expression_config! {
    /// One branch of a `choice`: a predicate and its steps.
    pub struct When {
        /// The steps run when the predicate holds.
        #[serde(default)]
        pub steps: Vec<StepDefinition>,
    }
}

/// The `otherwise` branch: `{steps: [...]}`, or the list itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Otherwise {
    /// The steps.
    pub steps: Vec<StepDefinition>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OtherwiseMap {
    #[serde(default)]
    steps: Vec<StepDefinition>,
}

impl<'de> Deserialize<'de> for Otherwise {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let steps = match serde_json::Value::deserialize(d)? {
            list @ serde_json::Value::Array(_) => {
                Vec::<StepDefinition>::deserialize(list).map_err(D::Error::custom)?
            }
            serde_json::Value::Null => Vec::new(),
            map => {
                OtherwiseMap::deserialize(map)
                    .map_err(D::Error::custom)?
                    .steps
            }
        };
        Ok(Otherwise { steps })
    }
}
