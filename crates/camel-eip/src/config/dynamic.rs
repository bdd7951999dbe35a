//! Steps that send to endpoints named at run time: `recipient_list`, `routing_slip`,
//! `dynamic_router` and `to_d` (ADR 0060).

use std::collections::BTreeMap;
use std::time::Duration;

use camel_api::definition::{ExpressionDefinition, StepConfig, WithExpression};
use camel_api::expression_config;
use serde::{Deserialize, Deserializer, Serialize};

use super::errors::{millis, number};
use crate::dynamic::CacheSize;

/// A flag written as a boolean or as text (`"true"`), as Camel's schema allows.
pub(super) fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(number::<D, bool>(d)?.unwrap_or(false))
}

pub(super) fn is_false(b: &bool) -> bool {
    !*b
}

expression_config! {
    /// `recipient_list: {simple: "${header.to}", delimiter: ",", parallel_processing: true,
    /// …}`: the exchange goes to every endpoint the expression names, and the replies are
    /// combined by the aggregation strategy (the latest reply wins by default).
    pub struct RecipientList {
        /// Between two URIs in a text value (default `,`; `false`: do not split).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub delimiter: Option<String>,
        /// Send to all recipients at once instead of one after another.
        #[serde(default, alias = "parallelProcessing", deserialize_with = "flag", skip_serializing_if = "is_false")]
        pub parallel_processing: bool,
        /// Stop at the first failing recipient (the later ones are not sent to).
        #[serde(default, alias = "stopOnException", deserialize_with = "flag", skip_serializing_if = "is_false")]
        pub stop_on_exception: bool,
        /// Skip a URI that names no endpoint (unknown scheme, bad parameter) instead of
        /// failing the exchange.
        #[serde(default, alias = "ignoreInvalidEndpoints", deserialize_with = "flag", skip_serializing_if = "is_false")]
        pub ignore_invalid_endpoints: bool,
        /// A built-in strategy name or a `SharedStrategy` registered in the context.
        #[serde(default, alias = "aggregationStrategy", skip_serializing_if = "Option::is_none")]
        pub aggregation_strategy: Option<String>,
        /// Milliseconds (or `2s`) for all recipients together; the late ones are left
        /// out of the aggregation.
        #[serde(default, deserialize_with = "millis", skip_serializing_if = "Option::is_none")]
        pub timeout: Option<u64>,
        /// How many resolved endpoints to keep (default 1000; −1: none).
        #[serde(default, alias = "cacheSize", deserialize_with = "number", skip_serializing_if = "Option::is_none")]
        pub cache_size: Option<i64>,
    }
}

impl StepConfig for RecipientList {
    const NAME: &'static str = "recipient_list";
}

impl RecipientList {
    /// A recipient list over the URIs `e` evaluates to.
    pub fn new(e: ExpressionDefinition) -> Self {
        let mut c = RecipientList::default();
        c.set_expression(e);
        c
    }

    /// Sends to all recipients concurrently.
    pub fn parallel(mut self) -> Self {
        self.parallel_processing = true;
        self
    }

    /// Stops at the first failure.
    pub fn stop_on_exception(mut self) -> Self {
        self.stop_on_exception = true;
        self
    }

    /// Skips URIs that name no endpoint.
    pub fn ignore_invalid_endpoints(mut self) -> Self {
        self.ignore_invalid_endpoints = true;
        self
    }

    /// The separator between URIs.
    pub fn delimiter(mut self, delimiter: impl Into<String>) -> Self {
        self.delimiter = Some(delimiter.into());
        self
    }

    /// The aggregation strategy, by name.
    pub fn strategy(mut self, name: impl Into<String>) -> Self {
        self.aggregation_strategy = Some(name.into());
        self
    }

    /// The time all recipients have together.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout.as_millis() as u64);
        self
    }

    /// How many resolved endpoints to keep (−1: none).
    pub fn cache_size(mut self, size: i64) -> Self {
        self.cache_size = Some(size);
        self
    }

    /// The cache bound.
    pub fn cache(&self) -> CacheSize {
        CacheSize::from_option(self.cache_size)
    }
}

expression_config! {
    /// `routing_slip: {header: slip, uri_delimiter: ","}`: the exchange goes through each
    /// endpoint the expression names, in order, each one's reply feeding the next.
    pub struct RoutingSlip {
        /// Between two URIs (default `,`).
        #[serde(default, alias = "uriDelimiter", skip_serializing_if = "Option::is_none")]
        pub uri_delimiter: Option<String>,
        /// Skip a URI that names no endpoint instead of failing the exchange.
        #[serde(default, alias = "ignoreInvalidEndpoints", deserialize_with = "flag", skip_serializing_if = "is_false")]
        pub ignore_invalid_endpoints: bool,
        /// How many resolved endpoints to keep (default 1000; −1: none).
        #[serde(default, alias = "cacheSize", deserialize_with = "number", skip_serializing_if = "Option::is_none")]
        pub cache_size: Option<i64>,
    }
}

impl StepConfig for RoutingSlip {
    const NAME: &'static str = "routing_slip";
}

impl RoutingSlip {
    /// A routing slip over the URIs `e` evaluates to.
    pub fn new(e: ExpressionDefinition) -> Self {
        let mut c = RoutingSlip::default();
        c.set_expression(e);
        c
    }

    /// The separator between URIs.
    pub fn uri_delimiter(mut self, delimiter: impl Into<String>) -> Self {
        self.uri_delimiter = Some(delimiter.into());
        self
    }

    /// Skips URIs that name no endpoint.
    pub fn ignore_invalid_endpoints(mut self) -> Self {
        self.ignore_invalid_endpoints = true;
        self
    }
}

expression_config! {
    /// `dynamic_router: {simple: "…"}`: the expression is evaluated again after every
    /// hop (with `CamelSlipEndpoint` holding the endpoint just called) until it returns
    /// null or an empty text.
    pub struct DynamicRouter {
        /// Between two URIs of one answer (default `,`).
        #[serde(default, alias = "uriDelimiter", skip_serializing_if = "Option::is_none")]
        pub uri_delimiter: Option<String>,
        /// Skip a URI that names no endpoint instead of failing the exchange.
        #[serde(default, alias = "ignoreInvalidEndpoints", deserialize_with = "flag", skip_serializing_if = "is_false")]
        pub ignore_invalid_endpoints: bool,
        /// How many resolved endpoints to keep (default 1000; −1: none).
        #[serde(default, alias = "cacheSize", deserialize_with = "number", skip_serializing_if = "Option::is_none")]
        pub cache_size: Option<i64>,
    }
}

impl StepConfig for DynamicRouter {
    const NAME: &'static str = "dynamic_router";
}

impl DynamicRouter {
    /// A dynamic router asking `e` for the next endpoints.
    pub fn new(e: ExpressionDefinition) -> Self {
        let mut c = DynamicRouter::default();
        c.set_expression(e);
        c
    }
}

/// `to_d: "file:out/${header.dir}"` or `to_d: {uri, parameters, cache_size,
/// ignore_invalid_endpoint}`: a `to` whose URI is a `simple` template evaluated per
/// exchange.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToD {
    /// Camel's node id: accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The URI template (`simple` language).
    pub uri: String,
    /// Parameters appended to the URI as its query (their values are templates too).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, serde_json::Value>,
    /// How many resolved endpoints to keep (default 1000; −1: none).
    #[serde(
        default,
        alias = "cacheSize",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub cache_size: Option<i64>,
    /// Pass the exchange on unchanged when the URI names no endpoint.
    #[serde(
        default,
        alias = "ignoreInvalidEndpoint",
        deserialize_with = "flag",
        skip_serializing_if = "is_false"
    )]
    pub ignore_invalid_endpoint: bool,
    /// Splice the template's values into the URI as they are, instead of percent-encoded
    /// (our own option, not Camel's: a value can then add segments and options).
    #[serde(
        default,
        alias = "rawValues",
        deserialize_with = "flag",
        skip_serializing_if = "is_false"
    )]
    pub raw_values: bool,
}

impl StepConfig for ToD {
    const NAME: &'static str = "to_d";

    fn from_scalar(text: &str) -> Option<Self> {
        Some(ToD::new(text))
    }
}

impl ToD {
    /// A dynamic `to` over the template `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        ToD {
            uri: uri.into(),
            ..Default::default()
        }
    }

    /// The URI template with the parameters appended as its query.
    pub fn template(&self) -> String {
        query_template(&self.uri, &self.parameters)
    }
}

/// `uri` with `parameters` appended as `?k=v&…` (or `&…` when it has a query already).
pub(super) fn query_template(
    uri: &str,
    parameters: &BTreeMap<String, serde_json::Value>,
) -> String {
    let mut out = uri.to_string();
    for (i, (k, v)) in parameters.iter().enumerate() {
        let sep = if i == 0 && !uri.contains('?') {
            '?'
        } else {
            '&'
        };
        let value = match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => String::new(),
            other => other.to_string(),
        };
        out.push(sep);
        out.push_str(k);
        out.push('=');
        out.push_str(&value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn recipient_list_reads_camel_spellings() {
        let c: RecipientList = serde_json::from_value(json!({
            "header": "to", "delimiter": ";", "parallelProcessing": "true",
            "stopOnException": true, "ignoreInvalidEndpoints": true,
            "aggregationStrategy": "GroupedBodyAggregationStrategy",
            "timeout": "2s", "cacheSize": 5
        }))
        .unwrap();
        assert!(c.parallel_processing && c.stop_on_exception && c.ignore_invalid_endpoints);
        assert_eq!(c.delimiter.as_deref(), Some(";"));
        assert_eq!(c.timeout, Some(2000));
        assert_eq!(c.cache(), CacheSize::Bounded(5));
        assert_eq!(
            c.expression().unwrap().1,
            ExpressionDefinition::new("header", "to")
        );
        assert!(
            serde_json::from_value::<RecipientList>(json!({"header": "to", "paralel": true}))
                .is_err()
        );
    }

    #[test]
    fn to_d_template_appends_parameters() {
        let t: ToD = serde_json::from_value(json!({
            "uri": "file:out/${header.dir}", "parameters": {"fileName": "${header.n}.txt"}
        }))
        .unwrap();
        assert_eq!(
            t.template(),
            "file:out/${header.dir}?fileName=${header.n}.txt"
        );
        assert_eq!(ToD::from_scalar("log:x").unwrap().template(), "log:x");
    }
}
