//! `marshal`, `unmarshal` and `convert_body_to`.

use camel_api::suggest::{nearest, to_snake_case};
use camel_api::BoxProcessor;
use camel_eip::config::{ConvertBodyTo, DataFormat, Marshal, Unmarshal, DATA_FORMAT_NAMES};
use camel_eip::convert::{self, BodyType};
use camel_eip::dataformat;
use serde_json::Value as Json;

use crate::compiler::{StepCompiler, StepContext};
use crate::error::{RouteError, RouteErrorKind};
use crate::model::camel_dsl::{unsupported, Kind};

/// `marshal`/`unmarshal`: the format key is checked before the typed decode, so a Camel
/// format we lack gets ADR 0051's "known but unsupported" message and a misspelt one the
/// nearest format we have.
#[derive(Debug)]
pub(super) struct DataStep {
    pub(super) marshal: bool,
}

impl StepCompiler for DataStep {
    fn compile(&self, config: &Json, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
        let key = format_key(config, cx)?;
        let (format, processor): (DataFormat, fn(DataFormat) -> BoxProcessor) = if self.marshal {
            (cx.config::<Marshal>(config)?.0, convert::marshal)
        } else {
            (cx.config::<Unmarshal>(config)?.0, convert::unmarshal)
        };
        if let Err((field, reason)) = dataformat::check(&format) {
            return Err(cx.error_at(
                &format!("/{key}/{field}"),
                RouteErrorKind::InvalidValue(reason),
            ));
        }
        warn_without_effect(&format);
        Ok(processor(format))
    }
}

/// Camel options accepted for compatibility that change nothing here (ADR 0051).
fn warn_without_effect(format: &DataFormat) {
    let mut names = Vec::new();
    match format {
        DataFormat::Json(f) => {
            let ignored = [
                ("library", f.library.is_some()),
                ("include", f.include.is_some()),
                ("disable_features", f.disable_features.is_some()),
                ("enable_features", f.enable_features.is_some()),
            ];
            names.extend(
                ignored
                    .iter()
                    .filter(|(_, set)| *set)
                    .map(|(n, _)| n.to_string()),
            );
        }
        DataFormat::JacksonXml(f) if f.unmarshal_type.is_some() => {
            names.push("unmarshal_type".to_string());
        }
        DataFormat::Csv(f) if f.record_separator.is_some() => {
            names.push("record_separator".to_string());
        }
        _ => {}
    }
    if !names.is_empty() {
        crate::model::camel_dsl::warn_ignored("data format", &names);
    }
}

/// The one key naming the format (or the scalar `marshal: json`), checked to be a format
/// camel-rs implements.
fn format_key(config: &Json, cx: &StepContext<'_>) -> Result<String, RouteError> {
    let (key, at) = match config {
        Json::String(name) => (name.clone(), String::new()),
        Json::Object(map) if map.len() == 1 => {
            let key = map.keys().next().cloned().unwrap_or_default();
            let at = format!("/{key}");
            (key, at)
        }
        Json::Object(map) if map.len() > 1 => {
            let keys: Vec<&str> = map.keys().map(String::as_str).collect();
            return Err(cx.error(RouteErrorKind::InvalidValue(format!(
                "one data format per step, found {}",
                keys.join(", ")
            ))));
        }
        _ => {
            return Err(cx.error(RouteErrorKind::Missing(
                "a data format (`json: {}`, `csv: {}`, `jackson_xml: {}`, `base64: {}`, `gzip: {}`, `zip: {}`)".into(),
            )))
        }
    };
    if DATA_FORMAT_NAMES.contains(&key.as_str()) {
        return Ok(key);
    }
    let kind = match unsupported(Kind::DataFormat, &to_snake_case(&key)) {
        Some(message) => RouteErrorKind::InvalidValue(message),
        None => {
            let expected: Vec<String> = ["json", "csv", "jackson_xml", "base64", "gzip", "zip"]
                .map(String::from)
                .to_vec();
            RouteErrorKind::UnknownKey {
                suggestion: nearest(&key, expected.iter().map(String::as_str)).map(str::to_string),
                key,
                expected,
            }
        }
    };
    Err(if at.is_empty() {
        cx.error(kind)
    } else {
        cx.error_at(&at, kind)
    })
}

/// `convert_body_to: String` or `convert_body_to: {type: String}`.
pub(super) fn convert_body_to(
    config: ConvertBodyTo,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let to = BodyType::parse(&config.to).ok_or_else(|| {
        cx.error_at(
            "/type",
            RouteErrorKind::InvalidValue(format!(
                "cannot convert a body to `{}` (use String, bytes or json)",
                config.to
            )),
        )
    })?;
    let charset = match config.charset.as_deref() {
        None => convert::Charset::Utf8,
        Some(name) => convert::Charset::parse(name).ok_or_else(|| {
            cx.error_at(
                "/charset",
                RouteErrorKind::InvalidValue(format!(
                    "camel-rs does not support the charset `{name}` yet (UTF-8, US-ASCII or ISO-8859-1)"
                )),
            )
        })?,
    };
    Ok(convert::convert_body_to_with(
        to,
        charset,
        config.mandatory.unwrap_or(true),
    ))
}
