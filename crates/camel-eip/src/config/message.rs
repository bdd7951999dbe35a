//! `set_header`, `set_property`, `set_body`/`transform`, `remove_*`, `stop` and `log`.

use camel_api::definition::StepConfig;
use camel_api::expression_config;
use serde::{Deserialize, Serialize};

expression_config! {
    /// `set_header: {name: x, simple: "…"}`.
    pub struct SetHeader {
        /// The header to set.
        pub name: String,
    }
}

impl StepConfig for SetHeader {
    const NAME: &'static str = "set_header";
}

/// `set_headers: {headers: [{name: a, simple: "…"}, {name: b, constant: x}]}`: several
/// headers at once, set in order (a later expression sees the earlier headers).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetHeaders {
    /// The headers to set.
    pub headers: Vec<SetHeader>,
}

impl StepConfig for SetHeaders {
    const NAME: &'static str = "set_headers";
}

expression_config! {
    /// `set_property: {name: x, simple: "…"}`.
    pub struct SetProperty {
        /// The exchange property to set.
        pub name: String,
    }
}

impl StepConfig for SetProperty {
    const NAME: &'static str = "set_property";
}

expression_config! {
    /// `set_body: {simple: "…"}` (and `transform`, which Camel keeps as a second name).
    pub struct SetBody {}
}

impl StepConfig for SetBody {
    const NAME: &'static str = "set_body";
}

/// `remove_header: {name: x}` or `remove_header: x`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveHeader {
    /// The header to remove.
    pub name: String,
}

impl StepConfig for RemoveHeader {
    const NAME: &'static str = "remove_header";

    fn from_scalar(text: &str) -> Option<Self> {
        Some(RemoveHeader { name: text.into() })
    }
}

/// `remove_headers: {pattern: "Camel*"}` or `remove_headers: "Camel*"`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveHeaders {
    /// A wildcard pattern (`*` any run, `?` one character).
    pub pattern: String,
}

impl StepConfig for RemoveHeaders {
    const NAME: &'static str = "remove_headers";

    fn from_scalar(text: &str) -> Option<Self> {
        Some(RemoveHeaders {
            pattern: text.into(),
        })
    }
}

/// `remove_property: {name: x}` or `remove_property: x`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveProperty {
    /// The exchange property to remove.
    pub name: String,
}

impl StepConfig for RemoveProperty {
    const NAME: &'static str = "remove_property";

    fn from_scalar(text: &str) -> Option<Self> {
        Some(RemoveProperty { name: text.into() })
    }
}

/// `stop` (no options).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Stop {}

impl StepConfig for Stop {
    const NAME: &'static str = "stop";
}

/// `log: "text ${body}"` or `log: {message, logging_level, log_name, marker, log_language}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Log {
    /// A `simple` template.
    pub message: String,
    /// TRACE, DEBUG, INFO (default), WARN or ERROR.
    #[serde(
        default,
        alias = "loggingLevel",
        skip_serializing_if = "Option::is_none"
    )]
    pub logging_level: Option<String>,
    /// The logger name (the route id by default).
    #[serde(default, alias = "logName", skip_serializing_if = "Option::is_none")]
    pub log_name: Option<String>,
    /// An SLF4J marker in Camel: here a `marker` field on the log event, for filtering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker: Option<String>,
    /// The language of `message` (`simple` by default).
    #[serde(
        default,
        alias = "logLanguage",
        skip_serializing_if = "Option::is_none"
    )]
    pub log_language: Option<String>,
    /// Camel's reference to a Java logger bean: refused with a message (use `log_name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
}

impl StepConfig for Log {
    const NAME: &'static str = "log";

    fn from_scalar(text: &str) -> Option<Self> {
        Some(Log {
            message: text.into(),
            ..Default::default()
        })
    }
}
