//! `layer: {ref: name, steps: [...]}`: the steps wrapped in a tower layer kept beside the
//! route (see `RouteBuilder::layer`). A `layer` without `steps` wraps the rest of its list.

use std::borrow::Cow;

use camel_api::BoxProcessor;
use serde_json::Value as Json;
use tower::Layer;

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};
use crate::model::{LayerStep, StepDefinition};

/// Compiles the nested steps and wraps them in the named layer.
pub(super) fn layer(
    config: LayerStep,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let name = config.reference;
    let Some(layer) = cx.route.layers.get(&name).cloned() else {
        return Err(cx.error_at(
            "/ref",
            RouteErrorKind::InvalidValue(format!(
                "no tower layer is registered under `{name}` (layers are Rust values, added with `RouteBuilder::layer`)"
            )),
        ));
    };
    let inner = cx.compile_steps(&config.steps, "/steps")?;
    Ok(layer.layer(inner))
}

/// A `layer` step with no `steps` of its own takes the rest of its list: `[a, layer, b, c]`
/// becomes `[a, layer{steps: [b, c]}]`. Lists without one are returned as they are.
pub(crate) fn nest_open_layers(steps: &[StepDefinition]) -> Cow<'_, [StepDefinition]> {
    let open = |s: &StepDefinition| {
        s.name == "layer" && matches!(&s.config, Json::Object(m) if !m.contains_key("steps"))
    };
    let Some(at) = steps.iter().position(open) else {
        return Cow::Borrowed(steps);
    };
    let mut config = steps[at].config.clone();
    let rest = serde_json::to_value(&steps[at + 1..]).unwrap_or(Json::Null);
    if let Json::Object(m) = &mut config {
        m.insert("steps".into(), rest);
    }
    let mut nested = steps[..at].to_vec();
    nested.push(StepDefinition::new("layer", config));
    Cow::Owned(nested)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_open_layer_takes_the_rest_of_its_list_and_a_closed_one_does_not() {
        let steps = vec![
            StepDefinition::new("log", json!("a")),
            StepDefinition::new("layer", json!({"ref": "l1"})),
            StepDefinition::new("layer", json!({"ref": "l2", "steps": [{"log": "b"}]})),
            StepDefinition::new("log", json!("c")),
        ];
        let nested = nest_open_layers(&steps);
        assert_eq!(
            serde_json::to_value(&*nested).unwrap(),
            json!([
                {"log": "a"},
                {"layer": {"ref": "l1", "steps": [
                    {"layer": {"ref": "l2", "steps": [{"log": "b"}]}},
                    {"log": "c"}
                ]}}
            ])
        );
        let closed = &steps[2..];
        assert!(matches!(nest_open_layers(closed), Cow::Borrowed(_)));
    }
}
