//! `mock:NAME` — an endpoint for tests that records what reaches it and checks it against
//! expectations.
//!
//! A test keeps a [`MockComponent`] handle, registers a clone of it in the context, and
//! asks it for the [`MockEndpoint`] of a name (the same shared endpoint the routes send
//! to). It sets expectations, runs the routes, and awaits
//! [`MockEndpoint::assert_is_satisfied`], which wakes on every arrival (no polling) and
//! fails with a [`MockAssertionError`] saying what was expected and what was received.
//! A mock only produces: `from: mock:…` is an error.
//!
//! # URI options
//!
//! | Option | Default | Meaning |
//! |---|---|---|
//! | `expected_count` | none | Same as calling `expected_message_count` on the endpoint. |
//! | `log` | `false` | Log every received exchange at `info`. |
//!
//! ```
//! use std::time::Duration;
//! use camel_api::{Component, EndpointUri, Exchange};
//! use camel_components::{BareContext, MockComponent};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let mock = MockComponent::new();
//! let out = mock.endpoint("out");
//! out.expected_bodies_received(["a", "b"]);
//!
//! // What a route's `to: mock:out` step does:
//! let endpoint = mock.create(EndpointUri::parse("mock:out").unwrap(), &BareContext).unwrap();
//! let producer = endpoint.producer().unwrap();
//! producer.process(Exchange::new("a")).await.unwrap();
//! producer.process(Exchange::new("b")).await.unwrap();
//!
//! out.assert_is_satisfied(Duration::from_secs(5)).await.unwrap();
//! # }
//! ```

mod endpoint;
mod error;
mod expectations;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use camel_api::{CamelError, Component, ComponentContext, Endpoint, EndpointUri};

pub use self::endpoint::MockEndpoint;
pub use self::error::MockAssertionError;

const OPTIONS: &[&str] = &["expected_count", "log"];

/// The `mock` component: a shared set of named [`MockEndpoint`]s.
///
/// Cloning shares the endpoints, so the clone a test keeps sees what the routes sent to
/// the clone registered in the context.
#[derive(Clone, Debug, Default)]
pub struct MockComponent {
    endpoints: Arc<Mutex<HashMap<String, MockEndpoint>>>,
}

impl MockComponent {
    /// A component without endpoints.
    pub fn new() -> Self {
        Self::default()
    }

    /// The endpoint `mock:name`, created on first use.
    pub fn endpoint(&self, name: &str) -> MockEndpoint {
        let mut endpoints = self
            .endpoints
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        endpoints
            .entry(name.to_string())
            .or_insert_with(|| MockEndpoint::new(name))
            .clone()
    }

    /// Resets every endpoint: received exchanges and expectations are forgotten.
    pub fn reset(&self) {
        let endpoints = self
            .endpoints
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        endpoints.values().for_each(MockEndpoint::reset);
    }

    /// [`Component::endpoint`] under a name that does not clash with
    /// [`MockComponent::endpoint`].
    pub fn create(
        &self,
        uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        Component::endpoint(self, uri, ctx)
    }
}

impl Component for MockComponent {
    fn scheme(&self) -> &str {
        "mock"
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let name = crate::endpoint_name(&uri, "mock:result")?;
        let count = uri.parameters.take::<usize>("expected_count")?;
        let log = uri.parameters.take_bool("log")?;
        uri.parameters.finish(OPTIONS)?;
        let endpoint = self.endpoint(&name);
        if let Some(count) = count {
            endpoint.expected_message_count(count);
        }
        if let Some(log) = log {
            endpoint.set_log(log);
        }
        Ok(Arc::new(endpoint))
    }
}

#[cfg(test)]
mod tests;
