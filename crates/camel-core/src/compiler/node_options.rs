//! Camel's options of every node (`id`, `description`, `disabled`), read once for all
//! steps so that no step's typed configuration lists them (ADR 0051).

use serde_json::Value as Json;

/// Camel's options of every node.
#[derive(Default)]
pub(super) struct NodeOptions {
    pub(super) id: Option<String>,
    pub(super) disabled: bool,
}

/// Splits `id`, `description` and `disabled` off a step's configuration map, so that no
/// step's typed configuration has to list them.
pub(super) fn node_options(config: &Json) -> (std::borrow::Cow<'_, Json>, NodeOptions) {
    let Json::Object(map) = config else {
        return (std::borrow::Cow::Borrowed(config), NodeOptions::default());
    };
    let mut map = map.clone();
    let id = map.remove("id").and_then(|v| match v {
        Json::String(s) => Some(s),
        Json::Null => None,
        other => Some(other.to_string()),
    });
    map.remove("description");
    let disabled = match map.remove("disabled") {
        Some(Json::Bool(b)) => b,
        Some(Json::String(s)) => s.eq_ignore_ascii_case("true"),
        _ => false,
    };
    for (key, value) in map.iter_mut() {
        strip_inner_node_options(key, value);
    }
    let config = if map.is_empty() {
        Json::Null
    } else {
        Json::Object(map)
    };
    (
        std::borrow::Cow::Owned(config),
        NodeOptions { id, disabled },
    )
}

/// Camel gives an `id` and `description` to the parts of a step too (a `when` clause,
/// `otherwise`, a data format): they name the part for tooling and are dropped here.
/// Nested step lists keep theirs (each step reads its own), and maps that are the user's
/// data (`parameters`, `properties`) are left alone.
fn strip_inner_node_options(key: &str, value: &mut Json) {
    if matches!(key, "steps" | "parameters" | "properties") {
        return;
    }
    match value {
        Json::Object(map) => {
            if map.get("id").is_some_and(Json::is_string) {
                map.remove("id");
            }
            if map.get("description").is_some_and(Json::is_string) {
                map.remove("description");
            }
            for (k, v) in map.iter_mut() {
                strip_inner_node_options(k, v);
            }
        }
        Json::Array(items) => items
            .iter_mut()
            .for_each(|v| strip_inner_node_options(key, v)),
        _ => {}
    }
}
