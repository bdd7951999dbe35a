//! Body conversions: `marshal`/`unmarshal` (the data formats) and `convert_body_to`.

use std::sync::Arc;

use camel_api::{Body, BoxProcessor, CamelError, Exchange};

use crate::config::DataFormat;
use crate::dataformat;

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
    unmarshal(DataFormat::Json(Default::default()))
}

/// `marshal: {json: {}}`: serialises the body as JSON text (text stays a JSON string).
pub fn marshal_json(pretty: bool) -> BoxProcessor {
    marshal(DataFormat::Json(DataFormat::json().pretty_print(pretty)))
}

/// `marshal`: writes the body in `format` (see [`crate::dataformat`]).
pub fn marshal(format: DataFormat) -> BoxProcessor {
    BoxProcessor::sync(move |mut ex: Exchange| {
        ex.message.body = dataformat::marshal(&format, &ex.message.body)?;
        Ok(ex)
    })
    .named("marshal")
}

/// `unmarshal`: reads the body as `format` (see [`crate::dataformat`]).
pub fn unmarshal(format: DataFormat) -> BoxProcessor {
    BoxProcessor::sync(move |mut ex: Exchange| {
        ex.message.body = dataformat::unmarshal(&format, &ex.message.body)?;
        Ok(ex)
    })
    .named("unmarshal")
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
