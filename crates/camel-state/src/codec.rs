//! An exchange as stored in a repository row (or a Redis hash field, camel-redis's
//! repositories): one JSON document.
//!
//! `{"headers": {…}, "properties": {…}, "body": {"text": …} | {"json": …} |
//! {"bytes": "hex"} | {}}`. Header and property values go through JSON
//! ([`Value::to_json`]), so a bytes header comes back as text. The exchange id is not kept:
//! a loaded exchange gets a new one.

use camel_api::{Body, CamelError, Exchange, Headers, Value};
use serde_json::{json, Value as Json};

/// The stored form of `ex`.
pub fn encode(ex: &Exchange) -> String {
    let map = |h: &Headers| -> Json {
        Json::Object(
            h.iter()
                .map(|(k, v)| (k.to_string(), v.to_json()))
                .collect(),
        )
    };
    let body = match &ex.message.body {
        Body::Empty => json!({}),
        Body::Text(t) => json!({ "text": &**t }),
        Body::Json(j) => json!({ "json": &**j }),
        Body::Bytes(b) => json!({ "bytes": hex(b) }),
    };
    json!({
        "headers": map(&ex.message.headers),
        "properties": map(&ex.properties),
        "body": body,
    })
    .to_string()
}

/// The exchange stored as `text`.
pub fn decode(text: &str) -> Result<Exchange, CamelError> {
    let bad = |why: &str| CamelError::conversion("stored exchange", why.to_string());
    let doc: Json = serde_json::from_str(text).map_err(|e| bad(&e.to_string()))?;
    let body = match doc.get("body").and_then(Json::as_object) {
        Some(b) => match (b.get("text"), b.get("json"), b.get("bytes")) {
            (Some(Json::String(t)), _, _) => Body::from(t.clone()),
            (_, Some(j), _) => Body::from(j.clone()),
            (_, _, Some(Json::String(h))) => {
                Body::from(unhex(h).ok_or_else(|| bad("bytes body is not hex"))?)
            }
            _ => Body::Empty,
        },
        None => return Err(bad("no body")),
    };
    let mut ex = Exchange::new(body);
    let fill = |target: &mut Headers, source: Option<&Json>| {
        if let Some(Json::Object(m)) = source {
            for (k, v) in m {
                target.insert(k.as_str(), Value::from_json(v.clone()));
            }
        }
    };
    fill(&mut ex.message.headers, doc.get("headers"));
    fill(&mut ex.properties, doc.get("properties"));
    Ok(ex)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_body_kind_round_trips_with_headers_and_properties() {
        for body in [
            Body::Empty,
            Body::from("text"),
            Body::from(json!([1, {"a": "b"}])),
            Body::from(vec![0u8, 255, 16]),
        ] {
            let mut ex = Exchange::new(body.clone()).with_header("h", 3);
            ex.properties.insert("CamelAggregatedSize", 2);
            let back = decode(&encode(&ex)).unwrap();
            assert_eq!(back.message.body, body);
            assert_eq!(back.header("h"), Some(&Value::from(3)));
            assert_eq!(back.property("CamelAggregatedSize"), Some(&Value::from(2)));
        }
        assert!(decode("{}").is_err());
        assert!(decode("not json").is_err());
    }
}
