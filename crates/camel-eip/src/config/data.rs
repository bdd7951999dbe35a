//! `marshal`, `unmarshal` and `convert_body_to`.

use camel_api::definition::StepConfig;
use serde::{Deserialize, Deserializer, Serialize};

/// `marshal: {json: {pretty_print: true}}` or `marshal: json`. JSON is the one data format
/// so far; another format's key is refused as unknown.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Marshal {
    /// The JSON data format.
    #[serde(default, deserialize_with = "present")]
    pub json: Option<JsonMarshal>,
}

/// Options of JSON marshalling.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonMarshal {
    /// Accepted for Camel compatibility (Jackson, Gson…); serde_json is always used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// Indent the output.
    #[serde(default, alias = "prettyPrint", skip_serializing_if = "is_false")]
    pub pretty_print: bool,
}

/// `unmarshal: {json: {}}` or `unmarshal: json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unmarshal {
    /// The JSON data format.
    #[serde(default, deserialize_with = "present")]
    pub json: Option<JsonUnmarshal>,
}

/// Options of JSON unmarshalling.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonUnmarshal {
    /// Accepted for Camel compatibility; serde_json is always used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// Accepted for Camel compatibility (a Java class name); the body becomes JSON.
    #[serde(
        default,
        alias = "unmarshalType",
        skip_serializing_if = "Option::is_none"
    )]
    pub unmarshal_type: Option<serde_json::Value>,
}

impl StepConfig for Marshal {
    const NAME: &'static str = "marshal";

    fn from_scalar(text: &str) -> Option<Self> {
        (text == "json").then(|| Marshal {
            json: Some(JsonMarshal::default()),
        })
    }
}

impl StepConfig for Unmarshal {
    const NAME: &'static str = "unmarshal";

    fn from_scalar(text: &str) -> Option<Self> {
        (text == "json").then(|| Unmarshal {
            json: Some(JsonUnmarshal::default()),
        })
    }
}

/// `convert_body_to: {type: String}` or `convert_body_to: String`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConvertBodyTo {
    /// `String`, `bytes` or `json` (Camel's Java class names are accepted too).
    #[serde(rename = "type")]
    pub to: String,
}

impl StepConfig for ConvertBodyTo {
    const NAME: &'static str = "convert_body_to";

    fn from_scalar(text: &str) -> Option<Self> {
        Some(ConvertBodyTo { to: text.into() })
    }
}

impl From<crate::convert::BodyType> for ConvertBodyTo {
    fn from(to: crate::convert::BodyType) -> Self {
        use crate::convert::BodyType;
        let name = match to {
            BodyType::Text => "String",
            BodyType::Bytes => "bytes",
            BodyType::Json => "json",
        };
        ConvertBodyTo { to: name.into() }
    }
}

/// A key written with no value (`json:`) means the format with its defaults.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(
    d: D,
) -> Result<Option<T>, D::Error> {
    Ok(Some(Option::<T>::deserialize(d)?.unwrap_or_default()))
}

fn is_false(b: &bool) -> bool {
    !*b
}
