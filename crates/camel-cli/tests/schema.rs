//! `camel schema` checked with a real JSON Schema validator (the `jsonschema` crate,
//! draft 2020-12): every route file and test file of the examples, the docs and the
//! corpus that the loader reads validates, and on a sample of valid and invalid files
//! the schema and `camel validate` (or `camel test`) agree (ADR 0130).

mod support;

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use support::{camel, text};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn schema(args: &[&str]) -> jsonschema::Validator {
    let out = camel(args);
    assert!(out.status.success(), "{}", text(&out));
    let schema: Json = serde_json::from_slice(&out.stdout).expect("the schema is JSON");
    assert_eq!(
        schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
        "draft 2020-12"
    );
    jsonschema::draft202012::new(&schema).expect("the schema compiles")
}

fn routes_schema() -> jsonschema::Validator {
    schema(&["schema"])
}

fn test_schema() -> jsonschema::Validator {
    schema(&["schema", "--test-file"])
}

/// The documents of a YAML text, as JSON.
fn documents(text: &str, name: &str) -> Vec<Json> {
    camel_core::yaml::parse_documents(text, name)
        .unwrap_or_else(|(why, line, column)| panic!("{name}:{line}:{column}: {why}"))
        .into_iter()
        .map(|(value, _)| value)
        .collect()
}

/// Every error the schema finds in the documents of `text`, as `document/pointer: why`.
fn schema_errors(validator: &jsonschema::Validator, text: &str, name: &str) -> Vec<String> {
    documents(text, name)
        .iter()
        .enumerate()
        .flat_map(|(i, doc)| {
            validator
                .iter_errors(doc)
                .map(|e| format!("{name} document {i} at `{}`: {e}", e.instance_path()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The YAML files under `dir`, recursively, sorted.
fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    todo.push(path);
                }
            } else if path.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn is_test_file(path: &Path) -> bool {
    path.to_string_lossy().ends_with(".test.yaml")
}

/// `camel validate FILE` in a folder of its own: validating an outbox route opens its
/// embedded SQLite file under the working folder.
fn validate(path: &Path) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_camel"))
        .arg("validate")
        .arg(path)
        .current_dir(dir.path())
        .output()
        .unwrap()
}

/// True when `camel validate` accepts the file: it is meant to be valid.
fn validates(path: &Path) -> bool {
    validate(path).status.success()
}

#[test]
fn every_example_validates() {
    let routes = routes_schema();
    let tests = test_schema();
    let mut checked = 0;
    let mut failures = Vec::new();
    for path in yaml_files(&root().join("examples")) {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        // The resequencer's input files are data; the custom-step example's step and
        // language are registered in Rust, which the binary's schema cannot know.
        if path
            .components()
            .any(|c| c.as_os_str() == "inbox" || c.as_os_str() == "custom-step")
        {
            continue;
        }
        let validator = if is_test_file(&path) { &tests } else { &routes };
        failures.extend(schema_errors(validator, &text, &name));
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} example files");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_corpus_file_and_fixture_the_loader_reads_validates() {
    let routes = routes_schema();
    let dirs = [
        root().join("crates/camel-cli/tests/corpus"),
        root().join("crates/camel-cli/tests/fixtures"),
        root().join("crates/camel-core/tests/fixtures"),
    ];
    let mut checked = 0;
    let mut failures = Vec::new();
    for path in dirs.iter().flat_map(|d| yaml_files(d)) {
        if is_test_file(&path) || !validates(&path) {
            continue;
        }
        let name = path.display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        failures.extend(schema_errors(&routes, &text, &name));
        checked += 1;
    }
    assert!(
        checked >= 30,
        "only {checked} files were read by the loader"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// True when `camel validate` accepts `text` as a route file.
fn validates_text(text: &str) -> bool {
    let (_dir, path) = file("block.yaml", text);
    validates(&path)
}

/// The ```yaml blocks of a Markdown text, with their first line.
fn yaml_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in markdown.lines().enumerate() {
        match &mut current {
            None if line.trim_start() == "```yaml" => current = Some((i + 2, String::new())),
            Some(_) if line.trim_start() == "```" => blocks.extend(current.take()),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
            None => {}
        }
    }
    blocks
}

/// The docs' YAML blocks that are whole route files (a list of items the loader reads) or
/// whole test files validate; fragments (one step, a map of options) are not files.
#[test]
fn the_route_and_test_files_in_the_docs_validate() {
    let routes = routes_schema();
    let tests = test_schema();
    let mut checked = 0;
    let mut failures = Vec::new();
    for entry in std::fs::read_dir(root().join("docs")).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let markdown = std::fs::read_to_string(&path).unwrap();
        for (line, block) in yaml_blocks(&markdown) {
            let name = format!("{}:{line}", path.display());
            let Ok(docs) = camel_core::yaml::parse_documents(&block, &name) else {
                continue;
            };
            let Some((first, _)) = docs.first() else {
                continue;
            };
            let validator = if first.get("tests").is_some() && first.get("routes").is_some() {
                &tests
            } else {
                if !first.is_array() || !validates_text(&block) {
                    continue;
                }
                &routes
            };
            failures.extend(schema_errors(validator, &block, &name));
            checked += 1;
        }
    }
    assert!(
        checked >= 25,
        "only {checked} YAML blocks of the docs are files"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Writes `text` to a file in a fresh folder; returns the folder and the file.
fn file(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

/// Route files, each valid or not, checked by the schema and by `camel validate`.
const ROUTE_SAMPLES: &[(&str, bool)] = &[
    ("- from: {uri: 'direct:a', steps: [{to: 'log:x'}]}", true),
    (
        "- route:\n    id: r\n    autoStartup: 'false'\n    from:\n      uri: direct:a\n      steps:\n        - setHeader: {name: x, simple: '${body}'}\n        - filter:\n            simple: '${header.x} == 1'\n            steps: [{to: 'log:y'}]\n        - stop\n",
        true,
    ),
    (
        "- from:\n    uri: direct:a\n    steps:\n      - split:\n          tokenize: {token: ','}\n          parallelProcessing: 'true'\n          steps: [{log: '${body}'}]\n      - marshal: json\n      - unmarshal: {jacksonXml: {}}\n",
        true,
    ),
    (
        "- errorHandler:\n    deadLetterChannel:\n      deadLetterUri: log:dead\n      redeliveryPolicy: {maximumRedeliveries: 3, redeliveryDelay: 10}\n- route:\n    from: {uri: direct:a, steps: [{to: log:x}]}\n",
        true,
    ),
    (
        "- from:\n    uri: direct:a\n    steps:\n      - choice:\n          when:\n            - simple: '${body} == 1'\n              steps: [{to: log:one}]\n          otherwise:\n            steps: [{to: log:other}]\n",
        true,
    ),
    // A misspelt step option.
    (
        "- from:\n    uri: direct:a\n    steps:\n      - setHeader: {nmae: x, simple: '${body}'}\n",
        false,
    ),
    // A misspelt step name.
    (
        "- from:\n    uri: direct:a\n    steps:\n      - settHeader: {name: x, simple: '${body}'}\n",
        false,
    ),
    // A misspelt route key.
    (
        "- route:\n    idd: r\n    from: {uri: direct:a, steps: [{to: log:x}]}\n",
        false,
    ),
    // A misspelt key of `from`.
    (
        "- from: {uri: direct:a, stepz: [{to: log:x}]}\n",
        false,
    ),
    // A misspelt top-level item.
    ("- routee: {from: {uri: direct:a}}\n", false),
    // A misspelt language.
    (
        "- from:\n    uri: direct:a\n    steps:\n      - setBody: {expression: {simpel: x}}\n",
        false,
    ),
    // A number that is no number.
    (
        "- from:\n    uri: direct:a\n    steps:\n      - delay: {constant: 10, asyncDelayed: maybe}\n",
        false,
    ),
    // `from` without its URI.
    ("- from: {steps: [{to: log:x}]}\n", false),
    // A value that is not one of an option's values.
    (
        "- from:\n    uri: direct:a\n    steps:\n      - setExchangePattern: {pattern: InAndOut}\n",
        false,
    ),
    // Two keys on one item.
    (
        "- from: {uri: direct:a}\n  route: {from: {uri: direct:b}}\n",
        false,
    ),
    // A misspelt data format option.
    (
        "- from:\n    uri: direct:a\n    steps:\n      - marshal: {json: {prettyPrnt: true}}\n",
        false,
    ),
    // The Camel spellings of an enum value and of a data format.
    (
        "- from:\n    uri: direct:a\n    steps:\n      - setExchangePattern: {pattern: IN_OUT}\n      - marshal: {gzipDeflater: {}}\n      - unmarshal: gzipDeflater\n",
        true,
    ),
];

#[test]
fn the_schema_and_camel_validate_agree_on_route_files() {
    let routes = routes_schema();
    for (i, (text, valid)) in ROUTE_SAMPLES.iter().enumerate() {
        let (_dir, path) = file(&format!("sample-{i}.yaml"), text);
        let errors = schema_errors(&routes, text, &path.display().to_string());
        let out = validate(&path);
        assert_eq!(
            errors.is_empty(),
            *valid,
            "the schema on sample {i}:\n{text}\n{}",
            errors.join("\n")
        );
        assert_eq!(
            out.status.success(),
            *valid,
            "camel validate on sample {i}:\n{text}\n{}",
            support::text(&out)
        );
    }
}

#[test]
fn a_misspelt_key_in_a_test_file_is_flagged_by_the_schema_and_by_camel_test() {
    let tests = test_schema();
    let route = "- from: {uri: direct:a, steps: [{to: 'mock:out'}]}\n";
    let good = "routes: [r.yaml]\ntests:\n  - name: one\n    inputs: [{to: 'direct:a', body: x}]\n    expect:\n      mocks:\n        'mock:out': {count: 1, bodies: [x], minCount: 1}\n";
    let bad = good.replace("bodies:", "bodys:");
    for (text, valid) in [(good.to_string(), true), (bad, false)] {
        let (dir, path) = file("a.test.yaml", &text);
        std::fs::write(dir.path().join("r.yaml"), route).unwrap();
        let errors = schema_errors(&tests, &text, "a.test.yaml");
        assert_eq!(errors.is_empty(), valid, "{text}\n{}", errors.join("\n"));
        let out = camel(&["test", &path.display().to_string()]);
        assert_eq!(out.status.success(), valid, "{}", support::text(&out));
        if !valid {
            assert!(support::text(&out).contains("unknown key `bodys`"));
        }
    }
}

#[test]
fn the_schema_has_descriptions_defaults_enums_and_both_spellings() {
    let out = camel(&["schema"]);
    let schema: Json = serde_json::from_slice(&out.stdout).unwrap();
    let defs = &schema["$defs"];
    let step = &defs["Step"]["then"]["properties"];
    assert!(step.get("set_header").is_some() && step.get("setHeader").is_some());
    assert!(step.get("to_d").is_some() && step.get("toD").is_some());
    let dlc = &defs["DeadLetterChannel"];
    let properties = &dlc["properties"];
    assert!(
        properties.get("dead_letter_uri").is_some() && properties.get("deadLetterUri").is_some()
    );
    assert!(
        dlc["description"].as_str().is_some_and(|d| !d.is_empty()),
        "{dlc}"
    );
    let text = serde_json::to_string(&schema).unwrap();
    assert!(text.contains("\"default\":1000"), "defaults are listed");
    assert!(text.contains("\"emitPartial\"") && text.contains("\"emit_partial\""));
}

/// The schemas kept in the repository (for editors to point at) are `camel schema`'s.
#[test]
fn the_schemas_in_docs_are_up_to_date() {
    for (args, file) in [
        (&["schema"][..], "docs/schema/routes.schema.json"),
        (
            &["schema", "--test-file"][..],
            "docs/schema/test.schema.json",
        ),
    ] {
        let out = camel(args);
        let kept = std::fs::read_to_string(root().join(file)).unwrap_or_default();
        assert!(
            String::from_utf8_lossy(&out.stdout) == kept,
            "{file} is out of date: run `cargo run -p camel-cli -- {} -o {file}`",
            args.join(" ")
        );
    }
}
