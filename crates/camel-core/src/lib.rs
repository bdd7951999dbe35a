//! The route engine: the route model, the YAML and Rust builder DSLs, the route compiler,
//! and the [`CamelContext`] with its [`RouteController`].
//!
//! ```
//! use camel_core::{CamelContext, RouteBuilder};
//! use camel_core::builder::simple;
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let ctx = CamelContext::new();
//! let route = RouteBuilder::from("direct:greet")
//!     .set_header("greeting", simple("Hello ${body}"))
//!     .to("log:greetings")
//!     .build();
//! ctx.add_routes(vec![route]).await.unwrap();
//! ctx.start().await.unwrap();
//! ctx.stop().await;
//! # }
//! ```

// Route errors are built on the cold compile path and carry locations for the user; their
// size does not matter there.
#![allow(clippy::result_large_err)]

pub mod bean;
pub mod builder;
mod builder_errors;
mod builder_intercept;
mod builder_layer;
pub mod compiler;
pub mod context;
mod datasource_bean;
pub mod error;
pub mod model;
mod observe;
pub mod properties;
pub mod rest;
pub mod yaml;

use std::sync::Arc;

pub use builder::RouteBuilder;
pub use builder_errors::TryBuilder;
pub use compiler::{CompiledRoute, PipelineAssembly, StepCompiler, StepContext, StepRegistry};
pub use context::{
    CamelContext, Registry, RouteController, RouteOperation, RouteStatus, ShutdownReport,
    StopOutcome,
};
pub use error::{Location, RouteError, RouteErrorKind, RouteErrors};
pub use model::{EndpointDefinition, LayerStep, RouteDefinition, StepDefinition};

/// The built-in components every context starts with.
pub fn builtin_components() -> Vec<Arc<dyn camel_api::Component>> {
    camel_components::all()
}

// The README's Rust example uses the `camel-rs` facade and runs as its doc test.

/// The EIP guide (`docs/eips.md`), its Rust examples compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/eips.md")]
pub struct EipGuideDoctests;
