//! EIPs as tower layers, and any tower layer as a route step.
//!
//! Every wrapping EIP of this crate is also a [`tower::Layer`] whose service is generic
//! over the inner `S: Service<Exchange, Response = Exchange, Error = CamelError>` and
//! passes `poll_ready` through to it (as tower's `ConcurrencyLimit` does):
//!
//! | layer | what the inner service is |
//! |---|---|
//! | [`FilterLayer`](crate::filter::FilterLayer) | runs only for matching exchanges; others pass by unchanged |
//! | [`ChoiceLayer`](crate::choice::ChoiceLayer) | the `otherwise` branch: exchanges no `when` took |
//! | [`MulticastLayer`](crate::multicast::MulticastLayer) | gets the aggregated exchange |
//! | [`PipelineLayer`](crate::pipeline::PipelineLayer) | runs after the pipeline's steps |
//! | [`TransactedLayer`](crate::transacted::TransactedLayer) | runs inside the transaction |
//! | [`from_fn`](crate::middleware::from_fn) | the `next` a middleware function calls |
//! | [`StepLayer`] (recipient list, routing slip, dynamic router, `to_d`, wire tap, enrich, poll enrich, claim check) | gets the step's result |
//!
//! So they compose with tower's own layers in a plain [`tower::ServiceBuilder`], no
//! `CamelContext` needed:
//!
//! ```
//! use std::time::Duration;
//! use camel_api::{Body, CamelError, Exchange};
//! use camel_eip::filter::FilterLayer;
//! use camel_eip::layer::into_camel_error;
//! use tower::{service_fn, Service, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let wanted = camel_language::simple_predicate("${body} == 'hi'").unwrap();
//! let mut svc = ServiceBuilder::new()
//!     .map_err(into_camel_error)
//!     .timeout(Duration::from_secs(5))
//!     .layer(FilterLayer::new(wanted))
//!     .service(service_fn(|mut ex: Exchange| async move {
//!         ex.message.body = Body::from("seen");
//!         Ok::<_, CamelError>(ex)
//!     }));
//! let out = svc.ready().await.unwrap().call(Exchange::new("hi")).await.unwrap();
//! assert_eq!(out.message.body, Body::from("seen"));
//! # }
//! ```
//!
//! Inside a compiled route the EIPs keep their [`camel_api::Process`] form over
//! [`camel_api::BoxProcessor`] (synchronous steps complete without allocating); the
//! generic services are for composing by hand. A route takes any tower layer through a
//! [`ProcessorLayer`], and tower's errors become typed [`camel_api::CamelError`]s through
//! [`into_camel_error`].

mod boxed;
mod error;
mod future;
mod then;

pub use boxed::ProcessorLayer;
pub use error::into_camel_error;
pub use future::EipFuture;
pub use then::{StepLayer, StepThen};

/// Takes the instance of `service` whose readiness `poll_ready` reserved, leaving a fresh
/// clone in its place (tower's idiom for a service that must be moved into a future: the
/// clone has reserved nothing and is polled ready again before its own call).
pub(crate) fn take_ready<S: Clone>(service: &mut S) -> S {
    let fresh = service.clone();
    std::mem::replace(service, fresh)
}
