//! The Resequencer EIP: reorders exchanges behind a continuation boundary.
//!
//! A route `from → pre-steps → resequence → post-steps` is built as one pipeline that ends
//! with the resequencer's intake, plus a *continuation* (the post-steps) that the
//! resequencer drives itself. The intake acknowledges each exchange at once (empty body,
//! property `CamelResequencerAccepted = true`); an actor task reorders them with a
//! [`ResequencePolicy`] (stream or batch), and a post-driver task calls the continuation
//! for each released exchange, in order. The route controller starts and drains both tasks
//! through the [`StepLifecycle`](camel_api::StepLifecycle) in [`Resequencer::lifecycle`].
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use camel_api::{BoxProcessor, CamelError, Exchange, Expression, ShutdownReason, Value};
//! use camel_eip::resequencer::{ResequenceConfig, ResequenceExpressions, ResequencerService};
//!
//! // The sequence number is the `seq` header (normally `simple("${header.seq}")`).
//! #[derive(Debug)]
//! struct Seq;
//! impl Expression for Seq {
//!     fn evaluate(&self, ex: &Exchange) -> Result<Value, CamelError> {
//!         Ok(ex.header("seq").cloned().unwrap_or_default())
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), CamelError> {
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let sink = seen.clone();
//! let continuation = BoxProcessor::sync(move |ex: Exchange| {
//!     sink.lock().unwrap().push(ex.header("seq").and_then(Value::as_i64).unwrap());
//!     Ok(ex)
//! });
//! let mut config = ResequenceConfig::stream("${header.seq}");
//! if let camel_eip::resequencer::ResequenceMode::Stream(s) = &mut config.mode {
//!     s.initial_sequence = Some(1);
//! }
//! let expressions = ResequenceExpressions { key: Arc::new(Seq), correlation: None };
//! let reseq = ResequencerService::build_with(&config, expressions, "orders", "resequence", continuation, None)?;
//! reseq.lifecycle.start().await?;
//! for n in [3, 1, 2] {
//!     let ack = reseq.processor.process(Exchange::default().with_header("seq", n)).await?;
//!     assert!(ack.message.body.is_empty());
//! }
//! reseq.lifecycle.shutdown(ShutdownReason::RouteStop).await?;
//! assert_eq!(*seen.lock().unwrap(), [1, 2, 3]);
//! # Ok(()) }
//! ```
//!
//! The design, the drain order and the hot-swap hand-over are described in
//! `docs/resequencer.md`, ADR 0030 and (the bounded backlog, the stop deadline, what a
//! deadline cuts off) ADR 0106.

mod actor;
mod backlog;
mod batch;
mod build;
mod config;
mod error;
mod key;
mod lifecycle;
mod policy;
mod post_driver;
mod service;
mod shared;
mod skipped;
mod stream;

pub use batch::BatchPolicy;
pub use build::{ResequenceExpressions, Resequencer, ResequencerService};
pub use config::{
    BatchConfig, CapacityPolicy, GapPolicy, OnSwap, ResequenceConfig, ResequenceMode, StreamConfig,
};
pub use error::ResequenceError;
pub use key::{BatchKey, SortKey};
pub use lifecycle::ResequencerHandover;
pub use policy::{DropReason, PolicyState, Release, ResequencePolicy};
pub use shared::ResequencerStats;
pub use stream::StreamPolicy;

/// Names of the properties the resequencer sets.
pub mod names {
    /// On the acknowledgement: `true` when the exchange was accepted, `false` when it was
    /// skipped under `ignore_invalid`.
    pub const ACCEPTED: &str = "CamelResequencerAccepted";
    /// On the acknowledgement of a request-reply exchange (unless `allow_inout`).
    pub const INOUT_WARN: &str = "CamelResequencerInOutWarn";
    /// On a dead-lettered exchange: why it was not delivered (`gap`, `capacity`, `old`,
    /// `continuation_failed`, …).
    pub const DROP_REASON: &str = "CamelResequencerDropReason";
    /// On an exchange dead-lettered after a continuation failure: the error text.
    pub const FAILURE: &str = "CamelResequencerFailure";
}
