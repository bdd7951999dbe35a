//! A [`ComponentContext`] with nothing in it, for building endpoints outside a running
//! context (examples, tools, tests) when the endpoint needs no expression language, no
//! other producer and no shared resource.

use std::any::Any;
use std::sync::Arc;

use camel_api::{BoxExpression, BoxPredicate, BoxProcessor, CamelError, ComponentContext};

/// A context without languages, producers or resources: asking it for one is an error.
///
/// Enough for `direct`, `seda`, `timer`, `log`, `mock`, and `file` without `file_name`.
///
/// ```
/// use camel_api::{Component, EndpointUri};
/// use camel_components::{BareContext, SedaComponent};
///
/// let seda = SedaComponent::new();
/// let endpoint = seda.endpoint(EndpointUri::parse("seda:jobs?size=10").unwrap(), &BareContext);
/// assert!(endpoint.is_ok());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct BareContext;

impl BareContext {
    fn refuse(what: &str) -> CamelError {
        CamelError::processor(format!(
            "{what} is not available outside a camel context (BareContext)"
        ))
    }
}

impl ComponentContext for BareContext {
    fn expression(&self, language: &str, _text: &str) -> Result<BoxExpression, CamelError> {
        Err(Self::refuse(&format!("the `{language}` language")))
    }

    fn predicate(&self, language: &str, _text: &str) -> Result<BoxPredicate, CamelError> {
        Err(Self::refuse(&format!("the `{language}` language")))
    }

    fn producer(&self, uri: &str) -> Result<BoxProcessor, CamelError> {
        Err(Self::refuse(&format!("a producer for `{uri}`")))
    }

    fn resource(&self, _name: &str) -> Option<Arc<dyn Any + Send + Sync>> {
        None
    }

    fn route_id(&self) -> Option<&str> {
        None
    }
}
