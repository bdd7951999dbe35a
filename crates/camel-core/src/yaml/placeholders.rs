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
            Ok(resolved) => {
                let whole = text.starts_with("{{")
                    && text.ends_with("}}")
                    && text.matches("{{").count() == 1;
                *value = if whole {
                    typed(resolved)
                } else {
                    Json::String(resolved)
                };
            }
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

/// A value that was one placeholder alone takes the type its text has, as if written
/// there (`batch_size: "{{size}}"` with `size=10` is the number 10), since properties are
/// text and typed options expect numbers and booleans. Only a text that round-trips
/// changes type: `007` and `1.50` stay text.
fn typed(text: String) -> Json {
    match text.as_str() {
        "true" => return Json::Bool(true),
        "false" => return Json::Bool(false),
        _ => {}
    }
    if let Ok(n) = text.parse::<i64>() {
        if n.to_string() == text {
            return Json::from(n);
        }
    }
    if let Some(n) = text
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
    {
        if n.to_string() == text {
            return Json::Number(n);
        }
    }
    Json::String(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_placeholder_takes_the_type_of_its_text() {
        let mut props = Properties::new();
        for (k, v) in [("n", "10"), ("b", "true"), ("z", "007"), ("f", "1.5")] {
            props.set(k, v);
        }
        let mut value = serde_json::json!({
            "n": "{{n}}", "b": "{{b}}", "z": "{{z}}", "f": "{{f}}", "mixed": "{{n}}ms"
        });
        let mut errors = Vec::new();
        resolve(&mut value, String::new(), &props, &mut errors);
        assert!(errors.is_empty());
        assert_eq!(
            value,
            serde_json::json!({"n": 10, "b": true, "z": "007", "f": 1.5, "mixed": "10ms"})
        );
    }
}
