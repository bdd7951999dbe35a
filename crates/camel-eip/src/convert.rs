//! Body conversions: `marshal`/`unmarshal` (JSON) and `convert_body_to`.

use std::sync::Arc;

use camel_api::{Body, BoxProcessor, CamelError, Exchange};

/// Target types of `convert_body_to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyType {
    /// Text (`String`, `java.lang.String`).
    Text,
    /// Bytes (`byte[]`, `Bytes`).
    Bytes,
    /// A parsed JSON document (`Json`).
    Json,
}

impl BodyType {
    /// Parses a type name; Camel's Java names are accepted.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name.trim() {
            "String" | "string" | "text" | "java.lang.String" => BodyType::Text,
            "bytes" | "Bytes" | "byte[]" | "[B" => BodyType::Bytes,
            "json" | "Json" | "JSON" => BodyType::Json,
            _ => return None,
        })
    }
}

fn convert(body: &Body, to: BodyType) -> Result<Body, CamelError> {
    Ok(match to {
        BodyType::Text => match body {
            Body::Text(_) | Body::Empty => body.clone(),
            Body::Bytes(b) => Body::Text(
                std::str::from_utf8(b)
                    .map_err(|e| CamelError::conversion("text", e))?
                    .into(),
            ),
            Body::Json(j) => Body::Text(j.to_string().into()),
        },
        BodyType::Bytes => match body {
            Body::Bytes(_) | Body::Empty => body.clone(),
            other => Body::Bytes(other.to_bytes()),
        },
        BodyType::Json => match body {
            Body::Json(_) => body.clone(),
            other => Body::Json(Arc::new(other.to_json()?)),
        },
    })
}

/// `convert_body_to`: converts the body, failing with a conversion error when it cannot.
pub fn convert_body_to(to: BodyType) -> BoxProcessor {
    BoxProcessor::sync(move |mut ex: Exchange| {
        ex.message.body = convert(&ex.message.body, to)?;
        Ok(ex)
    })
    .named("convert_body_to")
}

/// `unmarshal: {json: {}}`: parses a text or bytes body into JSON.
pub fn unmarshal_json() -> BoxProcessor {
    convert_body_to(BodyType::Json).named("unmarshal")
}

/// `marshal: {json: {}}`: serialises the body as JSON text (text stays a JSON string).
pub fn marshal_json(pretty: bool) -> BoxProcessor {
    BoxProcessor::sync(move |mut ex: Exchange| {
        let json = match &ex.message.body {
            Body::Json(j) => (**j).clone(),
            Body::Empty => serde_json::Value::Null,
            Body::Text(s) => serde_json::Value::String(s.to_string()),
            Body::Bytes(b) => serde_json::Value::String(String::from_utf8_lossy(b).into_owned()),
        };
        let text = if pretty {
            serde_json::to_string_pretty(&json)
        } else {
            serde_json::to_string(&json)
        }
        .map_err(|e| CamelError::conversion("json", e))?;
        ex.message.body = Body::Text(text.into());
        Ok(ex)
    })
    .named("marshal")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn unmarshal_then_marshal_round_trips() {
        let p = camel_api::BoxProcessor::clone(&unmarshal_json());
        let ex = p.process(Exchange::new(r#"{"a":1}"#)).await.unwrap();
        assert!(matches!(ex.message.body, Body::Json(_)));
        let ex = marshal_json(false).process(ex).await.unwrap();
        assert_eq!(ex.message.body.as_text().as_deref(), Some(r#"{"a":1}"#));
    }

    #[tokio::test]
    async fn bad_json_is_a_conversion_error() {
        let err = unmarshal_json()
            .process(Exchange::new("{nope"))
            .await
            .unwrap_err();
        assert!(matches!(err, CamelError::Conversion { .. }), "{err}");
    }
}
