//! A broker message as an exchange, and an exchange's headers as MQTT 5 user properties.

use camel_api::inbound::admits_transport_header;
use camel_api::{Body, Exchange};

use crate::link::Incoming;

/// Header: the topic the message was published to (Camel's name).
pub const TOPIC_HEADER: &str = "CamelMqttTopic";
/// Header: the QoS the message was delivered with (Camel's name).
pub const QOS_HEADER: &str = "CamelMqttQoS";
/// Header a route sets to publish to another topic than the endpoint's (Camel's name).
pub const OVERRIDE_TOPIC_HEADER: &str = "CamelPahoOverrideTopic";
/// Header: the message was a retained one (ours: Camel has none).
pub const RETAINED_HEADER: &str = "CamelMqttRetained";
/// Header: the broker flagged the message as a possible redelivery (DUP; ours).
pub const DUPLICATE_HEADER: &str = "CamelMqttDuplicate";

/// The exchange for `m`: the payload as text when it is UTF-8 (bytes otherwise), the
/// MQTT 5 user properties as headers (never `Camel*` or destination headers, which only
/// the route itself may set), and the consumer's own headers.
pub(crate) fn to_exchange(m: &Incoming) -> Exchange {
    let body = match std::str::from_utf8(&m.payload) {
        Ok(text) => Body::from(text),
        Err(_) => Body::Bytes(m.payload.clone()),
    };
    let mut exchange = Exchange::new(body);
    for (name, value) in &m.user_properties {
        if admits_transport_header(name, &[]) {
            exchange
                .message
                .headers
                .insert(name.as_str(), value.as_str());
        }
    }
    if m.dup {
        exchange
            .properties
            .insert(camel_api::error_kind::EXTERNAL_REDELIVERED, true);
    }
    exchange
        .with_header(TOPIC_HEADER, m.topic.as_str())
        .with_header(QOS_HEADER, u64::from(m.qos))
        .with_header(RETAINED_HEADER, m.retain)
        .with_header(DUPLICATE_HEADER, m.dup)
}

/// The user properties a producer sends: every header but the control ones (`Camel*`,
/// destination headers), as text.
pub(crate) fn user_properties(exchange: &Exchange) -> Vec<(String, String)> {
    exchange
        .message
        .headers
        .iter()
        .filter(|(name, _)| admits_transport_header(name, &[]))
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::Incoming;

    #[test]
    fn control_headers_never_come_in_and_ours_win() {
        let m = Incoming::for_test(
            "orders/1",
            b"{}",
            &[
                ("CamelSqlQuery", "drop table orders"),
                ("camelmqtttopic", "forged"),
                ("kafka.OVERRIDE_TOPIC", "audit"),
                ("order-id", "42"),
            ],
            true,
        );
        let ex = to_exchange(&m);
        assert!(ex.header("CamelSqlQuery").is_none());
        assert!(ex.header("kafka.OVERRIDE_TOPIC").is_none());
        assert_eq!(ex.header(TOPIC_HEADER).unwrap().to_string(), "orders/1");
        assert_eq!(ex.header("order-id").unwrap().to_string(), "42");
        assert_eq!(ex.header(QOS_HEADER).unwrap().to_string(), "1");
        assert_eq!(ex.header(DUPLICATE_HEADER).unwrap().to_string(), "true");
        assert!(ex
            .properties
            .get(camel_api::error_kind::EXTERNAL_REDELIVERED)
            .is_some());
    }

    #[test]
    fn a_producer_sends_no_control_header() {
        let ex = Exchange::new(Body::from("x"))
            .with_header("CamelPahoOverrideTopic", "elsewhere")
            .with_header("tenant", "acme");
        assert_eq!(
            user_properties(&ex),
            vec![("tenant".to_string(), "acme".to_string())]
        );
    }
}
