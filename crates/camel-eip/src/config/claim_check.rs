//! `claim_check` (ADR 0062).

use camel_api::definition::StepConfig;
use serde::{Deserialize, Serialize};

/// `claim_check: {operation: Set, key: "${header.orderId}", filter: "body,header:x"}`:
/// parks the message in the context's claim-check store and takes it back later.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimCheck {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// What to do.
    pub operation: ClaimCheckOperation,
    /// The claim's key, a `simple` template (`Set`, `Get`, `GetAndRemove`; ignored by
    /// `Push` and `Pop`, which use the exchange's own stack).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// What `Get`, `GetAndRemove` and `Pop` merge back: `body`, `headers`,
    /// `header:name` (`*` at the end matches a prefix), each optionally `-` (exclude) or
    /// `+`, comma-separated. Default: the body and every header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
}

impl StepConfig for ClaimCheck {
    const NAME: &'static str = "claim_check";
}

impl ClaimCheck {
    /// A claim check doing `operation` under `key`.
    pub fn new(operation: ClaimCheckOperation, key: Option<&str>) -> Self {
        ClaimCheck {
            operation,
            key: key.map(str::to_string),
            ..Default::default()
        }
    }

    /// What is merged back.
    pub fn filter(mut self, filter: impl Into<String>) -> Self {
        self.filter = Some(filter.into());
        self
    }
}

/// Camel's claim-check operations (spelled as Camel does, or in snake_case).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(transform = camel_api::schema::serde_variants::<Self>)]
pub enum ClaimCheckOperation {
    /// Stores the message under the key, replacing what was there.
    #[default]
    #[serde(alias = "set")]
    Set,
    /// Merges the stored message back, leaving it stored.
    #[serde(alias = "get")]
    Get,
    /// Merges the stored message back and removes it.
    #[serde(alias = "get_and_remove", alias = "getAndRemove")]
    GetAndRemove,
    /// Pushes the message on the exchange's stack.
    #[serde(alias = "push")]
    Push,
    /// Pops the exchange's stack and merges what it held back.
    #[serde(alias = "pop")]
    Pop,
}
