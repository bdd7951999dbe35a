//! `camel schema`: the JSON Schema (draft 2020-12) of the route file format, or with
//! `--test-file` of the `*.test.yaml` format, for editors and CI (ADR 0130).
//!
//! The schema is generated from the structs that parse the files: every step's typed
//! configuration derives `schemars::JsonSchema` beside `Deserialize` (its doc comments
//! become descriptions, its `#[serde(default)]`s defaults, its enums enums), the steps come
//! from [`steps::steps`], checked against the step registry, and the parts the loader
//! reads by hand from [`shapes`]. [`passes`] then adds what the loader accepts beyond the
//! serde attributes: Camel's camelCase twin of every snake_case key, booleans and numbers
//! written as text, and a `description`/`note` on any node.
//!
//! ```sh
//! camel schema > camel-routes.schema.json
//! camel schema --test-file > camel-test.schema.json
//! ```

mod passes;
mod shapes;
mod steps;

use std::path::PathBuf;
use std::process::ExitCode;

use schemars::generate::SchemaSettings;
use schemars::SchemaGenerator;
use serde_json::{json, Map, Value as Json};

/// `camel schema [--test-file] [--output FILE]`.
#[derive(Debug, clap::Args)]
pub(crate) struct SchemaArgs {
    /// The schema of `*.test.yaml` files (`camel test`) instead of route files.
    #[arg(long)]
    test_file: bool,
    /// Write the schema to this file instead of standard output.
    #[arg(long, short)]
    output: Option<PathBuf>,
}

/// Prints (or writes) the schema asked for.
pub(crate) fn run(args: &SchemaArgs) -> ExitCode {
    let schema = if args.test_file {
        test_file()
    } else {
        let languages = crate::run::test_context().registry().language_names();
        route_file(&languages)
    };
    let text = match serde_json::to_string_pretty(&schema) {
        Ok(t) => t + "\n",
        Err(e) => {
            eprintln!("error: cannot write the schema: {e}");
            return ExitCode::FAILURE;
        }
    };
    match &args.output {
        None => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Some(path) => match std::fs::write(path, text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", path.display());
                ExitCode::FAILURE
            }
        },
    }
}

fn generator() -> SchemaGenerator {
    SchemaGenerator::new(SchemaSettings::draft2020_12())
}

/// The schema of a route file whose expressions may name `languages`.
pub(crate) fn route_file(languages: &[&str]) -> Json {
    let mut g = generator();
    let steps = steps::steps(&mut g);
    let hand = shapes::definitions(&mut g);
    let expression = camel_api::schema::expression_schema(&mut g, languages, false);
    let mut derived = json!({"$defs": g.take_definitions(true)});
    passes::node_text(&mut derived);
    let mut defs = match derived.get_mut("$defs").map(Json::take) {
        Some(Json::Object(defs)) => defs,
        _ => Map::new(),
    };
    // The configs read every `Duration` as a number (in the option's unit) or a duration
    // text (`500ms`, `30s`), never as serde's `{secs, nanos}`.
    if defs.contains_key("Duration") {
        defs.insert(
            "Duration".into(),
            json!({"description": "A number in the option's unit, or a duration text (`500ms`, `30s`, `1m`).", "type": ["integer", "string"]}),
        );
    }
    defs.insert(
        camel_api::schema::EXPRESSION_DEFINITION.into(),
        expression.to_value(),
    );
    if let Some(ours) = resequence_definition(&defs) {
        defs.insert(
            steps::CAMEL_RESEQUENCE.into(),
            steps::camel_resequence(&ours),
        );
    }
    for (_, step) in &steps {
        let name = step["then"]["$ref"]
            .as_str()
            .and_then(|r| r.strip_prefix("#/$defs/"));
        if let Some(definition) = name.and_then(|n| defs.get_mut(n)) {
            passes::disabled_option(definition);
        }
    }
    defs.insert(camel_api::schema::STEP_DEFINITION.into(), step_union(steps));
    defs.extend(hand);
    let mut schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "camel-rs route file",
        "description": "Routes in the shape of Apache Camel's YAML DSL: a list of items (`- route:`, `- from:`, `- beans:`, …), or a Camel K resource. Keys are snake_case; Camel's camelCase spellings are accepted too.",
        "if": {"type": "array"},
        "then": {"items": shapes::reference("Item")},
        "else": {"anyOf": [{"type": "null"}, shapes::reference("CamelKResource")]},
        "$defs": defs
    });
    passes::camel_case_twins(&mut schema);
    passes::quoted_scalars(&mut schema);
    schema
}

/// The definition `resequence`'s own spelling refers to.
fn resequence_definition(defs: &Map<String, Json>) -> Option<Json> {
    defs.iter()
        .find(|(name, _)| name.contains("Resequence"))
        .map(|(_, d)| d.clone())
}

/// A step: a one-key map naming one of `steps`, or the bare name of one that takes no
/// options.
fn step_union(steps: Vec<(&'static str, Json)>) -> Json {
    let mut bare = Vec::new();
    let mut properties = Map::new();
    for (name, schema) in steps {
        let takes_nothing = steps::takes_nothing(&schema);
        if takes_nothing {
            bare.push(json!(name));
            let camel = passes::camel_case(name);
            if camel != name {
                bare.push(json!(camel));
            }
        }
        properties.insert(name.to_string(), schema);
    }
    json!({
        "description": "A step: a map with one key, the step's name (`- to: log:x`), or the bare name of a step without options (`- stop`).",
        "if": {"type": "object"},
        "then": {
            "minProperties": 1,
            "maxProperties": 1,
            "properties": properties,
            "additionalProperties": false
        },
        "else": {"type": "string", "enum": bare}
    })
}

/// The schema of a `*.test.yaml` file (ADR 0127); its keys are read strictly, so only the
/// camelCase spellings its structs name are listed.
pub(crate) fn test_file() -> Json {
    let mut g = generator();
    let root = g.subschema_for::<crate::test::TestFile>();
    let defs: Map<String, Json> = g.take_definitions(true).into_iter().collect();
    let mut schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "camel-rs test file (camel test)",
        "$defs": defs
    });
    if let (Json::Object(out), Json::Object(root)) = (&mut schema, root.to_value()) {
        out.extend(root);
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Json {
        let ctx = crate::run::test_context();
        route_file(&ctx.registry().language_names())
    }

    /// The keys the loader names when it refuses `text`'s unknown key.
    fn loader_keys(text: &str) -> Vec<String> {
        let (_, errors) = camel_core::yaml::load_str_partial(text, "keys.yaml");
        errors
            .into_iter()
            .find_map(|e| match e.kind {
                camel_core::RouteErrorKind::UnknownKey { expected, .. } => Some(expected),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no unknown-key error for {text}"))
    }

    fn keys_of(schema: &Json) -> Vec<String> {
        schema["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    #[tokio::test]
    async fn every_step_the_context_compiles_is_in_the_schema() {
        let schema = schema();
        let listed = keys_of(&schema["$defs"]["Step"]["then"]);
        let ctx = crate::run::test_context();
        for name in ctx.registry().step_names() {
            assert!(
                listed.contains(&name),
                "step `{name}` is not in `camel schema`: add it to src/schema/steps.rs"
            );
            let camel = passes::camel_case(&name);
            assert!(listed.contains(&camel), "`{camel}`");
        }
    }

    #[tokio::test]
    async fn every_language_is_an_expression_key() {
        let schema = schema();
        let listed = keys_of(&schema["$defs"]["Expression"]);
        for language in crate::run::test_context().registry().language_names() {
            assert!(listed.iter().any(|k| k == language), "{language}");
        }
    }

    #[tokio::test]
    async fn the_hand_read_parts_have_the_loaders_keys() {
        let schema = schema();
        let defs = &schema["$defs"];
        for (text, def) in [
            ("- bogus: 1\n", &defs["Item"]),
            (
                "- route: {bogus: 1, from: {uri: 'direct:a'}}\n",
                &defs["Route"],
            ),
            (
                "- from: {uri: 'direct:a', bogus: 1}\n",
                &defs["From"]["then"],
            ),
        ] {
            let listed = keys_of(def);
            for key in loader_keys(text) {
                assert!(listed.contains(&key), "`{key}` of {text}");
            }
        }
    }
}
