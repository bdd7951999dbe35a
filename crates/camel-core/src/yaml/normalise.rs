//! One form for equivalent spellings of nested steps, so YAML and builder definitions
//! compare equal.

use serde_json::{Map, Value as Json};

use crate::model::StepDefinition;

/// Gives equivalent spellings of nested steps one form, so YAML and builder definitions
/// compare equal: an empty step configuration is `null`, and a nested step is a one-key
/// map under its canonical name (`steps: [stop]` becomes `[{stop: null}]`, `setHeader`
/// becomes `set_header`, as at the top level). Option keys are left as written.
pub(super) fn normalise_config(config: &mut Json) {
    match config {
        Json::Object(map) if map.is_empty() => *config = Json::Null,
        Json::Object(map) => {
            for (key, value) in map.iter_mut() {
                if key == "steps" {
                    normalise_steps(value);
                } else {
                    normalise_nested(value);
                }
            }
        }
        Json::Array(_) => normalise_nested(config),
        _ => {}
    }
}

fn normalise_nested(value: &mut Json) {
    match value {
        Json::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "steps" {
                    normalise_steps(v);
                } else {
                    normalise_nested(v);
                }
            }
        }
        Json::Array(items) => items.iter_mut().for_each(normalise_nested),
        _ => {}
    }
}

fn normalise_steps(list: &mut Json) {
    let Json::Array(items) = list else { return };
    for item in items.iter_mut() {
        // Items that are not steps are left for the step's configuration to refuse, where
        // the error is located.
        if let Ok(mut step) = StepDefinition::from_item(item.clone()) {
            normalise_config(&mut step.config);
            let mut m = Map::new();
            m.insert(step.name, step.config);
            *item = Json::Object(m);
        }
    }
}
