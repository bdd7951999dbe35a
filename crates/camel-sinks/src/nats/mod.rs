//! NATS (JetStream or core) as a batching sink, and a plain subscriber source.
//!
//! A batch is a pipelined run of publishes on one connection whose acknowledgements are
//! awaited together, so one round trip covers many entries. Each publish carries the
//! entry's idempotency key as `Nats-Msg-Id`, which JetStream uses to drop a retry it has
//! already stored, and its ordering group (if any) as `CamelNatsGroupKey`.
//!
//! URI: `nats:SUBJECT?servers=nats://127.0.0.1:4222&jetstream=true&group_key=${header.k}`.
//! Used in `from`, the endpoint subscribes to `SUBJECT` (core NATS, wildcards allowed,
//! requests answered); with `durable_name` it is a durable JetStream pull consumer with
//! acknowledgements after the route succeeded ([`JetStreamConsumer`]). With
//! `exchange_pattern=InOut` in `to`, each exchange is a core NATS request ([`NatsRequester`]).
//!
//! ```
//! use camel_api::Component;
//! use camel_sinks::nats::NatsComponent;
//! let component = NatsComponent::new();
//! assert_eq!(component.scheme(), "nats");
//! ```

mod codec;
mod component;
mod consumer;
mod jetstream;
mod request;

pub use codec::{NatsCodec, DUPLICATE_HEADER, GROUP_KEY_HEADER, SEQUENCE_HEADER, STREAM_HEADER};
pub use component::{NatsComponent, NATS_PARAMETERS};
pub use consumer::{NatsConsumer, RESERVED_HEADER_PREFIXES, SERVICE_ERROR_HEADER, SUBJECT_HEADER};
pub use jetstream::{
    JetStreamConsumer, JetStreamOptions, DELIVERED_HEADER, JETSTREAM_CONSUMER_PARAMETERS,
};
pub use request::NatsRequester;
