//! Compares what came with what a test file expects, and writes the difference as a
//! readable diff (`-` expected, `+` received).

use std::collections::BTreeMap;

use camel_api::{Body, Exchange, Value};
use camel_core::Registry;
use serde_json::Value as Json;

/// The failures of one test case, each a short heading and its diff.
#[derive(Debug, Default)]
pub(crate) struct Failures(pub(crate) Vec<String>);

impl Failures {
    pub(crate) fn push(&mut self, heading: impl Into<String>, detail: impl Into<String>) {
        let detail = detail.into();
        let heading = heading.into();
        self.0.push(if detail.is_empty() {
            heading
        } else {
            format!("{heading}\n{detail}")
        });
    }
}

/// The body a test file wrote as the exchange body it stands for.
pub(crate) fn body_of(json: &Json) -> Body {
    match json {
        Json::Null => Body::Empty,
        Json::String(s) => Body::from(s.as_str()),
        other => Body::from(other.clone()),
    }
}

/// Text to show and compare for a body: JSON pretty-printed so a diff is line by line.
fn shown(body: &Body) -> String {
    match body {
        Body::Empty => String::new(),
        Body::Json(j) => serde_json::to_string_pretty(j).unwrap_or_default(),
        other => match other.as_text() {
            Some(t) => match serde_json::from_str::<Json>(&t) {
                Ok(j @ (Json::Object(_) | Json::Array(_))) => {
                    serde_json::to_string_pretty(&j).unwrap_or_else(|_| t.to_string())
                }
                _ => t.to_string(),
            },
            None => format!("<{} bytes>", other.len()),
        },
    }
}

/// Whether `body` is what `expected` says: text for a string, the same JSON document
/// for a map or a list (however it is spaced), empty for null.
pub(crate) fn same_body(expected: &Json, body: &Body) -> bool {
    match expected {
        Json::Null => body.is_empty(),
        Json::String(s) => body.as_text().as_deref() == Some(s.as_str()),
        other => match body {
            Body::Json(j) => **j == *other,
            b => b
                .as_text()
                .and_then(|t| serde_json::from_str::<Json>(&t).ok())
                .is_some_and(|j| j == *other),
        },
    }
}

/// Checks a body; on a difference pushes a diff.
pub(crate) fn body(failures: &mut Failures, what: &str, expected: &Json, body: &Body) {
    if !same_body(expected, body) {
        let want = shown(&body_of(expected));
        failures.push(format!("{what}: body differs"), diff(&want, &shown(body)));
    }
}

fn header_text(v: &Value) -> String {
    v.to_string()
}

fn json_text(j: &Json) -> String {
    match j {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Checks headers (compared as text, so `7` matches `"7"`).
pub(crate) fn headers(
    failures: &mut Failures,
    what: &str,
    expected: &BTreeMap<String, Json>,
    exchange: &Exchange,
) {
    for (name, want) in expected {
        let got = exchange.header(name).map(header_text);
        if got.as_deref() != Some(json_text(want).as_str()) {
            failures.push(
                format!("{what}: header `{name}` differs"),
                diff(
                    &json_text(want),
                    got.as_deref().unwrap_or("<no such header>"),
                ),
            );
        }
    }
}

/// Checks predicates in the route languages against `exchange`.
pub(crate) fn predicates(
    failures: &mut Failures,
    what: &str,
    registry: &Registry,
    predicates: &[(&str, &str)],
    exchange: &Exchange,
) {
    for (language, text) in predicates {
        let Some(lang) = registry.language(language) else {
            failures.push(format!("{what}: no language `{language}`"), "");
            continue;
        };
        let outcome = lang
            .predicate(text, &Default::default())
            .map_err(camel_api::CamelError::from)
            .and_then(|p| p.matches(exchange));
        match outcome {
            Ok(true) => {}
            Ok(false) => failures.push(
                format!("{what}: {language} `{text}` does not hold"),
                indent(&format!("body: {}", shown(&exchange.message.body))),
            ),
            Err(e) => failures.push(format!("{what}: {language} `{text}` failed: {e}"), ""),
        }
    }
}

/// Checks the bodies a mock received: in order, or in any order.
pub(crate) fn bodies(
    failures: &mut Failures,
    what: &str,
    expected: &[Json],
    received: &[Exchange],
    any_order: bool,
) {
    let mut got: Vec<&Body> = received.iter().map(|ex| &ex.message.body).collect();
    let ok = if any_order {
        let mut left = got.clone();
        expected.len() == left.len()
            && expected
                .iter()
                .all(|want| match left.iter().position(|b| same_body(want, b)) {
                    Some(i) => {
                        left.remove(i);
                        true
                    }
                    None => false,
                })
    } else {
        expected.len() == got.len() && expected.iter().zip(&got).all(|(w, b)| same_body(w, b))
    };
    if ok {
        return;
    }
    let mut want: Vec<String> = expected.iter().map(|j| one_line(&body_of(j))).collect();
    let mut have: Vec<String> = got.drain(..).map(one_line).collect();
    if any_order {
        want.sort();
        have.sort();
    }
    let order = if any_order { " (in any order)" } else { "" };
    failures.push(
        format!(
            "{what}: bodies differ{order}: expected {}, received {}",
            want.len(),
            have.len()
        ),
        diff(&want.join("\n"), &have.join("\n")),
    );
}

fn one_line(body: &Body) -> String {
    match body {
        Body::Empty => "<empty>".to_string(),
        Body::Json(j) => j.to_string(),
        other => other
            .as_text()
            .map(|t| format!("{t:?}"))
            .unwrap_or_else(|| format!("<{} bytes>", other.len())),
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A line diff of `expected` and `received` (longest common subsequence): common lines
/// with two spaces, expected-only with `- `, received-only with `+ `.
pub(crate) fn diff(expected: &str, received: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = received.lines().collect();
    // Bodies in tests are small; the table is bounded by what the test file and the
    // route produced, and past this size a plain before/after is as readable.
    if a.len() * b.len() > 1_000_000 {
        return format!("{}\n{}", prefix("- ", &a), prefix("+ ", &b));
    }
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push(format!("      {}", a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] > lcs[i + 1][j]) {
            out.push(format!("    + {}", b[j]));
            j += 1;
        } else {
            out.push(format!("    - {}", a[i]));
            i += 1;
        }
    }
    if a.is_empty() {
        out.insert(0, "    - <empty>".to_string());
    }
    if b.is_empty() {
        out.push("    + <empty>".to_string());
    }
    out.join("\n")
}

fn prefix(p: &str, lines: &[&str]) -> String {
    lines
        .iter()
        .map(|l| format!("    {p}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_diff_marks_what_was_expected_and_what_came() {
        let d = diff("a\nb\nc", "a\nx\nc");
        assert_eq!(d, "      a\n    - b\n    + x\n      c");
        assert!(diff("", "z").contains("- <empty>"));
    }

    #[test]
    fn json_bodies_compare_as_documents() {
        let expected = serde_json::json!({"a": 1});
        assert!(same_body(&expected, &Body::from("{ \"a\" : 1 }")));
        assert!(!same_body(&expected, &Body::from("{\"a\": 2}")));
        assert!(same_body(&Json::String("x".into()), &Body::from("x")));
        assert!(same_body(&Json::Null, &Body::Empty));
    }
}
