//! `validate`, `set_exchange_pattern`, `step` and `convert_header_to`.

use camel_api::definition::{StepConfig, StepDefinition};
use camel_api::{expression_config, ExchangePattern};
use serde::{Deserialize, Serialize};

use super::errors::number;

expression_config! {
    /// `validate: {simple: "${body} != null"}`: fails the exchange with a
    /// `PredicateValidationException` when the predicate does not hold.
    pub struct Validate {}
}

impl StepConfig for Validate {
    const NAME: &'static str = "validate";
}

/// An exchange pattern as Camel writes it.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(transform = camel_api::schema::serde_variants::<Self>)]
pub enum Pattern {
    /// Fire and forget.
    #[default]
    #[serde(rename = "InOnly", alias = "in_only", alias = "IN_ONLY")]
    InOnly,
    /// Request-reply.
    #[serde(rename = "InOut", alias = "in_out", alias = "IN_OUT")]
    InOut,
}

impl From<Pattern> for ExchangePattern {
    fn from(p: Pattern) -> Self {
        match p {
            Pattern::InOnly => ExchangePattern::InOnly,
            Pattern::InOut => ExchangePattern::InOut,
        }
    }
}

impl From<ExchangePattern> for Pattern {
    fn from(p: ExchangePattern) -> Self {
        match p {
            ExchangePattern::InOnly => Pattern::InOnly,
            ExchangePattern::InOut => Pattern::InOut,
        }
    }
}

/// `set_exchange_pattern: {pattern: InOut}` or `set_exchange_pattern: InOut`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetExchangePattern {
    /// `InOnly` or `InOut`.
    pub pattern: Pattern,
}

impl StepConfig for SetExchangePattern {
    const NAME: &'static str = "set_exchange_pattern";

    fn from_scalar(text: &str) -> Option<Self> {
        let pattern = serde_json::from_value(serde_json::Value::String(text.into())).ok()?;
        Some(SetExchangePattern { pattern })
    }
}

/// `step: {id: name, steps: [...]}`: a named group of steps (its `id` names it in errors,
/// spans and paths).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Camel's `inheritErrorHandler`: accepted; the route's error handler wraps the whole
    /// step either way (ADR 0052).
    #[serde(
        default,
        alias = "inheritErrorHandler",
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub inherit_error_handler: Option<bool>,
    /// The grouped steps.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
}

impl StepConfig for Step {
    const NAME: &'static str = "step";
}

/// `convert_header_to: {name: amount, type: Integer, to_name, mandatory, charset}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConvertHeaderTo {
    /// The header to convert.
    pub name: String,
    /// `String`, `Integer`/`Long`, `Double`/`Float`, `Boolean` or `byte[]` (Java names
    /// accepted).
    #[serde(rename = "type")]
    pub to: String,
    /// Store the result in this header instead (the source header is left as it was).
    #[serde(default, alias = "toName", skip_serializing_if = "Option::is_none")]
    pub to_name: Option<String>,
    /// A value that cannot be converted fails the exchange (true, Camel's default); false
    /// removes the header instead. A missing header is left missing either way.
    #[serde(
        default,
        deserialize_with = "number",
        skip_serializing_if = "Option::is_none"
    )]
    pub mandatory: Option<bool>,
    /// How bytes become text and text becomes bytes: `UTF-8` (default) or `ISO-8859-1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charset: Option<String>,
}

impl StepConfig for ConvertHeaderTo {
    const NAME: &'static str = "convert_header_to";
}

#[cfg(test)]
mod tests {
    use super::*;
    use camel_api::definition::WithExpression;
    use serde_json::json;

    #[test]
    fn shapes_read() {
        let v: Validate = serde_json::from_value(json!({"simple": "${body} != null"})).unwrap();
        assert_eq!(v.expression().unwrap().1.language, "simple");
        let p: SetExchangePattern = serde_json::from_value(json!({"pattern": "InOut"})).unwrap();
        assert_eq!(p.pattern, Pattern::InOut);
        assert_eq!(
            SetExchangePattern::from_scalar("InOnly").unwrap().pattern,
            Pattern::InOnly
        );
        assert!(SetExchangePattern::from_scalar("OutIn").is_none());
        let c: ConvertHeaderTo = serde_json::from_value(json!({
            "name": "n", "type": "java.lang.Integer", "toName": "m", "mandatory": "false", "charset": "UTF-8"
        }))
        .unwrap();
        assert_eq!(c.to_name.as_deref(), Some("m"));
        assert_eq!(c.mandatory, Some(false));
        let s: Step = serde_json::from_value(json!({"steps": [{"to": "log:x"}]})).unwrap();
        assert_eq!(s.steps.len(), 1);
    }
}
