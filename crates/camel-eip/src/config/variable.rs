//! `set_variable`, `set_variables`, `remove_variable` and `convert_variable_to`.

use camel_api::definition::StepConfig;
use camel_api::expression_config;
use serde::{Deserialize, Serialize};

expression_config! {
    /// `set_variable: {name: x, simple: "…"}`; `global:x` names a process-wide variable.
    pub struct SetVariable {
        /// The variable to set.
        pub name: String,
    }
}

impl StepConfig for SetVariable {
    const NAME: &'static str = "set_variable";
}

/// `set_variables: {variables: [{name: a, simple: "…"}, …]}`: several at once, in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetVariables {
    /// The variables to set.
    pub variables: Vec<SetVariable>,
}

impl StepConfig for SetVariables {
    const NAME: &'static str = "set_variables";
}

/// `remove_variable: {name: x}` or `remove_variable: x`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveVariable {
    /// The variable to remove.
    pub name: String,
}

impl StepConfig for RemoveVariable {
    const NAME: &'static str = "remove_variable";

    fn from_scalar(text: &str) -> Option<Self> {
        Some(RemoveVariable { name: text.into() })
    }
}

/// `convert_variable_to: {name: x, type: Integer}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConvertVariableTo {
    /// The variable to convert.
    pub name: String,
    /// `String`, `Integer`/`Long`, `Double`/`Float` or `Boolean` (Java names accepted).
    #[serde(rename = "type")]
    pub to: String,
}

impl StepConfig for ConvertVariableTo {
    const NAME: &'static str = "convert_variable_to";
}
