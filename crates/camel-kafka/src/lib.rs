//! The `kafka:TOPIC` component, on librdkafka (the `rdkafka` crate).
//!
//! - `from: kafka:orders?group_id=billing` consumes as a member of a Kafka consumer
//!   group, at least once: an offset is committed only after the route succeeded, in
//!   order per partition. More processes with the same `group_id` share the partitions.
//! - `to: kafka:orders` publishes one record per exchange and completes the exchange when
//!   the broker acknowledged it. The record key is the `kafka.KEY` header, the `key`
//!   expression, or the outbox group key (`CamelOutboxGroupKey`), so `from: outbox:…` →
//!   `to: kafka:…` keeps each group's order on its partition.
//!
//! See `docs/brokers.md` and ADRs 0070 (the client build) and 0071 (commit order).
//!
//! ```
//! use camel_kafka::KafkaComponent;
//! let component = KafkaComponent::new();
//! assert_eq!(camel_api::Component::scheme(&component), "kafka");
//! // context.add_component(std::sync::Arc::new(component));
//! ```

mod component;
mod config;
mod consumer;
mod convert;
mod producer;

pub use component::KafkaComponent;
pub use config::{COMMON_PARAMETERS, CONSUMER_PARAMETERS, DEFAULT_BROKERS, PRODUCER_PARAMETERS};

/// Header names (Camel's `KafkaConstants`).
///
/// The consumer sets `KEY`, `PARTITION`, `OFFSET`, `TOPIC`, `TIMESTAMP` and
/// `MESSAGE_TIMESTAMP` itself; a record header under `kafka.` or `Camel` never reaches the
/// exchange. `OVERRIDE_TOPIC`, `PARTITION_KEY` and `KEY` are destination headers
/// (`camel_api::inbound::DESTINATION_HEADERS`): no consumer of any transport takes them
/// from outside, so only a route's own step can set them.
pub mod headers {
    /// The record key (consumer); the key to send with (producer).
    pub const KEY: &str = "kafka.KEY";
    /// The partition a record came from.
    pub const PARTITION: &str = "kafka.PARTITION";
    /// The offset of a record in its partition.
    pub const OFFSET: &str = "kafka.OFFSET";
    /// The topic a record came from.
    pub const TOPIC: &str = "kafka.TOPIC";
    /// The record's timestamp, in milliseconds since the epoch.
    pub const TIMESTAMP: &str = "kafka.TIMESTAMP";
    /// The record's timestamp again under Camel's message-timestamp header, which
    /// `${messageTimestamp}` reads.
    pub const MESSAGE_TIMESTAMP: &str = "CamelMessageTimestamp";
    /// Producer: the partition to send to (overrides `partition_key`).
    pub const PARTITION_KEY: &str = "kafka.PARTITION_KEY";
    /// Producer: the topic to send to instead of the endpoint's.
    pub const OVERRIDE_TOPIC: &str = "kafka.OVERRIDE_TOPIC";
    /// Producer: where the broker put the record (`{topic, partition, offset}`).
    pub const RECORD_META: &str = "kafka.RECORD_META";
    /// Dead-letter records: the error of the failed exchange.
    pub const DLT_ERROR: &str = "kafka.DLT_ERROR";
    /// Dead-letter records: the topic the record came from.
    pub const DLT_TOPIC: &str = "kafka.DLT_TOPIC";
    /// Dead-letter records: the partition the record came from.
    pub const DLT_PARTITION: &str = "kafka.DLT_PARTITION";
    /// Dead-letter records: the offset the record had.
    pub const DLT_OFFSET: &str = "kafka.DLT_OFFSET";
    /// The outbox relay's group key header (camel-outbox's `headers::GROUP_KEY`): the
    /// producer's key when nothing else names one.
    pub const OUTBOX_GROUP_KEY: &str = "CamelOutboxGroupKey";
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_headers_the_producer_obeys_to_pick_a_destination_are_control_headers() {
        for name in [
            crate::headers::OVERRIDE_TOPIC,
            crate::headers::PARTITION_KEY,
            crate::headers::KEY,
        ] {
            assert!(
                camel_api::inbound::DESTINATION_HEADERS.contains(&name),
                "{name} is missing from camel_api::inbound::DESTINATION_HEADERS"
            );
            assert!(camel_api::inbound::is_control_header(name), "{name}");
        }
    }
}
