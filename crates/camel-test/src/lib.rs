//! Testing routes as Camel's advice-with does: before the context starts, a test replaces
//! a route's source with `direct:`, puts `mock:` endpoints in front of (or in place of)
//! the endpoints it sends to, and weaves steps in by node id. Routes loaded from YAML and
//! routes built in Rust are advised alike.
//!
//! ```
//! use std::time::Duration;
//! use camel_api::Exchange;
//! use camel_test::{advice_route, TestContext};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let yaml = r#"
//! - route:
//!     id: orders
//!     from: kafka:orders
//!     steps:
//!       - set_body: {simple: "order ${body}", id: label}
//!       - to: kafka:orders-out
//! "#;
//! let mut routes = camel_core::yaml::load_str(yaml, "orders.camel.yaml")?;
//! advice_route(&mut routes, "orders", |a| {
//!     a.replace_from("direct:orders");
//!     a.mock_endpoints_and_skip("kafka:*");
//!     a.weave_by_id("label").after(|s| s.to("mock:labelled"));
//! })?;
//!
//! let test = TestContext::new();
//! test.context().add_routes(routes).await?;
//! test.context().start().await?;
//! let sent = test.mock("kafka:orders-out");
//! sent.expected_bodies_received(["order 7"]);
//! test.context().request("direct:orders", Exchange::new("7")).await?;
//! sent.assert_is_satisfied(Duration::from_secs(5)).await?;
//! assert_eq!(test.mock("labelled").received_count(), 1);
//! test.context().stop().await;
//! # Ok(()) }
//! ```
//!
//! The mock endpoints are `camel-rs-components`' [`MockEndpoint`]s: expectations in
//! Camel's words (`expected_message_count`, `expected_bodies_received`,
//! `expected_header_received`), [`MockEndpoint::assert_is_satisfied`] with a timeout on
//! tokio's clock (so `#[tokio::test(start_paused = true)]` tests do not wait), and
//! `when_any_exchange_received` for a canned reply or a failure. docs/testing.md is the
//! guide; ADR 0126 says why this is a crate of its own.

mod advice;
mod context;
mod error;
mod pattern;
mod steps;

use camel_core::RouteDefinition;

pub use advice::{AdviceWith, Fragment, Weave};
pub use camel_components::{MockAssertionError, MockComponent, MockEndpoint};
pub use context::TestContext;
pub use error::AdviceError;
pub use pattern::{mock_name, EndpointPattern};

/// Applies `advice` to `route`. Either every edit applies or, on the first one that
/// cannot (a weave that selects no step, a pattern that cannot be read), none does and
/// the route is left as it was.
pub fn advice_with(
    route: &mut RouteDefinition,
    advice: impl FnOnce(&mut AdviceWith),
) -> Result<(), AdviceError> {
    let mut with = AdviceWith::new(route.clone());
    advice(&mut with);
    *route = with.finish()?;
    Ok(())
}

/// Applies `advice` to the route with id `route_id` among `routes` (what a YAML file
/// loads to).
pub fn advice_route(
    routes: &mut [RouteDefinition],
    route_id: &str,
    advice: impl FnOnce(&mut AdviceWith),
) -> Result<(), AdviceError> {
    let known = || {
        routes
            .iter()
            .filter_map(|r| r.id.as_deref())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(at) = routes
        .iter()
        .position(|r| r.id.as_deref() == Some(route_id))
    else {
        return Err(AdviceError::NoRoute {
            route: route_id.to_string(),
            known: known(),
        });
    };
    advice_with(&mut routes[at], advice)
}
