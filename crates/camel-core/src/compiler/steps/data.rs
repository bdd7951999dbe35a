//! `marshal`, `unmarshal` and `convert_body_to`.

use camel_api::BoxProcessor;
use camel_eip::convert::{self, BodyType};
use serde_json::Value as Json;

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

/// Reads `{json: {...}}` (the only data format so far); returns its options.
fn json_format(
    config: &Json,
    cx: &StepContext<'_>,
) -> Result<serde_json::Map<String, Json>, RouteError> {
    let mut map = match config {
        Json::String(s) if s == "json" => return Ok(Default::default()),
        _ => cx.object(config)?,
    };
    let options = match map.remove("json") {
        Some(Json::Object(o)) => o,
        Some(Json::Null) => Default::default(),
        Some(_) => {
            return Err(cx.error_at(
                "/json",
                RouteErrorKind::InvalidValue("`json` takes a map of options".into()),
            ))
        }
        None => match map.keys().next() {
            Some(k) => {
                return Err(cx.error_at(
                    &format!("/{k}"),
                    RouteErrorKind::InvalidValue(format!(
                        "unsupported data format `{k}` (supported: json)"
                    )),
                ))
            }
            None => {
                return Err(cx.error(RouteErrorKind::Missing("a data format (`json: {}`)".into())))
            }
        },
    };
    cx.no_more_keys(&map, &["json"])?;
    Ok(options)
}

pub(super) fn marshal(config: &Json, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    let mut options = json_format(config, cx)?;
    options.remove("library");
    let pretty = options
        .remove("pretty_print")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    if let Some(k) = options.keys().next() {
        return Err(cx.error_at(
            &format!("/json/{k}"),
            RouteErrorKind::UnknownKey {
                key: k.clone(),
                suggestion: camel_api::suggest::nearest(k, ["pretty_print", "library"])
                    .map(str::to_string),
                expected: vec!["pretty_print".into(), "library".into()],
            },
        ));
    }
    Ok(convert::marshal_json(pretty))
}

pub(super) fn unmarshal(
    config: &Json,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let mut options = json_format(config, cx)?;
    options.remove("library");
    options.remove("unmarshal_type");
    if let Some(k) = options.keys().next() {
        return Err(cx.error_at(
            &format!("/json/{k}"),
            RouteErrorKind::UnknownKey {
                key: k.clone(),
                suggestion: camel_api::suggest::nearest(k, ["library"]).map(str::to_string),
                expected: vec!["library".into()],
            },
        ));
    }
    Ok(convert::unmarshal_json())
}

/// `convert_body_to: String` or `convert_body_to: {type: String}`.
pub(super) fn convert_body_to(
    config: &Json,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let (name, at) = match config {
        Json::String(s) => (s.clone(), ""),
        _ => {
            let mut map = cx.object(config)?;
            let name = map
                .remove("type")
                .and_then(|v| v.as_str().map(str::to_string))
                .ok_or_else(|| cx.error(RouteErrorKind::Missing("type".into())))?;
            cx.no_more_keys(&map, &["type"])?;
            (name, "/type")
        }
    };
    let to = BodyType::parse(&name).ok_or_else(|| {
        cx.error_at(
            at,
            RouteErrorKind::InvalidValue(format!(
                "cannot convert a body to `{name}` (use String, bytes or json)"
            )),
        )
    })?;
    Ok(convert::convert_body_to(to))
}
