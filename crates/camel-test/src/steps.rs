//! The route's step tree as one kind of value, so that weaves reach nested steps too.
//!
//! The top level of a route is a list of [`StepDefinition`]s; the lists inside a step
//! (`filter.steps`, `choice.when[].steps`, `do_try.do_catch[].steps`, …) are JSON items
//! (`{to: …}`). Advice works on the JSON form of both and converts back once, so one
//! walk finds a step wherever it sits.

use camel_api::definition::StepDefinition;
use camel_api::suggest::to_snake_case;
use serde_json::Value as Json;

/// Keys under which a step's configuration holds a user's data, never steps.
const DATA_KEYS: &[&str] = &["parameters", "properties", "headers"];

/// The JSON items of a step list.
pub(crate) fn to_items(steps: &[StepDefinition]) -> Vec<Json> {
    steps
        .iter()
        .map(|s| {
            let mut item = serde_json::Map::new();
            item.insert(s.name.clone(), s.config.clone());
            Json::Object(item)
        })
        .collect()
}

/// The steps of a list of JSON items.
pub(crate) fn from_items(items: Vec<Json>) -> Result<Vec<StepDefinition>, String> {
    items.into_iter().map(StepDefinition::from_item).collect()
}

/// A step item's name (snake_case) and configuration.
pub(crate) fn parts(item: &Json) -> Option<(String, &Json)> {
    match item {
        Json::String(name) => Some((to_snake_case(name), &Json::Null)),
        Json::Object(map) if map.len() == 1 => {
            map.iter().next().map(|(k, v)| (to_snake_case(k), v))
        }
        _ => None,
    }
}

/// The node id of a step item (`id:` in its configuration map).
pub(crate) fn id_of(item: &Json) -> Option<&str> {
    parts(item)?.1.get("id")?.as_str()
}

/// The URI of a `to` step item (`to: uri` or `to: {uri: …}`).
pub(crate) fn to_uri(item: &Json) -> Option<&str> {
    let (name, config) = parts(item)?;
    if name != "to" {
        return None;
    }
    match config {
        Json::String(uri) => Some(uri),
        Json::Object(map) => map.get("uri")?.as_str(),
        _ => None,
    }
}

/// What a visit does with the step it was shown.
pub(crate) enum Edit {
    /// Leaves it.
    Keep,
    /// Puts these items in its place (none removes it). They are not visited.
    Splice(Vec<Json>),
}

/// Calls `visit` on every step item of `items` and of the lists nested in them, depth
/// first, applying the edits it returns. Returns how many steps were edited.
pub(crate) fn walk(items: &mut Vec<Json>, visit: &mut dyn FnMut(&Json) -> Edit) -> usize {
    let mut edited = 0;
    let mut i = 0;
    while i < items.len() {
        match visit(&items[i]) {
            Edit::Splice(with) => {
                let n = with.len();
                items.splice(i..=i, with);
                edited += 1;
                i += n;
            }
            Edit::Keep => {
                if let Json::Object(map) = &mut items[i] {
                    for config in map.values_mut() {
                        edited += walk_config(config, visit);
                    }
                }
                i += 1;
            }
        }
    }
    edited
}

/// Finds the step lists inside one step's configuration.
fn walk_config(config: &mut Json, visit: &mut dyn FnMut(&Json) -> Edit) -> usize {
    let mut edited = 0;
    match config {
        Json::Object(map) => {
            for (key, value) in map.iter_mut() {
                if DATA_KEYS.contains(&key.as_str()) {
                    continue;
                }
                match value {
                    Json::Array(list) if key == "steps" => edited += walk(list, visit),
                    other => edited += walk_config(other, visit),
                }
            }
        }
        Json::Array(list) => {
            for value in list {
                edited += walk_config(value, visit);
            }
        }
        _ => {}
    }
    edited
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_lists_are_walked_and_spliced_items_are_not_revisited() {
        let mut items = vec![
            json!({"to": "a:1"}),
            json!({"choice": {"when": [{"simple": "x", "steps": [{"to": {"uri": "a:2"}}]}],
                              "otherwise": {"steps": [{"to": "a:3"}]}}}),
            json!({"to": {"uri": "b:1", "parameters": {"steps": [{"to": "a:9"}]}}}),
        ];
        let edited = walk(&mut items, &mut |item| match to_uri(item) {
            Some(uri) if uri.starts_with("a:") => {
                Edit::Splice(vec![json!({"to": format!("mock:{uri}")}), item.clone()])
            }
            _ => Edit::Keep,
        });
        assert_eq!(edited, 3);
        assert_eq!(items[0], json!({"to": "mock:a:1"}));
        assert_eq!(items[1], json!({"to": "a:1"}));
        assert_eq!(
            items[2]["choice"]["otherwise"]["steps"],
            json!([{"to": "mock:a:3"}, {"to": "a:3"}])
        );
        // A parameter map is data even when a key reads `steps`.
        assert_eq!(
            items[3]["to"]["parameters"]["steps"],
            json!([{"to": "a:9"}])
        );
    }
}
