//! What a consumer may copy from a transport's message into an exchange.
//!
//! Headers that come in from a transport (an AMQP header table, NATS headers, Kafka record
//! headers, SQS message attributes, HTTP request headers and query parameters) are written
//! by whoever published the message or sent the request, so they are untrusted. Some
//! headers change what a producer does, so one of them arriving from outside would let a
//! publisher rewrite a route's SQL, redirect its HTTP calls or send its records to another
//! topic. Those are the *control headers*, and no transport lets them in:
//!
//! - every name starting with `Camel` (`CamelSqlQuery`, `CamelHttpUri`,
//!   `CamelHttpMethod`, `CamelFileName`, …), Camel's convention for its internal headers;
//! - the names in [`DESTINATION_HEADERS`]: headers without the `Camel` prefix that one of
//!   our producers obeys to pick where a message goes — `kafka.OVERRIDE_TOPIC` (another
//!   topic), `kafka.PARTITION_KEY` (another partition) and `kafka.KEY` (the record key,
//!   which picks the partition and, on a compacted topic, which record is replaced).
//!
//! Both are refused in any letter case. The second list is what makes an HTTP query
//! parameter `kafka.OVERRIDE_TOPIC=audit` harmless in front of a `to: kafka:` step: the
//! HTTP consumer is not Kafka's, so a reserved `kafka.` prefix of its own would not
//! cover it. A route that means to choose a destination still sets these headers itself
//! (`set_header`, a processor); only the copy from a transport is refused.
//!
//! Every consumer that maps transport headers asks [`admits_transport_header`] first; the
//! one rule lives here so that every transport applies the same one. A producer that
//! starts obeying a new destination header without the `Camel` prefix adds it to
//! [`DESTINATION_HEADERS`].
//!
//! ```
//! use camel_api::inbound::admits_transport_header;
//!
//! assert!(admits_transport_header("order-id", &[]));
//! assert!(!admits_transport_header("CamelSqlQuery", &[]));
//! assert!(!admits_transport_header("camelhttpuri", &[]));
//! // Destination headers are refused on every transport, not only on Kafka's.
//! assert!(!admits_transport_header("kafka.OVERRIDE_TOPIC", &[]));
//! // A consumer's own headers (`kafka.TOPIC`, …) are its to set, not the publisher's.
//! assert!(!admits_transport_header("kafka.TOPIC", &["kafka."]));
//! ```

/// Headers without the `Camel` prefix that a producer obeys to choose where a message
/// goes; control headers on every transport (see the module docs). Compared in any case.
pub const DESTINATION_HEADERS: &[&str] = &[
    // camel-kafka's producer: send to this topic instead of the endpoint's.
    "kafka.OVERRIDE_TOPIC",
    // camel-kafka's producer: send to this partition.
    "kafka.PARTITION_KEY",
    // camel-kafka's producer: the record key, hence the partition (and, on a compacted
    // topic, the record it replaces).
    "kafka.KEY",
];

/// Whether `name` is one of the framework's control headers: any name starting with
/// `Camel` (Camel's own convention for its internal headers) or one of
/// [`DESTINATION_HEADERS`], in any case.
pub fn is_control_header(name: &str) -> bool {
    starts_with_ignore_case(name, "camel")
        || DESTINATION_HEADERS
            .iter()
            .any(|h| name.eq_ignore_ascii_case(h))
}

/// Whether a header named `name`, taken from a transport message, may become a header
/// of the exchange. Control headers never may; nor may a name starting with one of
/// `reserved` (any case), the prefixes of headers the consumer itself sets or a producer
/// of the same transport obeys (`kafka.`, `rabbitmq.`, …).
pub fn admits_transport_header(name: &str, reserved: &[&str]) -> bool {
    !is_control_header(name) && !reserved.iter().any(|p| starts_with_ignore_case(name, p))
}

fn starts_with_ignore_case(name: &str, prefix: &str) -> bool {
    name.len() >= prefix.len()
        && name.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_headers_in_any_case() {
        for name in ["CamelSqlQuery", "CAMELHTTPMETHOD", "camelFileName", "Camel"] {
            assert!(is_control_header(name), "{name}");
            assert!(!admits_transport_header(name, &[]), "{name}");
        }
        for name in ["came", "x-camel", "order", "", "Ca"] {
            assert!(!is_control_header(name), "{name}");
        }
    }

    #[test]
    fn destination_headers_are_refused_without_a_reserved_prefix() {
        for name in [
            "kafka.OVERRIDE_TOPIC",
            "kafka.override_topic",
            "KAFKA.PARTITION_KEY",
            "kafka.KEY",
            "kafka.key",
        ] {
            assert!(is_control_header(name), "{name}");
            assert!(!admits_transport_header(name, &[]), "{name}");
        }
        // Only the exact names: a longer or other `kafka.` name is no control header
        // (Kafka's consumer refuses the whole prefix itself).
        for name in [
            "kafka.OVERRIDE_TOPIC2",
            "kafka.TOPIC",
            "x-kafka.KEY",
            "kafka.",
        ] {
            assert!(!is_control_header(name), "{name}");
            assert!(admits_transport_header(name, &[]), "{name}");
        }
    }

    #[test]
    fn reserved_prefixes_in_any_case() {
        let reserved = ["kafka.", "rabbitmq."];
        assert!(!admits_transport_header("KAFKA.override_topic", &reserved));
        assert!(!admits_transport_header("rabbitmq.ROUTING_KEY", &reserved));
        assert!(admits_transport_header("kafka", &reserved));
        assert!(admits_transport_header("trace-id", &reserved));
        // A multi-byte name shorter than a prefix in bytes must not panic.
        assert!(admits_transport_header("é", &reserved));
    }
}
