//! The pass that resolves property placeholders in a parsed route file, before its routes
//! are read: each string value is resolved where it stands, so the pointer of a value
//! that cannot be resolved is the one the position index knows.

use camel_api::suggest::to_snake_case;
use serde_json::Value as Json;

use super::node::escape;
use crate::properties::{Properties, PropertyError};

/// Resolves every string value under `value` (whose pointer is `pointer`) in place,
/// collecting each failure with the pointer of its value. Keys are left as written: they
/// name options and headers, not configuration.
pub(super) fn resolve(
    value: &mut Json,
    pointer: String,
    properties: &Properties,
    errors: &mut Vec<(PropertyError, String)>,
) {
    match value {
        Json::String(text) if text.contains("{{") => match properties.resolve(text) {
            Ok(resolved) => *text = resolved,
            Err(e) => errors.push((e, pointer)),
        },
        Json::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                resolve(item, format!("{pointer}/{i}"), properties, errors);
            }
        }
        Json::Object(map) => {
            for (k, v) in map.iter_mut() {
                let at = format!("{pointer}/{}", escape(&to_snake_case(k)));
                resolve(v, at, properties, errors);
            }
        }
        _ => {}
    }
}
