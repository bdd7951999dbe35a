//! [`TestContext`]: a context whose `mock:` endpoints the test can reach.

use std::sync::Arc;

use camel_components::{MockComponent, MockEndpoint};
use camel_core::CamelContext;

/// A [`CamelContext`] with a `mock` component the test holds a handle to, so the
/// endpoints that advice adds (`mock:sqs:orders`) are found by name.
///
/// ```
/// use std::time::Duration;
/// use camel_api::Exchange;
/// use camel_core::RouteBuilder;
/// use camel_test::TestContext;
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let test = TestContext::new();
/// test.context()
///     .add_routes(vec![RouteBuilder::from("direct:in").to("mock:out").build()])
///     .await?;
/// test.context().start().await?;
/// let out = test.mock("out");
/// out.expected_bodies_received(["hi"]);
/// test.context().request("direct:in", Exchange::new("hi")).await?;
/// out.assert_is_satisfied(Duration::from_secs(5)).await?;
/// test.context().stop().await;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct TestContext {
    context: CamelContext,
    mocks: MockComponent,
}

impl TestContext {
    /// A context with the built-in components and a fresh `mock` component.
    pub fn new() -> Self {
        TestContext::with_context(CamelContext::new())
    }

    /// Puts a fresh `mock` component into `context` (one with other components already
    /// registered, such as the `camel` binary's).
    pub fn with_context(context: CamelContext) -> Self {
        let mocks = MockComponent::new();
        context.add_component(Arc::new(mocks.clone()));
        TestContext { context, mocks }
    }

    /// The context.
    pub fn context(&self) -> &CamelContext {
        &self.context
    }

    /// The mock endpoint `mock:NAME` (`"sqs:orders"` for the mock advice put in front of
    /// `sqs:orders`); the same one the routes send to.
    pub fn mock(&self, name: &str) -> MockEndpoint {
        self.mocks
            .endpoint(name.strip_prefix("mock:").unwrap_or(name))
    }

    /// The `mock` component.
    pub fn mocks(&self) -> &MockComponent {
        &self.mocks
    }
}

impl Default for TestContext {
    fn default() -> Self {
        TestContext::new()
    }
}
