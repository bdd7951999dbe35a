//! HTTP in and out: `platform-http:` routes served by one embedded server per context, and
//! the `http:`/`https:` producer.
//!
//! The server (hyper's HTTP/1 connections with axum's body and response types) binds when
//! the first `platform-http:` route starts; every HTTP route of the context shares it. A
//! request becomes an `InOut` exchange:
//!
//! | From the request | Exchange header |
//! |---|---|
//! | method | `CamelHttpMethod` |
//! | path | `CamelHttpPath` |
//! | path and query | `CamelHttpUri` |
//! | raw query | `CamelHttpQuery` |
//! | each header (`content-type`) | its canonical name (`Content-Type`) |
//! | each query parameter | its name (a repeated one: a JSON array) |
//! | each path parameter (`/orders/{id}`) | its name (`id`) |
//!
//! Request headers and query parameters pass the rule every transport shares,
//! [`camel_api::inbound::admits_transport_header`]: control headers (`Camel*` in any case,
//! and the destination headers other producers obey, such as `kafka.OVERRIDE_TOPIC`) are
//! dropped on the way in, so a client can neither set `CamelHttpResponseCode` nor
//! `?CamelSqlQuery=…`. A request path with a `.` or `..` segment (also percent-encoded)
//! is answered 400. The response is the exchange's body with the status in `CamelHttpResponseCode` (default 200,
//! 204 without a body). See `docs/http.md` for every option.
//!
//! ```
//! use camel_api::{Body, Exchange};
//! use camel_core::builder::simple;
//! use camel_core::{CamelContext, RouteBuilder};
//! use camel_http::{HttpComponent, PlatformHttpComponent, ServerConfig};
//! use std::sync::Arc;
//!
//! # #[tokio::main] async fn main() {
//! let server = PlatformHttpComponent::new(ServerConfig::new(([127, 0, 0, 1], 0).into()));
//! let ctx = CamelContext::new();
//! ctx.add_component(Arc::new(server.clone()));
//! ctx.add_component(Arc::new(HttpComponent::http()));
//! ctx.add_routes(vec![RouteBuilder::from("platform-http:/hello/{name}")
//!     .set_body(simple("Hello ${header.name}"))
//!     .build()]).await.unwrap();
//! ctx.start().await.unwrap();
//! let addr = server.serving("/hello/{name}").await.unwrap();
//!
//! let reply = ctx.request(&format!("http://{addr}/hello/camel"), Exchange::new(Body::Empty))
//!     .await.unwrap();
//! assert_eq!(reply.message.body.as_text().as_deref(), Some("Hello camel"));
//! ctx.stop().await;
//! # }
//! ```

mod client;
pub mod headers;
mod one_line;
mod platform;
mod server;

pub use client::{HttpComponent, HttpProducerError, DEFAULT_MAX_RESPONSE_SIZE};
pub use platform::{Binding, PlatformHttpComponent, DEFAULT_MAX_BODY_SIZE};
pub use server::accept::{serve_bounded, ConnectionBounds};
pub use server::{ServerConfig, DEFAULT_BODY_READ_TIMEOUT, DEFAULT_MAX_BUFFERED_BODY_BYTES};
