//! `wire_tap` (ADR 0061).

use std::collections::BTreeMap;

use camel_api::definition::{StepConfig, StepDefinition};
use serde::{Deserialize, Deserializer, Serialize};

use super::dynamic::{flag, is_false, query_template};
use super::errors::number;

/// How many taps may wait for the tap's task when `queue_size` is not given.
pub const DEFAULT_TAP_QUEUE: usize = 1000;
/// How many taps are sent at once when `concurrency` is not given (Camel's default pool).
pub const DEFAULT_TAP_CONCURRENCY: usize = 10;

/// `wire_tap: "log:audit"` or `wire_tap: {uri, parameters, copy, on_prepare, …}`: a copy
/// of the exchange goes to the endpoint on the tap's own task; the route carries on at
/// once with the exchange unchanged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WireTap {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The endpoint (a `simple` template unless `dynamic_uri: false`).
    pub uri: String,
    /// Parameters appended to the URI as its query.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, serde_json::Value>,
    /// Tap a copy of the whole exchange (default); `false`: a new exchange with the
    /// message only (no properties, no variables).
    #[serde(
        default,
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub copy: Option<bool>,
    /// Runs on the tapped copy before it is sent, on the tap's task: a processor
    /// registered under a name (Camel's `#ref`), or a list of steps.
    #[serde(default, alias = "onPrepare", skip_serializing_if = "Option::is_none")]
    pub on_prepare: Option<OnPrepare>,
    /// Evaluate the URI per exchange (default true).
    #[serde(
        default,
        alias = "dynamicUri",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub dynamic_uri: Option<bool>,
    /// How many resolved endpoints to keep (default 1000; −1: none).
    #[serde(
        default,
        alias = "cacheSize",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub cache_size: Option<i64>,
    /// Drop (and count) a tap whose URI names no endpoint instead of logging an error.
    #[serde(
        default,
        alias = "ignoreInvalidEndpoint",
        deserialize_with = "flag",
        skip_serializing_if = "is_false"
    )]
    pub ignore_invalid_endpoint: bool,
    /// Not in Camel: how many taps may wait for the tap's task (default 1000). When full,
    /// a new tap is dropped and counted; the main exchange is never held or failed.
    #[serde(
        default,
        alias = "queueSize",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub queue_size: Option<usize>,
    /// Not in Camel (its `executorService`): taps sent at once (default 10).
    #[serde(
        default,
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub concurrency: Option<usize>,
}

impl StepConfig for WireTap {
    const NAME: &'static str = "wire_tap";

    fn from_scalar(text: &str) -> Option<Self> {
        Some(WireTap::new(text))
    }
}

impl WireTap {
    /// A wire tap to `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        WireTap {
            uri: uri.into(),
            ..Default::default()
        }
    }

    /// Tap a new exchange carrying only the message.
    pub fn no_copy(mut self) -> Self {
        self.copy = Some(false);
        self
    }

    /// The tap queue's bound.
    pub fn queue_size(mut self, size: usize) -> Self {
        self.queue_size = Some(size);
        self
    }

    /// Taps sent at once.
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = Some(n);
        self
    }

    /// A processor registered under `name` prepares each tap.
    pub fn on_prepare_ref(mut self, name: impl Into<String>) -> Self {
        self.on_prepare = Some(OnPrepare::Ref(name.into()));
        self
    }

    /// The URI template with the parameters appended.
    pub fn template(&self) -> String {
        query_template(&self.uri, &self.parameters)
    }
}

/// What prepares a tapped copy.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum OnPrepare {
    /// A processor registered under this name (a leading `#` or `#bean:` is ignored).
    Ref(String),
    /// Steps, compiled with the route.
    Steps(Vec<StepDefinition>),
}

impl<'de> Deserialize<'de> for OnPrepare {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) => {
                let name = s.trim();
                let name = name
                    .strip_prefix("#bean:")
                    .or_else(|| name.strip_prefix('#'));
                Ok(OnPrepare::Ref(name.unwrap_or(s.trim()).to_string()))
            }
            list @ serde_json::Value::Array(_) => Vec::<StepDefinition>::deserialize(list)
                .map(OnPrepare::Steps)
                .map_err(D::Error::custom),
            _ => Err(D::Error::custom(
                "`on_prepare` is a processor name or a list of steps",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes() {
        let w: WireTap = serde_json::from_value(json!({
            "uri": "seda:audit", "copy": "false", "onPrepare": "#bean:prep",
            "queueSize": 5, "dynamicUri": false
        }))
        .unwrap();
        assert_eq!(w.copy, Some(false));
        assert_eq!(w.on_prepare, Some(OnPrepare::Ref("prep".into())));
        assert_eq!(w.queue_size, Some(5));
        let w: WireTap = serde_json::from_value(json!({
            "uri": "log:a", "on_prepare": [{"set_header": {"name": "a", "constant": "1"}}]
        }))
        .unwrap();
        assert!(matches!(w.on_prepare, Some(OnPrepare::Steps(ref s)) if s[0].name == "set_header"));
        assert!(
            serde_json::from_value::<WireTap>(json!({"uri": "log:a", "on_prepare": 3})).is_err()
        );
    }
}
