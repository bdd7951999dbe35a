//! A stand-in for the route compiler's `ComponentContext`, shared by the unit tests and
//! (through `#[path]`) the integration tests, so endpoints can be built without camel-core.

use std::any::Any;
use std::sync::Arc;

use camel_api::{BoxExpression, BoxPredicate, BoxProcessor, CamelError, ComponentContext};

/// Compiles `simple` expressions with camel-language and refuses everything else.
#[derive(Debug, Default)]
pub(crate) struct FakeContext;

impl ComponentContext for FakeContext {
    fn expression(&self, language: &str, text: &str) -> Result<BoxExpression, CamelError> {
        match language {
            "simple" => Ok(camel_language::simple(text)?),
            other => Err(CamelError::processor(format!(
                "no language `{other}` in tests"
            ))),
        }
    }

    fn predicate(&self, language: &str, text: &str) -> Result<BoxPredicate, CamelError> {
        match language {
            "simple" => Ok(camel_language::simple_predicate(text)?),
            other => Err(CamelError::processor(format!(
                "no language `{other}` in tests"
            ))),
        }
    }

    fn producer(&self, uri: &str) -> Result<BoxProcessor, CamelError> {
        Err(CamelError::processor(format!(
            "no producers in tests ({uri})"
        )))
    }

    fn resource(&self, _name: &str) -> Option<Arc<dyn Any + Send + Sync>> {
        None
    }

    fn route_id(&self) -> Option<&str> {
        Some("test-route")
    }
}

/// Builds the endpoint for `uri` with `component` and a [`FakeContext`].
pub(crate) fn endpoint(
    component: &dyn camel_api::Component,
    uri: &str,
) -> Result<Arc<dyn camel_api::Endpoint>, CamelError> {
    let uri = camel_api::EndpointUri::parse(uri)?;
    component.endpoint(uri, &FakeContext)
}

/// Sends `body` through a fresh producer of `endpoint`.
pub(crate) async fn send(
    endpoint: &Arc<dyn camel_api::Endpoint>,
    body: &str,
) -> Result<camel_api::Exchange, CamelError> {
    endpoint
        .producer()?
        .process(camel_api::Exchange::new(body))
        .await
}

/// The body of `exchange` as text ("" when it has none).
pub(crate) fn text(exchange: &camel_api::Exchange) -> String {
    exchange
        .message
        .body
        .as_text()
        .unwrap_or_default()
        .into_owned()
}
