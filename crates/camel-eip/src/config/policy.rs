//! `policy`.

use camel_api::definition::{StepConfig, StepDefinition};
use serde::{Deserialize, Serialize};

use super::errors::number;

/// `policy: {ref: name, steps: [...]}`: the nested steps wrapped by the policy registered
/// under `name` (Camel's Policy EIP; see `camel_eip::policy`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// The name the policy is registered under (`#name` and `#bean:name` are read as
    /// `name`).
    #[serde(rename = "ref")]
    pub reference: String,
    /// Camel's `inheritErrorHandler`: accepted; the route's error handler wraps the whole
    /// step either way (ADR 0052).
    #[serde(
        default,
        alias = "inheritErrorHandler",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub inherit_error_handler: Option<bool>,
    /// The wrapped steps.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
}

impl StepConfig for Policy {
    const NAME: &'static str = "policy";
}
