//! What a consumer may copy from a transport's message into an exchange.
//!
//! Headers that come in from a transport (an AMQP header table, NATS headers, Kafka record
//! headers, SQS message attributes, HTTP request headers) are written by whoever
//! published the message, so they are untrusted. The framework's control headers
//! (`CamelSqlQuery`, `CamelHttpUri`, `CamelFileName`, …) change what a producer does, so
//! one of them arriving from outside would let a publisher rewrite a route's SQL or
//! redirect its HTTP calls. Every consumer that maps transport headers asks
//! [`admits_transport_header`] first; the one rule lives here so that every transport
//! applies the same one.
//!
//! ```
//! use camel_api::inbound::admits_transport_header;
//!
//! assert!(admits_transport_header("order-id", &[]));
//! assert!(!admits_transport_header("CamelSqlQuery", &[]));
//! assert!(!admits_transport_header("camelhttpuri", &[]));
//! // A consumer's own headers (`kafka.KEY`, …) are its to set, not the publisher's.
//! assert!(!admits_transport_header("kafka.OVERRIDE_TOPIC", &["kafka."]));
//! ```

/// Whether `name` is one of the framework's control headers: any name starting with
/// `Camel`, in any case (Camel's own convention for its internal headers).
pub fn is_control_header(name: &str) -> bool {
    starts_with_ignore_case(name, "camel")
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
