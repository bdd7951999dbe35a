//! Wire tap: a copy of each exchange goes to another endpoint on the tap's own task,
//! while the route carries on at once with the exchange unchanged.
//!
//! The tap never holds up or fails the main exchange. Copies wait in a bounded queue
//! (`queue_size`, 1,000 by default) for the tap's task, which sends up to `concurrency`
//! (10) at a time; when the queue is full — the tap endpoint is slower than the route —
//! the new copy is dropped and counted (`camel_wire_tap_dropped_total`, and
//! [`TapCounters::dropped`]), so memory stays bounded under any flood (ADR 0061). A tap
//! that fails is logged and counted (`camel_wire_tap_failed_total`), never retried.
//!
//! The task is started by the first exchange and drained when the route stops: copies
//! already queued are still sent (within the route's stop deadline).
//!
//! ```
//! use std::sync::Arc;
//! use camel_api::{Body, BoxProcessor, CamelError, Endpoint, Exchange};
//! use camel_eip::dynamic::{CacheSize, EndpointCache, EndpointResolver};
//! use camel_eip::wire_tap::{WireTap, WireTapOptions};
//!
//! #[derive(Debug)]
//! struct Sink(String);
//! impl Endpoint for Sink {
//!     fn uri(&self) -> &str { &self.0 }
//!     fn producer(&self) -> Result<BoxProcessor, CamelError> { Ok(BoxProcessor::identity()) }
//! }
//! #[derive(Debug)]
//! struct Resolver;
//! impl EndpointResolver for Resolver {
//!     fn endpoint(&self, uri: &str) -> Result<Arc<dyn Endpoint>, CamelError> {
//!         Ok(Arc::new(Sink(uri.to_string())))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let uri = camel_language::constant("audit:log");
//! let cache = Arc::new(EndpointCache::producers(Arc::new(Resolver), CacheSize::default()));
//! let tap = WireTap::new(uri, cache, None, WireTapOptions::default());
//! let counters = tap.counters();
//! let lifecycle = tap.lifecycle();
//! let out = tap.into_processor().process(Exchange::new("order")).await.unwrap();
//! assert_eq!(out.message.body, Body::from("order"));
//! lifecycle.shutdown(camel_api::ShutdownReason::RouteStop).await.unwrap();
//! assert_eq!(counters.delivered(), 1);
//! # }
//! ```

mod service;
mod worker;

pub use service::{TapCounters, WireTap, WireTapOptions};
