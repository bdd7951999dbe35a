//! Exchange ↔ outbox message: what the producer stores and what the relay hands a route.

use bytes::Bytes;
use camel_api::{Body, Exchange, Value};

use crate::headers;
use crate::message::{NewMessage, PayloadKind, StoredMessage};

/// The message an exchange publishes: its headers (as JSON) and its body.
pub(crate) fn to_message(exchange: &Exchange, group_key: Option<String>) -> NewMessage {
    let headers = exchange
        .message
        .headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_json()))
        .collect();
    let (payload, kind) = match &exchange.message.body {
        Body::Empty => (Bytes::new(), PayloadKind::Empty),
        Body::Bytes(b) => (b.clone(), PayloadKind::Bytes),
        Body::Text(t) => (Bytes::copy_from_slice(t.as_bytes()), PayloadKind::Text),
        Body::Json(j) => (Bytes::from(j.to_string()), PayloadKind::Json),
    };
    NewMessage {
        group_key,
        headers,
        payload,
        kind,
    }
}

/// The exchange a relayed message becomes, with the outbox headers set.
pub(crate) fn to_exchange(outbox: &str, message: StoredMessage) -> Exchange {
    let body = match message.kind {
        PayloadKind::Empty => Body::Empty,
        PayloadKind::Bytes => Body::Bytes(message.payload),
        PayloadKind::Text => match String::from_utf8(message.payload.to_vec()) {
            Ok(s) => Body::from(s),
            Err(_) => Body::Bytes(message.payload),
        },
        PayloadKind::Json => match serde_json::from_slice::<serde_json::Value>(&message.payload) {
            Ok(j) => Body::from(j),
            Err(_) => Body::Bytes(message.payload),
        },
    };
    let mut exchange = Exchange::new(body);
    for (k, v) in message.headers {
        exchange.message.headers.insert(k, Value::from_json(v));
    }
    exchange.message.headers.insert(headers::ID, message.id);
    exchange.message.headers.insert(headers::NAME, outbox);
    if let Some(g) = message.group_key {
        exchange.message.headers.insert(headers::GROUP_KEY, g);
    }
    exchange
        .message
        .headers
        .insert(headers::ATTEMPT, i64::from(message.attempts) + 1);
    exchange
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(m: NewMessage) -> StoredMessage {
        StoredMessage {
            id: 7,
            partition: 0,
            group_key: m.group_key,
            headers: m.headers,
            payload: m.payload,
            kind: m.kind,
            attempts: 2,
            retry_at_ms: None,
            created_at_ms: 0,
        }
    }

    #[test]
    fn round_trips_headers_and_body_kinds() {
        let ex = Exchange::new(Body::from(serde_json::json!({"a": 1}))).with_header("n", 5i64);
        let back = to_exchange("orders", stored(to_message(&ex, Some("g".into()))));
        assert_eq!(back.message.body, ex.message.body);
        assert_eq!(back.header("n"), Some(&Value::Int(5)));
        assert_eq!(back.header(headers::ID), Some(&Value::Int(7)));
        assert_eq!(back.header(headers::NAME), Some(&Value::from("orders")));
        assert_eq!(back.header(headers::GROUP_KEY), Some(&Value::from("g")));
        assert_eq!(back.header(headers::ATTEMPT), Some(&Value::Int(3)));
        let text = to_exchange("orders", stored(to_message(&Exchange::new("hi"), None)));
        assert_eq!(text.message.body.as_text().as_deref(), Some("hi"));
        assert!(text.header(headers::GROUP_KEY).is_none());
    }
}
