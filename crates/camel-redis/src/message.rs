//! Camel's Redis headers, and the mapping between exchanges and stream entries.

use std::collections::HashMap;

use bytes::Bytes;
use camel_api::inbound::admits_transport_header;
use camel_api::{Body, Exchange};
use redis::Value;

/// Header: the command a producer runs (Camel's name).
pub const COMMAND_HEADER: &str = "CamelRedis.Command";
/// Header: the key (Camel's name); on a stream consumer, the stream.
pub const KEY_HEADER: &str = "CamelRedis.Key";
/// Header: the hash field (Camel's name).
pub const FIELD_HEADER: &str = "CamelRedis.Field";
/// Header: the value to write (Camel's name; the body when absent).
pub const VALUE_HEADER: &str = "CamelRedis.Value";
/// Header: the pub/sub channel (Camel's name).
pub const CHANNEL_HEADER: &str = "CamelRedis.Channel";
/// Header: the message a PUBLISH sends (Camel's name; the body when absent).
pub const MESSAGE_HEADER: &str = "CamelRedis.Message";
/// Header: the pattern that matched, on a PSUBSCRIBE consumer (Camel's name).
pub const PATTERN_HEADER: &str = "CamelRedis.Pattern";
/// Header: the stream a stream consumer read the entry from (ours; not `CamelRedis.Key`,
/// which a later `XADD` step would take as its destination).
pub const STREAM_HEADER: &str = "CamelRedis.Stream";
/// Header: a stream entry's id (ours).
pub const STREAM_ID_HEADER: &str = "CamelRedis.StreamId";
/// Header: true when the entry was claimed from another consumer or after a failure
/// (ours).
pub const CLAIMED_HEADER: &str = "CamelRedis.Claimed";

/// The stream field that carries the body; every other field is a header.
pub const BODY_FIELD: &str = "body";

/// Text when the bytes are UTF-8, bytes otherwise.
pub(crate) fn body_of(bytes: &[u8]) -> Body {
    match std::str::from_utf8(bytes) {
        Ok(text) => Body::from(text),
        Err(_) => Body::Bytes(Bytes::copy_from_slice(bytes)),
    }
}

/// A reply as text, when it is one.
pub(crate) fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        Value::Int(i) => Some(i.to_string()),
        Value::Okay => Some("OK".into()),
        Value::Double(d) => Some(d.to_string()),
        _ => None,
    }
}

/// The exchange for stream entry `id` of `stream`: the `body` field as the body, every
/// other field as a header unless it is a control header (`Camel*`, …).
pub(crate) fn entry_exchange(
    stream: &str,
    id: &str,
    fields: &HashMap<String, Value>,
    claimed: bool,
) -> Exchange {
    let body = match fields.get(BODY_FIELD) {
        Some(Value::BulkString(b)) => body_of(b),
        Some(other) => text_of(other).map(Body::from).unwrap_or(Body::Empty),
        None => Body::Empty,
    };
    let mut exchange = Exchange::new(body);
    for (name, value) in fields {
        if name == BODY_FIELD || !admits_transport_header(name, &[]) {
            continue;
        }
        if let Some(text) = text_of(value) {
            exchange.message.headers.insert(name.as_str(), text);
        }
    }
    if claimed {
        exchange
            .properties
            .insert(camel_api::error_kind::EXTERNAL_REDELIVERED, true);
    }
    exchange
        .with_header(STREAM_HEADER, stream)
        .with_header(STREAM_ID_HEADER, id)
        .with_header(CLAIMED_HEADER, claimed)
}

/// The fields XADD writes for `exchange`: `body`, then the headers that may cross a
/// broker (never `Camel*` or destination headers).
pub(crate) fn entry_fields(exchange: &Exchange) -> Vec<(String, Vec<u8>)> {
    let mut fields = vec![(
        BODY_FIELD.to_string(),
        exchange.message.body.to_bytes().to_vec(),
    )];
    for (name, value) in exchange.message.headers.iter() {
        if name != BODY_FIELD && admits_transport_header(name, &[]) {
            fields.push((name.to_string(), value.to_string().into_bytes()));
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_brings_no_control_header_and_round_trips() {
        let ex = Exchange::new("hi")
            .with_header("tenant", "acme")
            .with_header("CamelSqlQuery", "drop");
        let fields = entry_fields(&ex);
        assert_eq!(fields.len(), 2, "{fields:?}");
        let mut map: HashMap<String, Value> = fields
            .into_iter()
            .map(|(k, v)| (k, Value::BulkString(v)))
            .collect();
        map.insert(
            "CamelRedis.Key".into(),
            Value::BulkString(b"forged".to_vec()),
        );
        map.insert("camelhttpuri".into(), Value::BulkString(b"x".to_vec()));
        let back = entry_exchange("orders", "1-0", &map, true);
        assert_eq!(back.message.body.as_text().as_deref(), Some("hi"));
        assert_eq!(back.header("tenant").unwrap().to_string(), "acme");
        assert!(back.header("camelhttpuri").is_none());
        assert_eq!(back.header(STREAM_HEADER).unwrap().to_string(), "orders");
        assert!(back.header(KEY_HEADER).is_none());
        assert_eq!(back.header(CLAIMED_HEADER).unwrap().to_string(), "true");
    }
}
