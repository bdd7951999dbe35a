//! The `bean` step's configuration and a file's top-level `beans:` entries (ADR 0076).

use camel_api::definition::StepConfig;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use crate::error::Location;

/// `bean: {ref: name, method: m}`: calls a method of a bean registered in Rust
/// ([`CamelContext::register_bean`](crate::CamelContext::register_bean)), or of one
/// built from a registered bean type (`bean_type`). Camel's `scope` is read and ignored:
/// a bean here is one shared object, Camel's `Singleton`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields)]
pub struct BeanStep {
    /// The name the bean is registered under (`#bean:name` and `#name` read the same).
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The method to call; the bean's default method when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// A registered bean type to build a bean from (without properties), instead of `ref`.
    #[serde(
        default,
        alias = "beanType",
        alias = "type",
        skip_serializing_if = "Option::is_none"
    )]
    pub bean_type: Option<String>,
    /// Camel's bean scope (`Singleton`, `Request`, `Prototype`): accepted, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl BeanStep {
    /// A call of the default method of the bean registered as `name`.
    pub fn reference(name: impl Into<String>) -> Self {
        BeanStep {
            reference: Some(name.into()),
            ..Default::default()
        }
    }

    /// Names the method to call.
    pub fn method(mut self, method: impl Into<String>) -> Self {
        self.method = Some(method.into());
        self
    }
}

impl StepConfig for BeanStep {
    const NAME: &'static str = "bean";

    /// `bean: name`, as Camel's Kamelets and KameletMain routes write it: the bean
    /// registered under `name` (a Java class name is refused where beans are looked up).
    fn from_scalar(text: &str) -> Option<Self> {
        Some(BeanStep::reference(text))
    }
}

/// One entry of a file's top-level `- beans:` list: a bean built when the file's routes are
/// added, from the bean type registered in Rust under `bean_type`, with `properties`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BeanDefinition {
    /// The name routes call it by.
    pub name: String,
    /// The registered bean type (Camel's `type`; a `#class:` prefix is dropped).
    pub bean_type: String,
    /// The properties the bean type's factory is given, as written.
    pub properties: Map<String, Json>,
    /// Where `type` was written, for errors.
    pub location: Option<Location>,
    /// Refused when its file was read (a bean Camel builds in the JVM), with its error
    /// reported there: steps that name it report nothing more, and it is never built.
    pub refused: bool,
}

/// The bean name in a reference: Camel writes `#bean:name` or `#name` where an option
/// takes a bean, and plain `name` in a `ref`.
pub fn bean_name(reference: &str) -> &str {
    let r = reference.trim();
    r.strip_prefix("#bean:")
        .or_else(|| r.strip_prefix('#'))
        .unwrap_or(r)
}

/// True when `name` reads as a Java class (`com.acme.Greeter`, `#class:com.acme.Greeter`,
/// `#type:…`): something only a JVM could build.
pub fn looks_like_java_class(name: &str) -> bool {
    let name = name.trim();
    name.starts_with("#class:")
        || name.starts_with("#type:")
        || (name.contains('.') && !name.contains(char::is_whitespace))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_and_java_names() {
        assert_eq!(bean_name("#bean:greeter"), "greeter");
        assert_eq!(bean_name("#greeter"), "greeter");
        assert_eq!(bean_name(" greeter "), "greeter");
        assert!(looks_like_java_class("com.acme.Greeter"));
        assert!(looks_like_java_class("#class:Greeter"));
        assert!(!looks_like_java_class("counter"));
    }

    #[test]
    fn the_step_reads_camel_spellings() {
        let s: BeanStep = serde_json::from_value(
            serde_json::json!({"ref": "g", "method": "hi", "scope": "Singleton"}),
        )
        .unwrap();
        assert_eq!(
            s,
            BeanStep {
                scope: Some("Singleton".into()),
                ..BeanStep::reference("g").method("hi")
            }
        );
        let s: BeanStep =
            serde_json::from_value(serde_json::json!({"beanType": "counter"})).unwrap();
        assert_eq!(s.bean_type.as_deref(), Some("counter"));
        assert!(serde_json::from_value::<BeanStep>(serde_json::json!({"reff": "g"})).is_err());
    }
}
