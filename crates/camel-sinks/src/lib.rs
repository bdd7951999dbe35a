//! Batching sinks: many deliveries to one destination share one request, and each
//! caller still gets its own entry's result.
//!
//! - [`codec`]: the [`BatchCodec`] trait a destination implements (identity, encoding,
//!   limits, `send_batch`).
//! - [`batcher`]: the generic per-destination batcher (linger, in-flight limit, tenant
//!   fairness, group order, bounded queue, bisection, idle stop) and its registry.
//! - [`SinkProducer`]: the route step (`to: sqs:…`, `to: pubsub:…`, `to: nats:…`).
//! - Codecs and components behind features: `sqs`, `sns`, `pubsub`, `nats`; `memory` (an
//!   in-process codec) and `testing` (stand-ins for tests) behind the `testing` feature.
//!
//! The guide is `docs/sinks.md` at the repository root.

mod attributes;
#[cfg(feature = "aws")]
mod aws;
pub mod batcher;
pub mod codec;
pub mod endpoint;
#[cfg(any(test, feature = "testing"))]
pub mod memory;
mod producer;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

#[cfg(feature = "nats")]
pub mod nats;
#[cfg(feature = "pubsub")]
pub mod pubsub;
#[cfg(feature = "sns")]
pub mod sns;
#[cfg(feature = "sqs")]
pub mod sqs;

pub use attributes::HeaderSelection;
#[cfg(feature = "aws")]
pub use aws::AwsCredentials;
pub use batcher::{BatchConfig, BatcherRegistry, SinkError};
pub use codec::{
    BatchCodec, BatchIdentity, Entry, EntryMeta, EntryResult, Limits, Receipt, SendOutcome,
};
pub use endpoint::SinkEndpoint;
pub use producer::{
    SinkOptions, SinkProducer, OUTBOX_GROUP_KEY_HEADER, OUTBOX_ID_HEADER, OUTBOX_NAME_HEADER,
};
