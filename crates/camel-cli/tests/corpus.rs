//! The corpus: route files written here in the shapes of Camel's public example
//! repositories (Camel JBang, kamelet and Camel K examples, files drawn in Kaoto and
//! Karavan), each put through `camel validate`. A regression floor only: files written in
//! shapes already supported measure nothing about what users bring, so the compatibility
//! figure is measured on real files by others (docs/compatibility.md). Checks that every
//! file that does not validate says what is unsupported and what to do instead, never
//! "unknown key" or a URI parse error.

mod support;

use std::path::Path;

use support::{camel, text};

/// Files that validated when the corpus was last measured: fewer is a regression. (EIPs
/// landing in parallel, `split` and `aggregate`, are counted apart in the printout.)
const VALIDATED_AT_LEAST: usize = 38;

/// What an error must say for a file that cannot run here.
const EXPLAINED: &[&str] = &[
    "camel-rs does not support yet",
    "cannot run here",
    "is not supported in this simple language",
    "no database: give `datasource`",
    // Follows a bean whose Java `type` could not be built.
    "no bean is registered under",
    // What `camel run` would refuse at start, said by `validate` too.
    "needs `group_id`",
];

/// Errors that mean the file was misread, not that camel-rs lacks something.
const MISREAD: &[&str] = &["unknown key", "a URI needs a scheme", "unknown parameter"];

#[derive(Default)]
struct Tally {
    validated: Vec<String>,
    in_flight: Vec<String>,
    jvm_only: Vec<String>,
    components: Vec<String>,
    other: Vec<String>,
}

#[test]
fn the_corpus_validates_or_says_why_not() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 40, "the corpus has {} files", files.len());
    let mut tally = Tally::default();
    let mut unexplained = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let out = camel(&["validate", &path.display().to_string()]);
        let all = text(&out);
        if out.status.success() {
            tally.validated.push(name);
            continue;
        }
        let errors: Vec<&str> = all.lines().filter(|l| l.starts_with("error:")).collect();
        assert!(
            !errors.is_empty(),
            "{name}: failed without an error line: {all}"
        );
        for e in &errors {
            let misread = MISREAD.iter().any(|m| e.contains(m));
            if misread || !EXPLAINED.iter().any(|x| e.contains(x)) {
                unexplained.push(format!("{name}: {e}"));
            }
        }
        let has = |needle: &str| errors.iter().any(|e| e.contains(needle));
        if has("`split` is a Camel EIP") || has("`aggregate` is a Camel EIP") {
            tally.in_flight.push(name);
        } else if has("cannot run here") {
            tally.jvm_only.push(name);
        } else if has("Camel component") || has("Kamelet") {
            tally.components.push(name);
        } else {
            tally.other.push(name);
        }
    }
    let total = files.len();
    let share = |n: usize, of: usize| 100.0 * n as f64 / of as f64;
    let v = tally.validated.len();
    println!(
        "RESULT corpus files={total} validated={v} share={:.1}% \
         share_without_split_aggregate={:.1}%",
        share(v, total),
        share(v, total - tally.in_flight.len())
    );
    println!(
        "  split/aggregate (landing in parallel): {:?}",
        tally.in_flight
    );
    println!(
        "  JVM only (Java beans, Groovy):          {:?}",
        tally.jvm_only
    );
    println!(
        "  components camel-rs lacks:              {:?}",
        tally.components
    );
    println!(
        "  other:                                  {:?}",
        tally.other
    );
    assert!(
        unexplained.is_empty(),
        "errors that do not say what is unsupported:\n{}",
        unexplained.join("\n")
    );
    assert!(
        v >= VALIDATED_AT_LEAST,
        "only {v} of {total} files validate (was {VALIDATED_AT_LEAST}): {:?}",
        tally.other
    );
}
