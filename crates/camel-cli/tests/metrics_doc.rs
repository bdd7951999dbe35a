//! Every metric the code registers is in `docs/metrics.md`: the sources of every crate are
//! scanned for `counter!`, `gauge!` and `histogram!` calls, their first argument read as
//! a string literal or as a `&str` constant defined in the sources, and each name must
//! appear in the table (as `` `name` ``).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A string literal at the start of `s` (after spaces), without its quotes.
fn literal(s: &str) -> Option<&str> {
    let s = s.trim_start().strip_prefix('"')?;
    s.find('"').map(|end| &s[..end])
}

/// An identifier path at the start of `s` (`super::STATE_METRIC`), its last segment.
fn constant(s: &str) -> Option<&str> {
    let s = s.trim_start();
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(s.len());
    let last = s[..end].rsplit("::").next()?;
    (!last.is_empty()
        && last
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
    .then_some(last)
}

#[test]
fn every_registered_metric_is_in_the_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        let src = krate.path().join("src");
        if src.is_dir() {
            sources(&src, &mut files);
        }
    }
    let mut constants = BTreeMap::new();
    let mut calls: Vec<(String, PathBuf)> = Vec::new();
    let mut literals = BTreeSet::new();
    for file in &files {
        // Tests register made-up metrics of their own.
        if file.components().any(|c| c.as_os_str() == "tests") || file.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for line in text.lines() {
            if let Some(rest) = line
                .trim_start()
                .strip_prefix("pub const ")
                .or_else(|| line.trim_start().strip_prefix("const "))
                .or_else(|| line.trim_start().strip_prefix("pub(crate) const "))
            {
                if let Some((name, value)) = rest.split_once(": &str =") {
                    if let Some(v) = literal(value) {
                        constants.insert(name.trim().to_string(), v.to_string());
                    }
                }
            }
        }
        for mac in ["counter!(", "gauge!(", "histogram!("] {
            for (at, _) in text.match_indices(mac) {
                let arg = &text[at + mac.len()..];
                if let Some(name) = literal(arg) {
                    literals.insert(name.to_string());
                } else if let Some(c) = constant(arg) {
                    calls.push((c.to_string(), file.clone()));
                } else {
                    panic!(
                        "{}: a metric whose name this test cannot read: {}",
                        file.display(),
                        &arg[..arg.len().min(60)]
                    );
                }
            }
        }
    }
    for (c, file) in calls {
        let name = constants
            .get(&c)
            .unwrap_or_else(|| panic!("{}: metric name constant `{c}` not found", file.display()));
        literals.insert(name.clone());
    }
    assert!(literals.contains("camel_exchanges_total"), "{literals:?}");
    let doc = std::fs::read_to_string(root.join("docs/metrics.md")).unwrap();
    let missing: Vec<&String> = literals
        .iter()
        .filter(|n| !doc.contains(&format!("| `{n}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "metrics missing from docs/metrics.md's table: {missing:?}"
    );
}
