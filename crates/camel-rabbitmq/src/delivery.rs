//! A delivery as an exchange: the body, the consumer's own headers, and the message's
//! AMQP headers that may come in from outside.

use camel_api::inbound::admits_transport_header;
use camel_api::{Body, Exchange};
use lapin::message::Delivery;
use lapin::types::AMQPValue;

/// Header: the routing key the message was published with (Camel's name).
pub const ROUTING_KEY_HEADER: &str = "CamelRabbitmqRoutingKey";
/// Header: the exchange the message was published to (Camel's name).
pub const EXCHANGE_NAME_HEADER: &str = "CamelRabbitmqExchangeName";
/// Header: the delivery tag on this consumer's channel (Camel's name).
pub const DELIVERY_TAG_HEADER: &str = "CamelRabbitmqDeliveryTag";
/// Header: true when the broker delivered the message before (Camel's name).
pub const REDELIVERED_HEADER: &str = "CamelRabbitmqRedeliveryTag";
/// Header: which run of this delivery through the route the exchange is (1 the first
/// time; the consumer's retries count up, `maximum_retry_attempts + 1` at most). Ours:
/// Camel's consumer has no such header.
pub const DELIVERY_ATTEMPT_HEADER: &str = "CamelRabbitmqDeliveryAttempt";

/// Prefixes of AMQP header names the consumer never copies, besides Camel's `Camel*`
/// control headers (which include every header above): Camel 2's RabbitMQ headers
/// (`rabbitmq.ROUTING_KEY`, `rabbitmq.EXCHANGE_NAME`, …), which a route may still
/// read or a producer obey.
pub(crate) const RESERVED_PREFIXES: &[&str] = &["rabbitmq."];

/// The exchange for the `attempt`-th run of `delivery` through the route.
pub(crate) fn to_exchange(delivery: &Delivery, attempt: u32) -> Exchange {
    let body = match std::str::from_utf8(&delivery.data) {
        Ok(text) => Body::from(text),
        Err(_) => Body::Bytes(delivery.data.clone().into()),
    };
    let mut exchange = Exchange::new(body);
    if let Some(headers) = delivery.properties.headers() {
        for (name, value) in headers.inner() {
            if !admits_transport_header(name.as_str(), RESERVED_PREFIXES) {
                continue;
            }
            if let Some(text) = header_text(value) {
                exchange.message.headers.insert(name.as_str(), text);
            }
        }
    }
    if delivery.redelivered {
        exchange
            .properties
            .insert(camel_api::error_kind::EXTERNAL_REDELIVERED, true);
    }
    exchange
        .with_header(ROUTING_KEY_HEADER, delivery.routing_key.as_str())
        .with_header(EXCHANGE_NAME_HEADER, delivery.exchange.as_str())
        .with_header(DELIVERY_TAG_HEADER, delivery.delivery_tag)
        .with_header(REDELIVERED_HEADER, delivery.redelivered)
        .with_header(DELIVERY_ATTEMPT_HEADER, u64::from(attempt))
}

/// The text of a header value the consumer maps: strings, booleans and integers.
/// Arrays and tables (`x-death`), byte arrays, floats, decimals, timestamps and void
/// are left out.
fn header_text(value: &AMQPValue) -> Option<String> {
    Some(match value {
        AMQPValue::LongString(s) => s.to_string(),
        AMQPValue::ShortString(s) => s.to_string(),
        AMQPValue::Boolean(b) => b.to_string(),
        AMQPValue::ShortShortInt(i) => i.to_string(),
        AMQPValue::ShortShortUInt(i) => i.to_string(),
        AMQPValue::ShortInt(i) => i.to_string(),
        AMQPValue::ShortUInt(i) => i.to_string(),
        AMQPValue::LongInt(i) => i.to_string(),
        AMQPValue::LongUInt(i) => i.to_string(),
        AMQPValue::LongLongInt(i) => i.to_string(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lapin::acker::Acker;
    use lapin::types::FieldTable;
    use lapin::BasicProperties;

    fn delivery(headers: &[(&str, AMQPValue)]) -> Delivery {
        let mut table = FieldTable::default();
        for (name, value) in headers {
            table.insert((*name).into(), value.clone());
        }
        Delivery {
            delivery_tag: 7,
            exchange: "orders".into(),
            routing_key: "created".into(),
            redelivered: false,
            properties: BasicProperties::default().with_headers(table),
            data: b"{}".to_vec(),
            acker: Acker::default(),
        }
    }

    fn text(value: &str) -> AMQPValue {
        AMQPValue::LongString(value.into())
    }

    #[test]
    fn control_and_reserved_headers_never_come_in() {
        let d = delivery(&[
            ("CamelSqlQuery", text("drop table orders")),
            ("camelhttpuri", text("http://127.0.0.1:8080/admin")),
            ("CamelRabbitmqRoutingKey", text("forged")),
            ("rabbitmq.ROUTING_KEY", text("forged")),
            ("order-id", text("42")),
            ("priority", AMQPValue::ShortShortUInt(3)),
        ]);
        let ex = to_exchange(&d, 2);
        assert!(ex.header("CamelSqlQuery").is_none());
        assert!(ex.header("camelhttpuri").is_none());
        assert!(ex.header("rabbitmq.ROUTING_KEY").is_none());
        assert_eq!(
            ex.header(ROUTING_KEY_HEADER).unwrap().to_string(),
            "created"
        );
        assert_eq!(ex.header("order-id").unwrap().to_string(), "42");
        assert_eq!(ex.header("priority").unwrap().to_string(), "3");
        assert_eq!(ex.header(DELIVERY_ATTEMPT_HEADER).unwrap().to_string(), "2");
    }
}
