//! One entry point to the framework: routes in YAML or built in Rust, compiled into one
//! `tower::Service` pipeline of Enterprise Integration Patterns.
//!
//! The engine ([`CamelContext`], [`RouteBuilder`], the [`yaml`] loader) and the built-in
//! components (`direct`, `seda`, `timer`, `scheduler`, `cron`, `log`, `file`, `mock`, …) are
//! always here. Components with a client library or a database driver behind them are
//! features, so a build carries only what its routes use:
//!
//! | feature | module | what |
//! |---|---|---|
//! | `outbox-postgres`, `outbox-sqlite` | `outbox` | transactional outbox and its relay, the `outbox:` component |
//! | `sinks-sqs`, `sinks-pubsub`, `sinks-nats` | `sinks` | batching sinks and consumers for SQS, Pub/Sub, NATS JetStream |
//! | `http` | `http` | `platform-http:` routes and the `http:`/`https:` producer |
//! | `sql` | `sql` | the `sql:` component (PostgreSQL, SQLite, MySQL/MariaDB) |
//! | `state` | `state` | PostgreSQL/SQLite repositories for aggregate and idempotent consumer |
//! | `kafka` | `kafka` | the `kafka:` component (librdkafka, built from source) |
//! | `rabbitmq` | `rabbitmq` | the `rabbitmq:` component |
//! | `xml` | `xml` | the `xpath` language and the `xslt:` component |
//! | `otel` | `otel` | OpenTelemetry export of route spans over OTLP/HTTP (`camel_rs::otel::install`) |
//! | `cluster-postgres`, `cluster-redis`, `cluster-nats` | `cluster` | leader election with fencing epochs, the `master:` component (docs/cluster.md) |
//! | `full` | | all of the above |
//! | `test` | `test` | advice-with and mock endpoints for testing routes (docs/testing.md); not in `full` |
//!
//! A feature's components are registered on the context by the program
//! (`ctx.add_component(Arc::new(camel_rs::kafka::KafkaComponent::new()))`); the built-in
//! ones are there from [`CamelContext::new`].
//!
//! ```
//! use camel_rs::builder::simple;
//! use camel_rs::{CamelContext, Exchange, RouteBuilder};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let ctx = CamelContext::new();
//! ctx.add_routes(vec![RouteBuilder::from("direct:greet")
//!     .set_header("greeting", simple("Hello ${body}"))
//!     .to("log:greetings")
//!     .build()])
//!     .await?;
//! ctx.start().await?;
//! let reply = ctx.request("direct:greet", Exchange::new("Bob")).await?;
//! assert_eq!(
//!     reply.header("greeting").and_then(|v| v.as_str()),
//!     Some("Hello Bob")
//! );
//! ctx.stop().await;
//! # Ok(()) }
//! ```
//!
//! Each member crate is also published on its own (`camel-rs-api`, `camel-rs-core`, …;
//! see docs/crates.md) for code that wants one piece, such as `camel-rs-eip`'s layers in
//! a plain tower stack.

pub use camel_core::*;

pub use camel_api::{Body, CamelError, Exchange, ExchangePattern, Headers, Message, Value};

/// The shared vocabulary: exchanges, errors, the processor contract, component traits.
pub use camel_api as api;
/// The built-in components.
pub use camel_components as components;
/// The EIPs as tower services and layers.
pub use camel_eip as eip;
/// The expression languages.
pub use camel_language as language;

/// The transactional outbox (`outbox-postgres`, `outbox-sqlite`).
#[cfg(any(feature = "outbox-postgres", feature = "outbox-sqlite"))]
pub use camel_outbox as outbox;

/// Batching sinks and consumers (`sinks-sqs`, `sinks-pubsub`, `sinks-nats`).
#[cfg(any(
    feature = "sinks-sqs",
    feature = "sinks-pubsub",
    feature = "sinks-nats"
))]
pub use camel_sinks as sinks;

/// HTTP in and out (`http`).
#[cfg(feature = "http")]
pub use camel_http as http;

/// The `sql:` component (`sql`).
#[cfg(feature = "sql")]
pub use camel_sql as sql;

/// Repositories for the stateful EIPs (`state`).
#[cfg(feature = "state")]
pub use camel_state as state;

/// The `kafka:` component (`kafka`).
#[cfg(feature = "kafka")]
pub use camel_kafka as kafka;

/// The `rabbitmq:` component (`rabbitmq`).
#[cfg(feature = "rabbitmq")]
pub use camel_rabbitmq as rabbitmq;

/// XPath and XSLT (`xml`).
#[cfg(feature = "xml")]
pub use camel_xml as xml;

/// OpenTelemetry export of route spans over OTLP/HTTP (`otel`).
#[cfg(feature = "otel")]
pub use camel_otel as otel;

/// Leader election and leader-only routes (`cluster-postgres`, `cluster-redis`,
/// `cluster-nats`).
#[cfg(any(
    feature = "cluster-postgres",
    feature = "cluster-redis",
    feature = "cluster-nats"
))]
pub use camel_cluster as cluster;

/// Advice-with and a test context with mock endpoints (`test`), for a crate's
/// `[dev-dependencies]`.
#[cfg(feature = "test")]
pub use camel_test as test;

/// The README's Rust example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
