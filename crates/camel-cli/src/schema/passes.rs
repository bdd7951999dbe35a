//! Rewrites of a generated schema that say what the route loader accepts beyond the typed
//! configurations' serde attributes (ADR 0130): Camel's camelCase spelling of every key,
//! booleans and numbers written as text, and a `description`/`note` on any node.

use camel_api::suggest::to_snake_case;
use serde_json::{json, Map, Value as Json};

/// Calls `f` on every schema inside `schema` (itself included), children first, walking
/// only the keywords that hold schemas (never `default`, `examples`, `enum` or `const`,
/// which hold data).
pub(super) fn each_schema(schema: &mut Json, f: &mut dyn FnMut(&mut Map<String, Json>)) {
    let Json::Object(map) = schema else { return };
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "properties" | "patternProperties" | "$defs" | "dependentSchemas" => {
                if let Json::Object(children) = value {
                    for child in children.values_mut() {
                        each_schema(child, f);
                    }
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Json::Array(children) = value {
                    for child in children {
                        each_schema(child, f);
                    }
                }
            }
            "items"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedProperties"
            | "unevaluatedItems" => each_schema(value, f),
            _ => {}
        }
    }
    f(map);
}

/// Camel's camelCase form of a snake_case key (`dead_letter_uri` → `deadLetterUri`).
pub(super) fn camel_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Gives every snake_case property its camelCase twin (same schema): the loader reads a
/// key by its snake_case form, so both name the same option. A required property may then
/// be given in either spelling. `oneOf` becomes `anyOf`, since a twin can make two
/// branches of an enum accept the same map.
pub(super) fn camel_case_twins(schema: &mut Json) {
    each_schema(schema, &mut |map| {
        if let Some(branches) = map.remove("oneOf") {
            map.insert("anyOf".into(), branches);
        }
        let Some(Json::Object(properties)) = map.get_mut("properties") else {
            return;
        };
        let twins: Vec<(String, String)> = properties
            .keys()
            .filter(|k| to_snake_case(k) == **k)
            .map(|k| (k.clone(), camel_case(k)))
            .filter(|(k, c)| k != c)
            .collect();
        for (key, twin) in &twins {
            if !properties.contains_key(twin) {
                if let Some(sub) = properties.get(key).cloned() {
                    properties.insert(twin.clone(), sub);
                }
            }
        }
        let Some(Json::Array(required)) = map.get_mut("required") else {
            return;
        };
        let mut either = Vec::new();
        required.retain(|r| {
            let Some(twin) = twins.iter().find(|(k, _)| Some(k.as_str()) == r.as_str()) else {
                return true;
            };
            either.push(json!({"anyOf": [{"required": [twin.0]}, {"required": [twin.1]}]}));
            false
        });
        if !either.is_empty() {
            let all = map
                .entry("allOf")
                .or_insert_with(|| Json::Array(Vec::new()));
            if let Json::Array(all) = all {
                all.extend(either);
            }
        }
    });
}

/// Booleans and numbers may be written as text (`"true"`, `" 5 "`, a duration such as
/// `2s` where milliseconds go): Camel's tools write them so, and the loader reads them.
pub(super) fn quoted_scalars(schema: &mut Json) {
    const BOOLEAN: &str = "^\\s*([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])\\s*$";
    // A number, or a number with a duration unit (ms, s, m, h).
    const NUMBER: &str =
        "^\\s*[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?\\s*(ms|s|m|h)?\\s*$";
    each_schema(schema, &mut |map| {
        if map.contains_key("enum") || map.contains_key("const") {
            return;
        }
        let mut types: Vec<String> = match map.get("type") {
            Some(Json::String(t)) => vec![t.clone()],
            Some(Json::Array(ts)) => ts
                .iter()
                .filter_map(Json::as_str)
                .map(str::to_string)
                .collect(),
            _ => return,
        };
        if types.iter().any(|t| t == "string") {
            return;
        }
        let pattern = if types.iter().any(|t| t == "integer" || t == "number") {
            NUMBER
        } else if types.iter().any(|t| t == "boolean") {
            BOOLEAN
        } else {
            return;
        };
        types.push("string".into());
        map.insert("type".into(), json!(types));
        map.insert("pattern".into(), json!(pattern));
    });
}

/// Every closed map may carry Camel's `id`, `description` and `note` (text for tooling
/// that the loader drops where a configuration does not name them).
pub(super) fn node_text(schema: &mut Json) {
    each_schema(schema, &mut |map| {
        if map.get("additionalProperties") != Some(&Json::Bool(false)) {
            return;
        }
        let Some(Json::Object(properties)) = map.get_mut("properties") else {
            return;
        };
        for key in ["id", "description", "note"] {
            properties.entry(key).or_insert_with(
                || json!({"description": "Text for tooling: changes nothing.", "type": "string"}),
            );
        }
    });
}

/// A step's own map also takes Camel's `disabled` (the step is left out).
pub(super) fn disabled_option(definition: &mut Json) {
    if let Some(Json::Object(properties)) = definition.get_mut("properties") {
        properties.entry("disabled").or_insert_with(|| {
            json!({"description": "Leave the step out of the route.", "type": "boolean", "default": false})
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twins_and_quoted_scalars() {
        let mut s = json!({
            "type": "object",
            "properties": {"dead_letter_uri": {"type": "string"}, "size": {"type": "integer"}},
            "required": ["dead_letter_uri"],
            "additionalProperties": false
        });
        camel_case_twins(&mut s);
        quoted_scalars(&mut s);
        assert_eq!(s["properties"]["deadLetterUri"], json!({"type": "string"}));
        assert_eq!(
            s["properties"]["size"]["type"],
            json!(["integer", "string"])
        );
        assert!(s.get("required").unwrap().as_array().unwrap().is_empty());
        assert_eq!(camel_case("to_d"), "toD");
        assert_eq!(camel_case("a"), "a");
    }
}
