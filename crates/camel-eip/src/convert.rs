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
    /// Bytes (`byte[]`, `Bytes`; also `java.io.InputStream`, a stream of bytes, as the
    /// catalog's FTP source Kamelets ask for).
    Bytes,
    /// A parsed JSON document (`Json`).
    Json,
}

impl BodyType {
    /// Parses a type name; Camel's Java names are accepted.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name.trim() {
            "String" | "string" | "text" | "java.lang.String" => BodyType::Text,
            "bytes" | "Bytes" | "byte[]" | "[B" | "java.io.InputStream" | "InputStream" => {
                BodyType::Bytes
            }
            "json" | "Json" | "JSON" => BodyType::Json,
            _ => return None,
        })
    }
}

/// The character sets `convert_body_to` and `convert_header_to` read and write text in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Charset {
    /// UTF-8, the default.
    #[default]
    Utf8,
    /// 7-bit ASCII: a byte or character above 127 is a conversion error.
    Ascii,
    /// ISO-8859-1 (Latin-1): each byte is the character of the same number.
    Latin1,
}

impl Charset {
    /// Parses a charset name as Java spells it (case ignored).
    pub fn parse(name: &str) -> Option<Self> {
        Some(
            match name.trim().to_ascii_uppercase().replace('_', "-").as_str() {
                "UTF-8" | "UTF8" => Charset::Utf8,
                "US-ASCII" | "ASCII" => Charset::Ascii,
                "ISO-8859-1" | "ISO8859-1" | "LATIN1" | "LATIN-1" => Charset::Latin1,
                _ => return None,
            },
        )
    }

    /// The charset's name as Java spells it.
    pub fn name(self) -> &'static str {
        match self {
            Charset::Utf8 => "UTF-8",
            Charset::Ascii => "US-ASCII",
            Charset::Latin1 => "ISO-8859-1",
        }
    }

    pub(crate) fn decode(self, bytes: &[u8]) -> Result<String, CamelError> {
        match self {
            Charset::Utf8 => std::str::from_utf8(bytes)
                .map(str::to_owned)
                .map_err(|e| CamelError::conversion("text", e)),
            Charset::Ascii if !bytes.is_ascii() => Err(CamelError::conversion(
                "text",
                "a byte above 127 is not US-ASCII",
            )),
            Charset::Ascii | Charset::Latin1 => Ok(bytes.iter().map(|&b| b as char).collect()),
        }
    }

    pub(crate) fn encode(self, text: &str) -> Result<Vec<u8>, CamelError> {
        let limit = match self {
            Charset::Utf8 => return Ok(text.as_bytes().to_vec()),
            Charset::Ascii => 0x7F,
            Charset::Latin1 => 0xFF,
        };
        text.chars()
            .map(|c| {
                u8::try_from(u32::from(c))
                    .ok()
                    .filter(|b| u32::from(*b) <= limit)
                    .ok_or_else(|| {
                        CamelError::conversion("bytes", format!("`{c}` is outside {}", self.name()))
                    })
            })
            .collect()
    }
}

fn convert(body: &Body, to: BodyType, charset: Charset) -> Result<Body, CamelError> {
    Ok(match to {
        BodyType::Text => match body {
            Body::Text(_) | Body::Empty => body.clone(),
            Body::Bytes(b) => Body::Text(charset.decode(b)?.into()),
            Body::Json(j) => Body::Text(j.to_string().into()),
        },
        BodyType::Bytes => match body {
            Body::Bytes(_) | Body::Empty => body.clone(),
            Body::Text(t) if charset != Charset::Utf8 => Body::Bytes(charset.encode(t)?.into()),
            other => Body::Bytes(other.to_bytes()),
        },
        BodyType::Json => match body {
            Body::Json(_) => body.clone(),
            Body::Bytes(b) if charset != Charset::Utf8 => {
                Body::Json(Arc::new(Body::Text(charset.decode(b)?.into()).to_json()?))
            }
            other => Body::Json(Arc::new(other.to_json()?)),
        },
    })
}

/// `convert_body_to`: converts the body, failing with a conversion error when it cannot.
pub fn convert_body_to(to: BodyType) -> BoxProcessor {
    convert_body_to_with(to, Charset::Utf8, true)
}

/// `convert_body_to` with a charset, and with `mandatory: false` a body that cannot be
/// converted made empty instead of failing the exchange.
pub fn convert_body_to_with(to: BodyType, charset: Charset, mandatory: bool) -> BoxProcessor {
    BoxProcessor::sync(move |mut ex: Exchange| {
        ex.message.body = match convert(&ex.message.body, to, charset) {
            Ok(body) => body,
            Err(_) if !mandatory => Body::Empty,
            Err(e) => return Err(e),
        };
        Ok(ex)
    })
    .named("convert_body_to")
}

#[cfg(test)]
mod charset_tests {
    use super::*;

    fn run(
        body: Body,
        to: BodyType,
        charset: Charset,
        mandatory: bool,
    ) -> Result<Body, CamelError> {
        let p = convert_body_to_with(to, charset, mandatory);
        futures::executor::block_on(p.process(Exchange::new(body))).map(|ex| ex.message.body)
    }

    #[test]
    fn latin1_and_ascii_read_and_write_their_bytes() {
        let latin = Body::Bytes(vec![0x63, 0x61, 0x66, 0xE9].into());
        assert_eq!(
            run(latin.clone(), BodyType::Text, Charset::Latin1, true).unwrap(),
            Body::Text("café".into())
        );
        assert!(run(latin.clone(), BodyType::Text, Charset::Utf8, true).is_err());
        assert!(run(latin.clone(), BodyType::Text, Charset::Ascii, true).is_err());
        assert_eq!(
            run(latin, BodyType::Text, Charset::Ascii, false).unwrap(),
            Body::Empty
        );
        let bytes = run(
            Body::Text("café".into()),
            BodyType::Bytes,
            Charset::Latin1,
            true,
        )
        .unwrap();
        assert_eq!(bytes, Body::Bytes(vec![0x63, 0x61, 0x66, 0xE9].into()));
        assert!(run(
            Body::Text("€".into()),
            BodyType::Bytes,
            Charset::Latin1,
            true
        )
        .is_err());
        assert_eq!(Charset::parse("iso-8859-1"), Some(Charset::Latin1));
        assert_eq!(
            BodyType::parse("java.io.InputStream"),
            Some(BodyType::Bytes)
        );
        assert_eq!(Charset::parse("UTF-16"), None);
    }
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
        dataformat::marshal_exchange(&format, &mut ex)?;
        Ok(ex)
    })
    .named("marshal")
}

/// `unmarshal`: reads the body as `format` (see [`crate::dataformat`]).
pub fn unmarshal(format: DataFormat) -> BoxProcessor {
    BoxProcessor::sync(move |mut ex: Exchange| {
        dataformat::unmarshal_exchange(&format, &mut ex)?;
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
