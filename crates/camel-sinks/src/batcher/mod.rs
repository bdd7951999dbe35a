//! The generic batcher: one task per destination turning many deliveries into few
//! requests, whatever the destination.
//!
//! Why a task per destination: a request can only carry entries for one destination,
//! and ordering, fairness and bounds are per destination too. The task is the single
//! owner of its queue (no lock held across an await); producers reach it through a
//! [`BatcherRegistry`] and reserve room with atomics, so refusal is immediate.
//!
//! Lifecycle: started by the first delivery, stopped after `idle_timeout` with nothing
//! queued or in flight; a delivery that meets a stopping batcher waits (at most
//! `replace_wait`) for it to end and starts the replacement. A batcher stopping idle
//! sends nothing more: an entry that reached its channel as it closed is handed back to
//! its caller for the replacement, so one group never has requests in two batchers.
//!
//! ```
//! use camel_sinks::batcher::{BatchConfig, BatcherRegistry};
//! use camel_sinks::memory::MemoryCodec;
//! use camel_sinks::{SinkOptions, SinkProducer};
//! use camel_api::Exchange;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let codec = MemoryCodec::new("orders");
//! let log = codec.log();
//! let producer = SinkProducer::new(codec, BatchConfig::default(), SinkOptions::default(), BatcherRegistry::new());
//! producer.deliver(&Exchange::new("hello")).await.unwrap();
//! assert_eq!(log.requests().len(), 1);
//! # }
//! ```

mod config;
mod error;
mod handle;
mod queue;
mod ready;
mod registry;
mod send;
mod telemetry;
mod worker;

#[cfg(test)]
mod tests;

pub use config::{BatchConfig, BATCH_PARAMETERS};
pub use error::SinkError;
pub use handle::{BatcherStats, OTHER_TENANTS, TENANTS_COUNTED};
pub use registry::{BatcherKey, BatcherRegistry};

pub(crate) use handle::{AbandonGuard, BatcherHandle, Submit};
pub(crate) use queue::Answer;
