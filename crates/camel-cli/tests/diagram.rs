//! `camel diagram`: every route file of `examples/` drawn in the three formats and
//! compared byte for byte with the golden files in `tests/diagram_golden/`, and each
//! example's README shows its Mermaid diagram as the golden file has it.
//!
//! After a deliberate change of the drawing, rewrite the golden files with
//! `CAMEL_UPDATE_GOLDEN=1 cargo test -p camel-cli --test diagram` and review the diff.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/diagram_golden")
}

/// Every route file of the examples, as (example folder name, file path relative to the
/// repository root); `*.test.yaml` files are test cases, not routes.
fn example_files() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(root().join("examples"))
        .expect("examples/ is readable")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let example = dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| (n.ends_with(".yaml") || n.ends_with(".yml")) && !n.contains(".test."))
            .collect();
        files.sort();
        for f in files {
            out.push((example.clone(), format!("examples/{example}/{f}")));
        }
    }
    out
}

fn golden_name(file: &str, ext: &str) -> String {
    let stem = file
        .trim_start_matches("examples/")
        .trim_end_matches(".yaml")
        .trim_end_matches(".yml")
        .replace(['/', '.'], "-");
    format!("{stem}.{ext}")
}

fn draw(file: &str, format: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_camel"))
        .args(["diagram", file, "--format", format])
        .env("RUST_LOG", "warn")
        .current_dir(root())
        .output()
        .expect("the camel binary runs");
    assert!(
        out.status.success(),
        "camel diagram {file} --format {format}: exit {:?}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the drawing is UTF-8")
}

#[test]
fn every_example_matches_its_golden_files_in_every_format() {
    let update = std::env::var_os("CAMEL_UPDATE_GOLDEN").is_some();
    let files = example_files();
    assert!(files.len() >= 10, "examples found: {files:?}");
    let mut differ = Vec::new();
    for (_, file) in &files {
        for (format, ext) in [("svg", "svg"), ("mermaid", "mmd"), ("dot", "dot")] {
            let drawn = draw(file, format);
            let path = golden_dir().join(golden_name(file, ext));
            if update {
                std::fs::create_dir_all(golden_dir()).unwrap();
                std::fs::write(&path, &drawn).unwrap();
                continue;
            }
            let golden = std::fs::read_to_string(&path).unwrap_or_default();
            if golden != drawn {
                differ.push(path.display().to_string());
            }
        }
    }
    assert!(
        differ.is_empty(),
        "drawings differ from their golden files (CAMEL_UPDATE_GOLDEN=1 rewrites them): {differ:#?}"
    );
}

#[test]
fn the_same_file_is_drawn_the_same_twice() {
    let file = "examples/rest-orders/routes.yaml";
    assert_eq!(draw(file, "svg"), draw(file, "svg"));
}

#[test]
fn every_example_readme_shows_its_mermaid_diagram() {
    let mut missing = Vec::new();
    for (example, file) in example_files() {
        let readme = root().join("examples").join(&example).join("README.md");
        let text = std::fs::read_to_string(&readme).unwrap_or_default();
        let golden = std::fs::read_to_string(golden_dir().join(golden_name(&file, "mmd")))
            .unwrap_or_default();
        if golden.is_empty() || !text.contains(&format!("```mermaid\n{golden}```")) {
            missing.push(file);
        }
    }
    assert!(
        missing.is_empty(),
        "README.md of these examples lacks the file's current Mermaid diagram: {missing:#?}"
    );
}

#[test]
fn the_resequencer_boundary_and_its_policy_are_drawn() {
    let mermaid = draw("examples/resequencer/routes.yaml", "mermaid");
    assert!(mermaid.contains("resequence · stream policy"), "{mermaid}");
    assert!(mermaid.contains("gap_timeout_ms=1000"), "{mermaid}");
    assert!(mermaid.contains("==>|\"continuation\"|"), "{mermaid}");
    let svg = draw("examples/resequencer/routes.yaml", "svg");
    assert!(svg.contains("continuation boundary"), "{svg}");
}

#[test]
fn the_outbox_and_a_batching_sink_show_their_settings() {
    let outbox = draw("examples/outbox/routes.yaml", "mermaid");
    assert!(outbox.contains("outbox publish orders"), "{outbox}");
    assert!(
        outbox.contains("outbox relay orders<br/>backoff_max=2s"),
        "{outbox}"
    );
    let sinks = draw("examples/sinks/routes.yaml", "mermaid");
    assert!(
        sinks.contains("[[\"to nats:camel.example.orders"),
        "{sinks}"
    );
    assert!(sinks.contains("linger_ms=25"), "{sinks}");
}

#[test]
fn branches_fork_and_join_and_error_handling_is_a_side_path() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("branches.yaml");
    std::fs::write(
        &file,
        r#"
- route:
    id: branches
    from:
      uri: direct:in
      steps:
        - choice:
            when:
              - simple: "${header.kind} == 'a'"
                steps: [{to: "log:a"}]
            otherwise:
              steps: [{to: "log:other"}]
        - multicast:
            steps: [{to: "log:m1"}, {to: "log:m2"}]
        - do_try:
            steps: [{to: "log:try"}]
            do_catch:
              - exception: [java.io.IOException]
                steps: [{to: "log:caught"}]
            do_finally:
              steps: [{to: "log:finally"}]
        - split:
            simple: "${body}"
            steps: [{to: "log:part"}]
    on_exception:
      - exception: [java.lang.Exception]
        handled: {constant: true}
        steps: [{to: "log:handled"}]
"#,
    )
    .unwrap();
    let m = draw(file.to_str().unwrap(), "mermaid");
    for want in [
        "{{\"choice\"}}",
        "|\"when ${header.kind} == 'a'\"|",
        "|\"otherwise\"|",
        "((\"end choice\"))",
        "{{\"multicast\"}}",
        "((\"aggregate\"))",
        "-.->|\"catch java.io.IOException\"|",
        "|\"finally\"|",
        "|\"each part\"|",
        "-.->|\"on exception\"|",
        ">\"on_exception java.lang.Exception",
    ] {
        assert!(m.contains(want), "missing {want} in:\n{m}");
    }
    // Step ids as the tracer names them, for the console's counters.
    let svg = draw(file.to_str().unwrap(), "svg");
    assert!(
        svg.contains("data-step=\"steps[0].choice.when[0].steps[0].to\""),
        "{svg}"
    );
    assert!(
        svg.contains("data-step=\"steps[1].multicast.steps[1].to\""),
        "{svg}"
    );
}

#[test]
fn credentials_never_reach_the_drawing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("secret.yaml");
    std::fs::write(
        &file,
        r#"
- route:
    id: secret
    from:
      uri: timer:t
      steps:
        - to:
            uri: "sql:select 1?datasource=postgres://user:hunter2@127.0.0.1/db"
        - to:
            uri: sqs:q
            parameters: {secret_key: hunter2, access_key: AKIAXXXX}
"#,
    )
    .unwrap();
    for format in ["svg", "mermaid", "dot"] {
        let out = draw(file.to_str().unwrap(), format);
        assert!(
            !out.contains("hunter2") && !out.contains("AKIAXXXX"),
            "{format}:\n{out}"
        );
    }
}
