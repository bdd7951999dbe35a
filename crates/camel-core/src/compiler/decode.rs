//! Typed decoding of step configurations with errors that point at the offending key.

use camel_api::suggest::nearest;
use serde::de::DeserializeOwned;
use serde_json::Value as Json;

use crate::error::RouteErrorKind;

/// Decodes `config` into `T`; on failure returns the JSON path below the config (for the
/// location) and the error kind (an unknown key gets a suggestion).
pub(crate) fn decode<T: DeserializeOwned>(config: &Json) -> Result<T, (String, RouteErrorKind)> {
    let config = if config.is_null() {
        Json::Object(Default::default())
    } else {
        config.clone()
    };
    serde_path_to_error::deserialize::<_, T>(config).map_err(|e| {
        let path = e.path().to_string();
        let message = e.inner().to_string();
        let pointer = if path == "." {
            String::new()
        } else {
            format!("/{}", path.replace('.', "/"))
        };
        (pointer, classify(&message))
    })
}

/// Turns serde's "unknown field `x`, expected one of `a`, `b`" into a typed unknown-key
/// error with a suggestion; other messages stay as they are.
fn classify(message: &str) -> RouteErrorKind {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let key = rest.split('`').next().unwrap_or_default().to_string();
        let expected: Vec<String> = rest
            .split_once("expected")
            .map(|(_, list)| {
                list.split('`')
                    .enumerate()
                    .filter(|(i, _)| i % 2 == 1)
                    .map(|(_, s)| s.to_string())
                    .collect()
            })
            .unwrap_or_default();
        let suggestion = nearest(&key, expected.iter().map(String::as_str)).map(str::to_string);
        return RouteErrorKind::UnknownKey {
            key,
            suggestion,
            expected,
        };
    }
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|r| r.split('`').next())
    {
        return RouteErrorKind::Missing(field.to_string());
    }
    RouteErrorKind::InvalidValue(message.to_string())
}
