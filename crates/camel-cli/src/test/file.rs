//! The `*.test.yaml` format (ADR 0127), read with every unknown key reported at its line
//! and column, as `camel validate` reports a route's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value as Json;

/// One test file: the routes it loads, how they are advised, and its test cases.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields)]
pub(crate) struct TestFile {
    /// Route files, relative to the test file.
    pub(crate) routes: Vec<PathBuf>,
    /// Values for `{{key}}` placeholders; win over `application.properties` beside the
    /// first route file.
    #[serde(default)]
    pub(crate) properties: BTreeMap<String, Json>,
    /// Route id (or the route's `from` URI) → the URI it consumes from instead.
    #[serde(default, alias = "replaceFrom")]
    pub(crate) replace_from: BTreeMap<String, String>,
    /// Endpoints replaced by (or preceded by) mocks.
    #[serde(default)]
    pub(crate) mock: Vec<MockSpec>,
    /// Route id → an endpoint (a `mock:` one, usually) sent to after the route's last
    /// step, as advice-with's `weave_add_last`: what a route ends with can be checked even
    /// when its last step is no endpoint (a `log`, or a resequencer's continuation).
    #[serde(default, alias = "addLast")]
    pub(crate) add_last: BTreeMap<String, String>,
    /// The test cases, each run on a fresh context.
    pub(crate) tests: Vec<TestCase>,
}

/// `mock: [{endpoints: "sqs:*", skip: true, reply: …, fail: …}]`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields)]
pub(crate) struct MockSpec {
    /// A URI, a glob (`sqs:*`, `http*:*`) or a regular expression.
    pub(crate) endpoints: String,
    /// Skip the real endpoint (default); `false` calls it after the mock.
    #[serde(default = "yes")]
    pub(crate) skip: bool,
    /// What each mock answers (its body and headers replace the exchange's).
    #[serde(default)]
    pub(crate) reply: Option<Reply>,
    /// Fail every exchange that reaches the mock with this error kind.
    #[serde(default)]
    pub(crate) fail: Option<Failure>,
}

/// A canned reply.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields)]
pub(crate) struct Reply {
    #[serde(default)]
    pub(crate) body: Option<Json>,
    #[serde(default)]
    pub(crate) headers: BTreeMap<String, Json>,
}

/// A failure a mock raises.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields)]
pub(crate) struct Failure {
    /// The error kind, as `on_exception` matches it (`IOException`).
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) message: Option<String>,
}

/// One test case.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields)]
pub(crate) struct TestCase {
    pub(crate) name: String,
    /// Messages sent in order, each waiting for its reply.
    pub(crate) inputs: Vec<Input>,
    #[serde(default)]
    pub(crate) expect: Expect,
    /// How long mocks may take to receive what is expected (`5s`, `500ms`; default 5 s).
    #[serde(default)]
    pub(crate) within: Option<String>,
    /// Run the case on a paused clock that jumps to the next timer whenever nothing else
    /// can run: delays, throttles, timeouts and `within` cost no real time.
    #[serde(default, alias = "virtualTime")]
    pub(crate) virtual_time: bool,
}

/// A message sent to an endpoint.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    /// The endpoint (`direct:orders`).
    pub(crate) to: String,
    #[serde(default)]
    pub(crate) body: Json,
    #[serde(default)]
    pub(crate) headers: BTreeMap<String, Json>,
}

/// What must hold after the inputs were sent.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields)]
pub(crate) struct Expect {
    /// The last input's reply.
    #[serde(default)]
    pub(crate) reply: Option<MessageCheck>,
    /// The last input failed with this error kind.
    #[serde(default)]
    pub(crate) failed: Option<FailedCheck>,
    /// Mock name (`sqs:orders`, `mock:result`) → what it received.
    #[serde(default)]
    pub(crate) mocks: BTreeMap<String, MockCheck>,
    /// Mock names in the order messages must reach them, across mocks
    /// (`[kafka:orders, sqs:audit, kafka:orders]`): the arrivals at the mocks named here,
    /// in arrival order, must be this list. Checked once the `mocks` checks have waited.
    #[serde(default)]
    pub(crate) order: Option<Vec<String>>,
}

/// Checks of one message: its body, headers and predicates.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields)]
pub(crate) struct MessageCheck {
    #[serde(default)]
    pub(crate) body: Option<Json>,
    #[serde(default)]
    pub(crate) headers: BTreeMap<String, Json>,
    /// A `simple` predicate that must hold.
    #[serde(default)]
    pub(crate) simple: Option<String>,
    /// A `jq` predicate (truthy output) that must hold.
    #[serde(default)]
    pub(crate) jq: Option<String>,
    /// A `jsonpath` predicate (a match) that must hold.
    #[serde(default)]
    pub(crate) jsonpath: Option<String>,
}

/// `failed: {kind: IllegalArgumentException, message: "…"}`: the message is a substring.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields)]
pub(crate) struct FailedCheck {
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) message: Option<String>,
}

/// What one mock must have received.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields)]
pub(crate) struct MockCheck {
    /// Exactly this many messages.
    #[serde(default)]
    pub(crate) count: Option<usize>,
    /// At least this many.
    #[serde(default, alias = "minCount")]
    pub(crate) min_count: Option<usize>,
    /// These bodies, in this order.
    #[serde(default)]
    pub(crate) bodies: Option<Vec<Json>>,
    /// These bodies, in any order.
    #[serde(default, alias = "bodiesAnyOrder")]
    pub(crate) bodies_any_order: Option<Vec<Json>>,
    /// Every message carries these headers.
    #[serde(default)]
    pub(crate) headers: BTreeMap<String, Json>,
    /// A `simple` predicate that must hold.
    #[serde(default)]
    pub(crate) simple: Option<String>,
    /// A `jq` predicate (truthy output) that must hold.
    #[serde(default)]
    pub(crate) jq: Option<String>,
    /// A `jsonpath` predicate (a match) that must hold.
    #[serde(default)]
    pub(crate) jsonpath: Option<String>,
}

/// The predicates of a check, by language.
pub(crate) fn predicates<'a>(
    simple: &'a Option<String>,
    jq: &'a Option<String>,
    jsonpath: &'a Option<String>,
) -> Vec<(&'static str, &'a str)> {
    [("simple", simple), ("jq", jq), ("jsonpath", jsonpath)]
        .into_iter()
        .filter_map(|(l, t)| t.as_deref().map(|t| (l, t)))
        .collect()
}

fn yes() -> bool {
    true
}

impl TestCase {
    /// The `within` duration (default 5 s).
    pub(crate) fn within(&self) -> Result<Duration, String> {
        match &self.within {
            None => Ok(Duration::from_secs(5)),
            Some(text) => camel_api::parse_duration(text)
                .ok_or_else(|| format!("`within: {text}` is not a duration such as 5s or 500ms")),
        }
    }
}

/// Reads a test file; errors name the file, line and column.
pub(crate) fn read(path: &Path) -> Result<TestFile, String> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: cannot read: {e}"))?;
    let docs = camel_core::yaml::parse_documents(&text, &name)
        .map_err(|(message, line, column)| format!("{name}:{line}:{column}: {message}"))?;
    let Some((value, positions)) = docs.into_iter().next() else {
        return Err(format!(
            "{name}: the file is empty (it needs `routes:` and `tests:`)"
        ));
    };
    serde_path_to_error::deserialize::<_, TestFile>(value).map_err(|e| {
        let mut pointer = camel_core::compiler::pointer_of(e.path());
        let message = e.inner().to_string();
        let message = match unknown_key(&message) {
            Some((key, expected)) => {
                if !pointer.ends_with(&format!("/{key}")) {
                    pointer = format!("{pointer}/{key}");
                }
                let hint = camel_api::suggest::nearest(key, expected.iter().map(String::as_str))
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                format!(
                    "unknown key `{key}` (expected one of: {}){hint}",
                    expected.join(", ")
                )
            }
            None => message,
        };
        match positions.locate(&pointer) {
            Some(at) => format!("{at}: {message}"),
            None => format!("{name}: {message}"),
        }
    })
}

/// serde's "unknown field `x`, expected one of `a`, `b`" → (`x`, [a, b]).
fn unknown_key(message: &str) -> Option<(&str, Vec<String>)> {
    let rest = message.strip_prefix("unknown field `")?;
    let (key, rest) = rest.split_once('`')?;
    let expected = rest
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    Some((key, expected))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_key_is_located_with_a_suggestion() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.test.yaml");
        std::fs::write(
            &path,
            "routes: [r.yaml]\ntests:\n  - name: one\n    inputs: [{to: 'direct:a'}]\n    expect:\n      mocks:\n        out: {count: 1, bodys: [x]}\n",
        )
        .unwrap();
        let err = read(&path).unwrap_err();
        assert!(err.contains("a.test.yaml:7:"), "{err}");
        assert!(err.contains("unknown key `bodys`"), "{err}");
        assert!(err.contains("did you mean `bodies`?"), "{err}");
    }
}
