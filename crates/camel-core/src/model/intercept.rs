//! Camel's interceptors (ADR 0090): `intercept` (before every step), `intercept_from`
//! (before a route's first step) and `intercept_send_to_endpoint` (around `to` steps),
//! written at the top of a file or in a `routeConfiguration`.
//!
//! As in Camel's YAML DSL, a condition is a `when` written as the first step; `stop`
//! among the steps ends the exchange's route.
//!
//! ```
//! use camel_core::model::intercept::uri_matches;
//! assert!(uri_matches("mock:*", "mock:orders"));
//! assert!(uri_matches("direct:a", "direct:a?timeout=5"));
//! assert!(!uri_matches("direct:a", "direct:ab"));
//! ```

use serde::{Deserialize, Serialize};

use super::StepDefinition;

/// `intercept: {steps: [...]}`: runs its steps before every step of the routes it
/// applies to (nested steps included; its own steps are not intercepted).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InterceptDefinition {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// A free-text description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `true` leaves the interceptor out.
    #[serde(default)]
    pub disabled: bool,
    /// The steps; a first `when` step makes them conditional.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
}

/// `intercept_from: {uri: "jms:*", steps: [...]}` (or just the uri): runs its steps
/// before the first step of every route whose `from` uri matches (every route without
/// `uri`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InterceptFromDefinition {
    /// The `from` uri pattern: exact, with `*` wildcards, or without the query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// A free-text description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `true` leaves the interceptor out.
    #[serde(default)]
    pub disabled: bool,
    /// The steps; a first `when` step makes them conditional.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
}

/// `intercept_send_to_endpoint: {uri: "http:*", skip_send_to_original_endpoint: true,
/// after_uri: "log:sent", steps: [...]}`: around every `to` step whose uri matches.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InterceptSendToEndpointDefinition {
    /// The endpoint uri pattern: exact, with `*` wildcards, or without the query.
    pub uri: String,
    /// Do not send to the intercepted endpoint (when the `when` matched, if any).
    #[serde(default, alias = "skipSendToOriginalEndpoint")]
    pub skip_send_to_original_endpoint: Flag,
    /// Sent to after the intercepted endpoint (when the `when` matched, if any).
    #[serde(default, alias = "afterUri", skip_serializing_if = "Option::is_none")]
    pub after_uri: Option<String>,
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// A free-text description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `true` leaves the interceptor out.
    #[serde(default)]
    pub disabled: bool,
    /// The steps; a first `when` (or `when_skip_send_to_endpoint`) step makes them, the
    /// skip and the `after_uri` conditional.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
}

/// A boolean that Camel's schema types as text (`"true"`, or a resolved placeholder).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(from = "FlagInput")]
pub struct Flag(pub bool);

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
enum FlagInput {
    Bool(bool),
    Text(String),
}

impl From<FlagInput> for Flag {
    fn from(input: FlagInput) -> Self {
        match input {
            FlagInput::Bool(b) => Flag(b),
            FlagInput::Text(t) => Flag(t.trim().eq_ignore_ascii_case("true")),
        }
    }
}

/// The interceptors that apply to one route, each with the JSON pointer it was written
/// at (for located errors).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RouteIntercepts {
    /// `intercept`s, in declaration order.
    pub intercept: Vec<(InterceptDefinition, String)>,
    /// `intercept_from`s, in declaration order.
    pub intercept_from: Vec<(InterceptFromDefinition, String)>,
    /// `intercept_send_to_endpoint`s, in declaration order.
    pub intercept_send_to_endpoint: Vec<(InterceptSendToEndpointDefinition, String)>,
}

impl RouteIntercepts {
    /// True when no interceptor applies.
    pub fn is_empty(&self) -> bool {
        self.intercept.is_empty()
            && self.intercept_from.is_empty()
            && self.intercept_send_to_endpoint.is_empty()
    }

    /// Adds `other`'s interceptors after this one's.
    pub fn extend(&mut self, other: &RouteIntercepts) {
        self.intercept.extend(other.intercept.iter().cloned());
        self.intercept_from
            .extend(other.intercept_from.iter().cloned());
        self.intercept_send_to_endpoint
            .extend(other.intercept_send_to_endpoint.iter().cloned());
    }
}

/// Camel's endpoint matching for interceptors: the uri itself, the uri without its query
/// (`direct:a` matches `direct:a?x=1`), or a pattern with `*` wildcards (`mock:*`).
/// Camel also takes a regular expression here; camel-rs does not.
pub fn uri_matches(pattern: &str, uri: &str) -> bool {
    let pattern = pattern.trim();
    if pattern == uri {
        return true;
    }
    let without_query = uri.split_once('?').map_or(uri, |(base, _)| base);
    if pattern == without_query {
        return true;
    }
    pattern.contains('*') && (glob(pattern, uri) || glob(pattern, without_query))
}

/// `*` matches any run of characters; everything else matches itself (also the
/// `routeConfigurationId` patterns).
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            let Some(tail) = text.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len())
                .filter(|i| tail.is_char_boundary(*i))
                .any(|i| glob(rest, &tail[i..]))
        }
    }
}

/// Splits steps written Camel's way, `[{when: {simple: …, steps: [a]}}, b]`, into the
/// condition (the `when` step's configuration without its steps) and the steps
/// (`[a, b]`). Without a first `when`, there is no condition.
pub fn split_when(steps: &[StepDefinition]) -> (Option<serde_json::Value>, Vec<StepDefinition>) {
    let Some(first) = steps.first() else {
        return (None, Vec::new());
    };
    if !matches!(first.name.as_str(), "when" | "when_skip_send_to_endpoint") {
        return (None, steps.to_vec());
    }
    let mut condition = first.config.clone();
    let mut body: Vec<StepDefinition> = Vec::new();
    if let serde_json::Value::Object(map) = &mut condition {
        if let Some(nested) = map.remove("steps") {
            if let Ok(nested) = serde_json::from_value::<Vec<StepDefinition>>(nested) {
                body.extend(nested);
            }
        }
    }
    body.extend(steps[1..].iter().cloned());
    (Some(condition), body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn uri_patterns_match_as_in_camel() {
        assert!(uri_matches("*", "anything:x"));
        assert!(uri_matches("http*", "https://a/b"));
        assert!(uri_matches("mock:a*z", "mock:abcz"));
        assert!(!uri_matches("mock:a*z", "mock:abc"));
        assert!(uri_matches("direct:a", "direct:a?x=1"));
        assert!(!uri_matches("direct:a?x=2", "direct:a?x=1"));
    }

    #[test]
    fn a_first_when_is_the_condition_and_later_steps_join_its_body() {
        let steps = vec![
            StepDefinition::new(
                "when",
                json!({"simple": "${body} == 'x'", "steps": [{"to": "mock:a"}]}),
            ),
            StepDefinition::new("to", json!("mock:b")),
        ];
        let (condition, body) = split_when(&steps);
        assert_eq!(condition, Some(json!({"simple": "${body} == 'x'"})));
        assert_eq!(
            body.iter().map(|s| s.config.clone()).collect::<Vec<_>>(),
            vec![json!("mock:a"), json!("mock:b")]
        );
        let (none, same) = split_when(&steps[1..]);
        assert!(none.is_none());
        assert_eq!(same.len(), 1);
    }

    #[test]
    fn skip_takes_text_or_boolean() {
        let d: InterceptSendToEndpointDefinition =
            serde_json::from_value(json!({"uri": "x", "skipSendToOriginalEndpoint": "true"}))
                .unwrap();
        assert!(d.skip_send_to_original_endpoint.0);
        let d: InterceptSendToEndpointDefinition =
            serde_json::from_value(json!({"uri": "x", "skip_send_to_original_endpoint": false}))
                .unwrap();
        assert!(!d.skip_send_to_original_endpoint.0);
    }
}
