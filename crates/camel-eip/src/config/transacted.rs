//! `transacted`.

use camel_api::definition::{StepConfig, StepDefinition};
use serde::{Deserialize, Serialize};

/// `transacted: {datasource: URL, steps: [...]}`: the nested steps share one database
/// transaction, committed when they all succeed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Transacted {
    /// The database (a component's default database when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datasource: Option<String>,
    /// The steps run in the transaction.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
}

impl StepConfig for Transacted {
    const NAME: &'static str = "transacted";
}
