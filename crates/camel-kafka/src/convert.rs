//! Records to exchanges and exchange headers to record headers.

use bytes::Bytes;
use camel_api::inbound::admits_transport_header;
use camel_api::{Body, Exchange, StripedName, Value};
use rdkafka::message::{Header, Headers, OwnedHeaders, OwnedMessage};
use rdkafka::Message;

use crate::config::HeaderSelection;
use crate::headers;

/// The prefix of the headers the consumer sets and the producer obeys: a record header
/// under it never reaches the exchange (Camel's `KafkaHeaderFilterStrategy` does the same).
const RESERVED: &[&str] = &["kafka."];

/// The names of Camel's `kafka.*` headers and the topic as a value, kept once per
/// consumer (and per stripe of threads, so two threads do not share one reference count):
/// building an exchange then allocates no header name.
#[derive(Debug)]
pub(crate) struct RecordNames {
    topic_name: StripedName,
    partition: StripedName,
    offset: StripedName,
    key: StripedName,
    timestamp: StripedName,
    message_timestamp: StripedName,
    topic: StripedName,
}

impl RecordNames {
    pub(crate) fn new(topic: &str) -> Self {
        RecordNames {
            topic_name: StripedName::new(headers::TOPIC),
            partition: StripedName::new(headers::PARTITION),
            offset: StripedName::new(headers::OFFSET),
            key: StripedName::new(headers::KEY),
            timestamp: StripedName::new(headers::TIMESTAMP),
            message_timestamp: StripedName::new(headers::MESSAGE_TIMESTAMP),
            topic: StripedName::new(topic),
        }
    }

    /// The subscribed topic's name, shared.
    pub(crate) fn topic(&self) -> &std::sync::Arc<str> {
        self.topic.get()
    }
}

/// A record as the route sees it: the payload as the body (text when it is UTF-8), its
/// Kafka headers as headers except those [`admits_transport_header`] refuses (`Camel…`,
/// the destination headers, anything under `kafka.`), and `kafka.TOPIC`,
/// `kafka.PARTITION`, `kafka.OFFSET`, `kafka.KEY` (when it has one), `kafka.TIMESTAMP` and
/// `CamelMessageTimestamp` (milliseconds, when it has one).
pub(crate) fn to_exchange(record: &impl Message, topic: &str, names: &RecordNames) -> Exchange {
    let body = match record.payload() {
        None => Body::Empty,
        Some(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => Body::from(text),
            Err(_) => Body::Bytes(Bytes::copy_from_slice(bytes)),
        },
    };
    let mut exchange = Exchange::new(body);
    let h = &mut exchange.message.headers;
    let record_headers = record.headers().filter(|hs| hs.count() > 0);
    h.reserve(6 + record_headers.map_or(0, |hs| hs.count()));
    // A record's headers are the publisher's: a control header (`Camel…`, a destination
    // header such as `kafka.OVERRIDE_TOPIC`) or any `kafka.` name is left out, so the
    // names below are new to the set and are added without a lookup.
    if let Some(record_headers) = record_headers {
        for header in record_headers.iter() {
            if !admits_transport_header(header.key, RESERVED) {
                continue;
            }
            let value = match header.value {
                None => Value::Null,
                Some(v) => bytes_value(v),
            };
            h.insert(header.key, value);
        }
    }
    // A record from another topic (a pattern subscription) names its own.
    let topic = if topic == &**names.topic.get() {
        Value::Text(names.topic.get().clone())
    } else {
        Value::from(topic)
    };
    h.append(names.topic_name.get(), topic);
    h.append(
        names.partition.get(),
        Value::Int(i64::from(record.partition())),
    );
    h.append(names.offset.get(), Value::Int(record.offset()));
    if let Some(key) = record.key() {
        h.append(names.key.get(), bytes_value(key));
    }
    if let Some(ms) = record.timestamp().to_millis() {
        h.append(names.timestamp.get(), Value::Int(ms));
        // Camel's message timestamp (`${messageTimestamp}` in simple).
        h.append(names.message_timestamp.get(), Value::Int(ms));
    }
    exchange
}

fn bytes_value(bytes: &[u8]) -> Value {
    match std::str::from_utf8(bytes) {
        Ok(text) => Value::from(text),
        Err(_) => Value::Bytes(Bytes::copy_from_slice(bytes)),
    }
}

/// A header value as record bytes: text as UTF-8, numbers and booleans as their text,
/// JSON as its text; `None` for null.
pub(crate) fn value_bytes(value: &Value) -> Option<Bytes> {
    match value {
        Value::Null => None,
        Value::Text(s) => Some(Bytes::copy_from_slice(s.as_bytes())),
        Value::Bytes(b) => Some(b.clone()),
        Value::Bool(b) => Some(Bytes::from(b.to_string())),
        Value::Int(i) => Some(Bytes::from(i.to_string())),
        Value::Float(f) => Some(Bytes::from(f.to_string())),
        Value::Json(j) => Some(Bytes::from(j.to_string())),
    }
}

/// True for headers that never leave the process as record headers: the control headers
/// and the `kafka.` ones this component reads or sets (Camel's Kafka header filter does
/// the same); the same names a consumer refuses to take in.
fn internal(name: &str) -> bool {
    !admits_transport_header(name, RESERVED)
}

/// The record headers for `exchange` under `selection`.
pub(crate) fn record_headers(exchange: &Exchange, selection: &HeaderSelection) -> OwnedHeaders {
    let mut out = OwnedHeaders::new();
    let mut add = |name: &str, value: &Value| {
        let bytes = value_bytes(value);
        out = std::mem::take(&mut out).insert(Header {
            key: name,
            value: bytes.as_deref(),
        });
    };
    match selection {
        HeaderSelection::None => {}
        HeaderSelection::All => {
            for (name, value) in exchange.message.headers.iter() {
                if !internal(name) {
                    add(name, value);
                }
            }
        }
        HeaderSelection::Named(names) => {
            for name in names {
                if let Some(value) = exchange.header(name) {
                    add(name, value);
                }
            }
        }
    }
    out
}

/// A failed record as it goes to the dead-letter topic: same key, payload and headers,
/// plus `kafka.DLT_ERROR`, `kafka.DLT_TOPIC`, `kafka.DLT_PARTITION`, `kafka.DLT_OFFSET`.
pub(crate) fn dead_letter_headers(record: &OwnedMessage, error: &str) -> OwnedHeaders {
    let mut out = OwnedHeaders::new();
    if let Some(hs) = record.headers() {
        for h in hs.iter() {
            out = out.insert(Header {
                key: h.key,
                value: h.value,
            });
        }
    }
    let partition = record.partition().to_string();
    let offset = record.offset().to_string();
    for (key, value) in [
        (headers::DLT_ERROR, error),
        (headers::DLT_TOPIC, record.topic()),
        (headers::DLT_PARTITION, partition.as_str()),
        (headers::DLT_OFFSET, offset.as_str()),
    ] {
        out = out.insert(Header {
            key,
            value: Some(value.as_bytes()),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdkafka::Timestamp;

    #[test]
    fn a_record_becomes_an_exchange_with_camels_header_names() {
        let hs = OwnedHeaders::new()
            .insert(Header {
                key: "trace",
                value: Some("abc"),
            })
            .insert(Header {
                key: "raw",
                value: Some(&[0xffu8, 0x00][..]),
            });
        let record = OwnedMessage::new(
            Some(b"{\"a\":1}".to_vec()),
            Some(b"k1".to_vec()),
            "orders".into(),
            Timestamp::CreateTime(1_700_000_000_000),
            3,
            42,
            Some(hs),
        );
        let ex = to_exchange(&record, "orders", &RecordNames::new("orders"));
        assert_eq!(ex.message.body.as_text().as_deref(), Some("{\"a\":1}"));
        assert_eq!(ex.header(headers::KEY), Some(&Value::from("k1")));
        assert_eq!(ex.header(headers::PARTITION), Some(&Value::Int(3)));
        assert_eq!(ex.header(headers::OFFSET), Some(&Value::Int(42)));
        assert_eq!(ex.header(headers::TOPIC), Some(&Value::from("orders")));
        assert_eq!(
            ex.header(headers::TIMESTAMP),
            Some(&Value::Int(1_700_000_000_000))
        );
        assert_eq!(
            ex.header(headers::MESSAGE_TIMESTAMP),
            Some(&Value::Int(1_700_000_000_000))
        );
        assert_eq!(ex.header("trace"), Some(&Value::from("abc")));
        assert!(matches!(ex.header("raw"), Some(Value::Bytes(_))));
    }

    #[test]
    fn a_record_without_headers_gets_each_kafka_header_once() {
        let record = OwnedMessage::new(
            Some(b"x".to_vec()),
            Some(b"k".to_vec()),
            "orders".into(),
            Timestamp::CreateTime(5),
            0,
            9,
            None,
        );
        let ex = to_exchange(&record, "orders", &RecordNames::new("orders"));
        let names: Vec<&str> = ex.message.headers.iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                headers::TOPIC,
                headers::PARTITION,
                headers::OFFSET,
                headers::KEY,
                headers::TIMESTAMP,
                headers::MESSAGE_TIMESTAMP
            ]
        );
    }

    #[test]
    fn control_and_kafka_record_headers_never_reach_the_exchange() {
        let mut hs = OwnedHeaders::new();
        for key in [
            "CamelSqlQuery",
            "camelhttpuri",
            "CamelMessageTimestamp",
            headers::OVERRIDE_TOPIC,
            headers::PARTITION_KEY,
            headers::KEY,
            "KAFKA.offset",
            "trace",
        ] {
            hs = hs.insert(Header {
                key,
                value: Some("forged"),
            });
        }
        let record = OwnedMessage::new(
            None,
            Some(b"real".to_vec()),
            "orders".into(),
            Timestamp::CreateTime(7),
            0,
            1,
            Some(hs),
        );
        let ex = to_exchange(&record, "orders", &RecordNames::new("orders"));
        let names: Vec<&str> = ex.message.headers.iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "trace",
                headers::TOPIC,
                headers::PARTITION,
                headers::OFFSET,
                headers::KEY,
                headers::TIMESTAMP,
                headers::MESSAGE_TIMESTAMP
            ],
            "each name once, none of the forged ones"
        );
        assert_eq!(ex.header(headers::KEY), Some(&Value::from("real")));
        assert_eq!(ex.header(headers::MESSAGE_TIMESTAMP), Some(&Value::Int(7)));
    }

    #[test]
    fn camel_and_kafka_headers_stay_in_the_process() {
        let ex = Exchange::new("x")
            .with_header("CamelOutboxId", 5)
            .with_header("kafka.KEY", "k")
            .with_header("tenant", "t1")
            .with_header("n", 7);
        let hs = record_headers(&ex, &HeaderSelection::All);
        let names: Vec<&str> = hs.iter().map(|h| h.key).collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names.contains(&"tenant") && names.contains(&"n"));
        let hs = record_headers(&ex, &HeaderSelection::Named(vec!["n".into()]));
        assert_eq!(hs.get(0).value, Some(&b"7"[..]));
        assert_eq!(record_headers(&ex, &HeaderSelection::None).count(), 0);
    }
}
