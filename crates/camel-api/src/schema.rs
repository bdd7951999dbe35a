//! JSON Schema of the pieces every step configuration shares (ADR 0130).
//!
//! The step configurations derive [`schemars::JsonSchema`] beside `Deserialize`, so the
//! schema of a route file comes from the same structs that parse it. The shared pieces
//! whose `Deserialize` is written by hand get their schema here: a nested step
//! ([`StepDefinition`], a placeholder the route-file schema fills with every step), an
//! expression ([`ExpressionDefinition`]), what a language key holds ([`LanguageValue`])
//! and Camel's generic `language:` wrapper ([`LanguageWrapper`]).
//!
//! ```
//! use camel_api::definition::ExpressionDefinition;
//!
//! let schema = schemars::schema_for!(ExpressionDefinition);
//! let languages = schema.get("properties").unwrap();
//! assert!(languages.get("simple").is_some() && languages.get("language").is_some());
//! ```

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, DeserializeOwned, Visitor};
use serde_json::{Map, Value as Json};
use std::borrow::Cow;

use crate::definition::{
    ExpressionDefinition, LanguageValue, LanguageWrapper, StepDefinition, GENERIC_LANGUAGE,
    SHORTHAND_LANGUAGES,
};

/// The name of the nested-step definition in a schema's `$defs`.
pub const STEP_DEFINITION: &str = "Step";

/// The name of the expression definition in a schema's `$defs`.
pub const EXPRESSION_DEFINITION: &str = "Expression";

impl JsonSchema for StepDefinition {
    fn schema_name() -> Cow<'static, str> {
        STEP_DEFINITION.into()
    }

    /// Any one-key map or bare name: the route-file schema replaces this definition with
    /// the union of every registered step.
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A step: a map with one key, the step's name (`- to: log:x`), or a bare name (`- stop`).",
            "anyOf": [
                {"type": "object", "minProperties": 1, "maxProperties": 1},
                {"type": "string"}
            ]
        })
    }
}

impl JsonSchema for LanguageValue {
    fn schema_name() -> Cow<'static, str> {
        "LanguageValue".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "The expression text, or the text under `expression` (`token` for tokenize) beside the language's options. The text is trimmed unless `trim: false`.",
            "anyOf": [
                {"type": ["string", "number", "boolean", "null"]},
                {
                    "type": "object",
                    "properties": {
                        "expression": {"description": "The expression text.", "type": ["string", "number", "boolean", "null"]},
                        "token": {"description": "The text of `tokenize` (Camel's name for it).", "type": ["string", "number", "boolean", "null"]},
                        "trim": {"description": "Trim the text before it is compiled.", "type": "boolean", "default": true},
                        "id": {"description": "Camel's node id: named, not used.", "type": "string"},
                        "description": {"description": "Text for tooling: changes nothing.", "type": "string"}
                    },
                    "anyOf": [{"required": ["expression"]}, {"required": ["token"]}],
                    "additionalProperties": true
                }
            ]
        })
    }
}

impl JsonSchema for LanguageWrapper {
    fn schema_name() -> Cow<'static, str> {
        "LanguageWrapper".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Camel's generic form: the language named by a value, `{language: simple, expression: \"${body}\"}`.",
            "type": "object",
            "properties": {
                "language": {"description": "The language's name.", "type": "string", "minLength": 1},
                "expression": {"description": "The expression text.", "type": ["string", "number", "boolean", "null"]},
                "trim": {"description": "Trim the text before it is compiled.", "type": "boolean", "default": true}
            },
            "required": ["language", "expression"],
            "additionalProperties": true
        })
    }
}

impl JsonSchema for ExpressionDefinition {
    fn schema_name() -> Cow<'static, str> {
        EXPRESSION_DEFINITION.into()
    }

    /// One language key: the shorthand languages and Camel's generic wrapper by name,
    /// any other language through `additionalProperties` (the route-file schema narrows
    /// it to the languages registered).
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        expression_schema(generator, &SHORTHAND_LANGUAGES, true)
    }
}

/// The schema of an expression naming one of `languages` (or Camel's generic wrapper);
/// `open` lets any other key stand for a language too.
pub fn expression_schema(
    generator: &mut SchemaGenerator,
    languages: &[&str],
    open: bool,
) -> Schema {
    let value = generator.subschema_for::<LanguageValue>();
    let mut properties = Map::new();
    for language in languages {
        properties.insert((*language).to_string(), value.clone().to_value());
    }
    properties.insert(
        GENERIC_LANGUAGE.into(),
        generator.subschema_for::<LanguageWrapper>().to_value(),
    );
    let additional = if open {
        value.to_value()
    } else {
        Json::Bool(false)
    };
    json_schema!({
        "description": "An expression: one language key and its text (`{simple: \"${body}\"}`, `{jq: \".id\"}`), or Camel's generic `{language: {language: NAME, expression: TEXT}}`.",
        "type": "object",
        "minProperties": 1,
        "maxProperties": 1,
        "properties": properties,
        "additionalProperties": additional
    })
}

/// A schemars transform for an enum whose variants have serde aliases: lists every name
/// serde accepts (its own `VARIANTS`, aliases included) rather than the canonical ones
/// only. Use as `#[schemars(transform = camel_api::schema::serde_variants::<Self>)]`.
pub fn serde_variants<T: DeserializeOwned>(schema: &mut Schema) {
    let names = variant_names::<T>();
    if names.is_empty() {
        return;
    }
    let mut known = Vec::new();
    collect_strings(schema.as_value(), &mut known);
    let extra: Vec<Json> = names
        .iter()
        .filter(|n| !known.iter().any(|k| k == *n))
        .map(|n| Json::String((*n).to_string()))
        .collect();
    if extra.is_empty() {
        return;
    }
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    let alias = json_schema!({
        "description": "Another spelling of one of the values above.",
        "type": "string",
        "enum": extra
    });
    let key = if map.contains_key("oneOf") {
        "oneOf"
    } else {
        "anyOf"
    };
    match map.get_mut(key) {
        Some(Json::Array(branches)) => branches.push(alias.to_value()),
        _ => {
            let own: Map<String, Json> = std::mem::take(map);
            map.insert(
                "anyOf".into(),
                Json::Array(vec![Json::Object(own), alias.to_value()]),
            );
        }
    }
}

/// A schemars transform for a struct whose fields have serde aliases: adds each alias as a
/// property beside its field, with the field's schema. The names come from serde's own
/// `FIELDS` (every accepted name, grouped by field in declaration order, each group
/// sorted); an alias is given to the field whose name it spells (`parallelProcessing` →
/// `parallel_processing`), else to the neighbouring field its place in the sorted group
/// allows, else to the one it shares most words with. Use as
/// `#[schemars(transform = camel_api::schema::serde_fields::<Self>)]`.
pub fn serde_fields<T: DeserializeOwned>(schema: &mut Schema) {
    let names = field_names::<T>();
    let Some(Json::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    let canonical: Vec<usize> = (0..names.len())
        .filter(|&i| properties.contains_key(names[i]))
        .collect();
    let mut added = Vec::new();
    for (i, alias) in names.iter().enumerate() {
        if properties.contains_key(*alias) {
            continue;
        }
        let previous = canonical.iter().rev().find(|&&c| c < i).map(|&c| names[c]);
        let next = canonical.iter().find(|&&c| c > i).map(|&c| names[c]);
        if let Some(field) = field_of(alias, previous, next) {
            if let Some(sub) = properties.get(field) {
                added.push((alias.to_string(), sub.clone()));
            }
        }
    }
    properties.extend(added);
}

/// The field an alias between the fields `previous` and `next` of serde's `FIELDS` belongs
/// to (see [`serde_fields`]).
fn field_of<'a>(alias: &str, previous: Option<&'a str>, next: Option<&'a str>) -> Option<&'a str> {
    let squash = |s: &str| {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    if let Some(same) = [previous, next]
        .into_iter()
        .flatten()
        .find(|f| squash(f) == squash(alias))
    {
        return Some(same);
    }
    // Each field's names are sorted: an alias after its field sorts after it, one before
    // its field sorts before it.
    let after_previous = previous.filter(|p| alias > *p);
    let before_next = next.filter(|n| alias < *n);
    match (after_previous, before_next) {
        (Some(p), None) => Some(p),
        (None, Some(n)) => Some(n),
        (Some(p), Some(n)) => {
            let words = |s: &str| {
                crate::suggest::to_snake_case(s)
                    .split('_')
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            };
            let mine = words(alias);
            let shared = |f: &str| words(f).iter().filter(|w| mine.contains(w)).count();
            Some(if shared(n) > shared(p) { n } else { p })
        }
        (None, None) => None,
    }
}

/// Every field name (aliases included) serde's derived `Deserialize` of a struct accepts,
/// asked of the derive itself; empty for a struct with a flattened field (serde reads
/// those as maps).
pub fn field_names<T: DeserializeOwned>() -> Vec<&'static str> {
    match T::deserialize(VariantProbe) {
        Err(Probed(names)) => names,
        Ok(_) => Vec::new(),
    }
}

/// The strings a schema allows through `enum` and `const`.
fn collect_strings(value: &Json, out: &mut Vec<String>) {
    match value {
        Json::Object(map) => {
            if let Some(Json::String(s)) = map.get("const") {
                out.push(s.clone());
            }
            if let Some(Json::Array(items)) = map.get("enum") {
                out.extend(items.iter().filter_map(Json::as_str).map(str::to_string));
            }
            for v in map.values() {
                collect_strings(v, out);
            }
        }
        Json::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// The variant names (aliases included) serde's derived `Deserialize` of an enum accepts:
/// asked of the derive itself, which hands them to `deserialize_enum`.
pub fn variant_names<T: DeserializeOwned>() -> Vec<&'static str> {
    match T::deserialize(VariantProbe) {
        Err(Probed(names)) => names,
        Ok(_) => Vec::new(),
    }
}

/// A deserializer that answers nothing and records the variants or fields it is asked for.
struct VariantProbe;

#[derive(Debug)]
struct Probed(Vec<&'static str>);

impl std::fmt::Display for Probed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("probe")
    }
}

impl std::error::Error for Probed {}

impl de::Error for Probed {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Probed(Vec::new())
    }
}

impl<'de> de::Deserializer<'de> for VariantProbe {
    type Error = Probed;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Probed> {
        Err(Probed(Vec::new()))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Probed> {
        Err(Probed(fields.to_vec()))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Probed> {
        Err(Probed(variants.to_vec()))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(rename_all = "snake_case")]
    #[schemars(transform = serde_variants::<Self>)]
    #[allow(dead_code)]
    enum Policy {
        #[serde(alias = "emitPartial")]
        EmitPartial,
        Drop,
    }

    #[test]
    fn enum_aliases_are_listed_beside_the_canonical_names() {
        assert_eq!(
            variant_names::<Policy>(),
            ["emitPartial", "emit_partial", "drop"]
        );
        let schema = schemars::schema_for!(Policy);
        let mut names = Vec::new();
        collect_strings(schema.as_value(), &mut names);
        names.sort();
        assert_eq!(names, ["drop", "emitPartial", "emit_partial"]);
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[schemars(transform = serde_fields::<Self>)]
    #[allow(dead_code)]
    struct Options {
        #[serde(alias = "simple", alias = "expression")]
        sequence: String,
        #[serde(alias = "parallelProcessing", alias = "parallel_processing")]
        parallel: bool,
        #[serde(alias = "aggregationStrategy", alias = "aggregation_strategy")]
        strategy: String,
        #[serde(alias = "minCount")]
        min_count: u32,
    }

    #[test]
    fn field_aliases_are_properties_beside_their_field() {
        let schema = schemars::schema_for!(Options);
        let properties = schema.get("properties").and_then(Json::as_object).unwrap();
        let of = |alias: &str| properties.get(alias).cloned();
        for (alias, field) in [
            ("simple", "sequence"),
            ("expression", "sequence"),
            ("parallelProcessing", "parallel"),
            ("parallel_processing", "parallel"),
            ("aggregationStrategy", "strategy"),
            ("aggregation_strategy", "strategy"),
            ("minCount", "min_count"),
        ] {
            assert_eq!(of(alias), of(field), "{alias}");
        }
        assert_eq!(properties.len(), 11);
    }

    #[test]
    fn an_expression_names_one_language() {
        let schema = schemars::schema_for!(ExpressionDefinition);
        assert_eq!(schema.get("maxProperties"), Some(&Json::from(1)));
        let closed = expression_schema(&mut SchemaGenerator::default(), &["simple"], false);
        assert_eq!(closed.get("additionalProperties"), Some(&Json::Bool(false)));
    }
}
