//! JSON Schema of the options whose `Deserialize` is written by hand (ADR 0130): each says
//! in schema terms what its deserializer accepts. Every other configuration derives its
//! schema beside its `Deserialize`.

use std::borrow::Cow;

use camel_api::definition::{ExpressionDefinition, StepDefinition};
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

use super::{OnPrepare, Otherwise, PredicateOption};
use crate::multicast::AggregationStrategy;

impl JsonSchema for PredicateOption {
    fn schema_name() -> Cow<'static, str> {
        "PredicateOption".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let expression = generator.subschema_for::<ExpressionDefinition>();
        json_schema!({
            "description": "`true`, `false`, or a predicate evaluated on the failed exchange (`{simple: …}`).",
            "anyOf": [{"type": "boolean"}, expression]
        })
    }
}

impl JsonSchema for Otherwise {
    fn schema_name() -> Cow<'static, str> {
        "Otherwise".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let steps = generator.subschema_for::<Vec<StepDefinition>>();
        json_schema!({
            "description": "The branch run when no `when` matched: `{steps: [...]}`, or the list of steps itself.",
            "anyOf": [
                steps.clone(),
                {"type": "null"},
                {
                    "type": "object",
                    "properties": {"steps": steps},
                    "additionalProperties": false
                }
            ]
        })
    }
}

impl JsonSchema for OnPrepare {
    fn schema_name() -> Cow<'static, str> {
        "OnPrepare".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let steps = generator.subschema_for::<Vec<StepDefinition>>();
        json_schema!({
            "description": "A processor registered under this name (`#bean:` or `#` before it is ignored), or steps compiled with the route.",
            "anyOf": [{"type": "string"}, steps]
        })
    }
}

impl JsonSchema for AggregationStrategy {
    fn schema_name() -> Cow<'static, str> {
        "MulticastStrategy".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "How the branch results become one exchange: `last_wins` (default), `collect_all`, `original`, or Camel's `UseLatestAggregationStrategy`, `GroupedBodyAggregationStrategy`, `UseOriginalAggregationStrategy` (with or without package and `#class:`).",
            "type": "string",
            "examples": ["last_wins", "collect_all", "original", "UseLatestAggregationStrategy", "GroupedBodyAggregationStrategy", "UseOriginalAggregationStrategy"]
        })
    }
}

/// One map with one key, the format: every format's canonical key, and the other names
/// of some ([`DATA_FORMAT_NAMES`](super::DATA_FORMAT_NAMES): `jacksonXml`,
/// `gzipDeflater`, …) with the same options, the name each reads as asked of
/// `DataFormat`'s own `Deserialize`. A format without options may be written with none
/// (`json:` or `json: {}`).
pub(super) fn format_aliases(schema: &mut Schema) {
    use serde_json::{json, Map, Value as Json};
    let Some(Json::Array(branches)) = schema.get("oneOf") else {
        return;
    };
    let mut formats = Map::new();
    for branch in branches {
        if let Some(Json::Object(properties)) = branch.get("properties") {
            for (key, options) in properties {
                let mut options = options.clone();
                if let (Some(doc), Json::Object(o)) = (branch.get("description"), &mut options) {
                    o.entry("description").or_insert(doc.clone());
                }
                formats.insert(key.clone(), json!({"anyOf": [options, {"type": "null"}]}));
            }
        }
    }
    for name in super::DATA_FORMAT_NAMES {
        let Ok(format) = serde_json::from_value::<super::DataFormat>(json!({ *name: null })) else {
            continue;
        };
        let canonical = serde_json::to_value(&format)
            .ok()
            .and_then(|v| v.as_object().and_then(|m| m.keys().next().cloned()));
        if let Some(options) = canonical.and_then(|c| formats.get(&c).cloned()) {
            formats.entry(name.to_string()).or_insert(options);
        }
    }
    *schema = schemars::json_schema!({
        "description": "One data format, as a map with one key naming it.",
        "type": "object",
        "minProperties": 1,
        "maxProperties": 1,
        "properties": formats,
        "additionalProperties": false
    });
}
