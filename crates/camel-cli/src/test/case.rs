//! Runs one test case on a fresh context: load, advise, start, send, check, stop.

use std::path::{Path, PathBuf};
use std::time::Duration;

use camel_api::{CamelError, Exchange, Value};
use camel_core::properties::Properties;
use camel_core::RouteDefinition;
use camel_test::{advice_with, TestContext};

use super::check::{self, Failures};
use super::file::{predicates, MockCheck, MockSpec, TestCase, TestFile};

/// The routes of a test file, loaded with its properties.
pub(crate) fn load_routes(dir: &Path, file: &TestFile) -> Result<Vec<RouteDefinition>, String> {
    let routes: Vec<PathBuf> = file.routes.iter().map(|r| dir.join(r)).collect();
    let mut properties = Properties::new();
    if let Some(first) = routes.first() {
        let beside = first
            .parent()
            .unwrap_or(Path::new("."))
            .join("application.properties");
        if beside.is_file() {
            properties.merge(Properties::read_file(&beside).map_err(|e| e.to_string())?);
        }
    }
    for (key, value) in &file.properties {
        let text = match value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        properties.set(key, &text);
    }
    let mut files = crate::sources::beside(&routes);
    files.extend(routes);
    let (loaded, errors) = camel_core::yaml::load_files_with_kamelets(&files, &[], &properties);
    if errors.is_empty() {
        Ok(loaded)
    } else {
        Err(errors
            .iter()
            .map(|e| format!("error: {e}"))
            .collect::<Vec<_>>()
            .join("\n"))
    }
}

/// Replaces sources and mocks endpoints as the file says.
fn advise(file: &TestFile, routes: &mut [RouteDefinition]) -> Result<(), String> {
    let mut unused: Vec<&String> = file.replace_from.keys().collect();
    let mut unused_last: Vec<&String> = file.add_last.keys().collect();
    for route in routes.iter_mut() {
        let last = route.id.as_deref().and_then(|id| file.add_last.get(id));
        unused_last.retain(|k| Some(k.as_str()) != route.id.as_deref());
        let from = file
            .replace_from
            .iter()
            .find(|(key, _)| route.id.as_deref() == Some(key.as_str()) || route.from.uri == **key);
        if let Some((key, _)) = from {
            unused.retain(|k| *k != key);
        }
        advice_with(route, |a| {
            if let Some((_, uri)) = from {
                a.replace_from(uri.clone());
            }
            for spec in &file.mock {
                if spec.skip {
                    a.mock_endpoints_and_skip(&spec.endpoints);
                } else {
                    a.mock_endpoints(&spec.endpoints);
                }
            }
            if let Some(uri) = last {
                let uri = uri.clone();
                a.weave_add_last(move |s| s.to(uri));
            }
        })
        .map_err(|e| e.to_string())?;
    }
    if let Some(key) = unused.first() {
        return Err(format!(
            "replace_from: no route has the id or `from` URI `{key}`"
        ));
    }
    match unused_last.first() {
        Some(key) => Err(format!("add_last: no route has the id `{key}`")),
        None => Ok(()),
    }
}

/// The arrivals at every mock, in order: each one's name (without `mock:`).
type Arrivals = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// Gives every mock of the routes its canned reply or failure (from the first spec whose
/// pattern names it) and records each arrival in `arrivals`.
fn reply(test: &TestContext, routes: &[RouteDefinition], specs: &[MockSpec]) -> Arrivals {
    let arrivals = Arrivals::default();
    for name in mocked(routes, "*") {
        let spec = specs
            .iter()
            .find(|s| mocked(routes, &s.endpoints).contains(&name));
        let body = spec
            .and_then(|s| s.reply.as_ref())
            .and_then(|r| r.body.clone());
        let headers = spec
            .and_then(|s| s.reply.as_ref())
            .map(|r| r.headers.clone())
            .unwrap_or_default();
        let fail = spec
            .and_then(|s| s.fail.as_ref())
            .map(|f| (f.kind.clone(), f.message.clone().unwrap_or_default()));
        let seen = arrivals.clone();
        let me = name.clone();
        test.mock(&name).when_any_exchange_received(move |mut ex| {
            seen.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(me.clone());
            if let Some((kind, message)) = &fail {
                return Err(CamelError::user(kind, message));
            }
            if let Some(body) = &body {
                ex.message.body = check::body_of(body);
            }
            for (k, v) in &headers {
                ex = ex.with_header(k, Value::from(v.clone()));
            }
            Ok(ex)
        });
    }
    arrivals
}

/// `order`: the arrivals at the mocks it names, in order, are the list.
fn check_order(failures: &mut Failures, order: &[String], arrivals: &Arrivals) {
    let short = |n: &str| n.strip_prefix("mock:").unwrap_or(n).to_string();
    let wanted: Vec<String> = order.iter().map(|n| short(n)).collect();
    let seen: Vec<String> = arrivals
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter(|n| wanted.contains(n))
        .cloned()
        .collect();
    if seen != wanted {
        failures.push(
            "the mocks received in another order",
            check::diff(&wanted.join("\n"), &seen.join("\n")),
        );
    }
}

/// The names of the mocks the advice put in the routes for `pattern`: every `mock:` URI
/// of a `to` step whose name (the endpoint it stands for) matches it.
fn mocked(routes: &[RouteDefinition], pattern: &str) -> Vec<String> {
    let Ok(pattern) = camel_test::EndpointPattern::new(pattern) else {
        return Vec::new();
    };
    let text = serde_json::to_string(&routes.iter().map(|r| &r.steps).collect::<Vec<_>>())
        .unwrap_or_default();
    let mut names: Vec<String> = Vec::new();
    for piece in text.split('"') {
        if let Some(name) = piece.strip_prefix("mock:") {
            if pattern.matches(name) && !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// Runs one case; the failures say what differed.
pub(crate) async fn run(
    dir: &Path,
    file: &TestFile,
    case: &TestCase,
    context: camel_core::CamelContext,
) -> Result<Failures, String> {
    let within = case.within()?;
    let mut routes = load_routes(dir, file)?;
    advise(file, &mut routes)?;
    let test = TestContext::with_context(context);
    let arrivals = reply(&test, &routes, &file.mock);
    test.context()
        .add_routes(routes)
        .await
        .map_err(|e| e.to_string())?;
    test.context().start().await.map_err(|e| e.to_string())?;
    let mut last = None;
    for input in &case.inputs {
        let mut exchange = Exchange::new(check::body_of(&input.body));
        for (k, v) in &input.headers {
            exchange = exchange.with_header(k, Value::from(v.clone()));
        }
        last = Some(test.context().request(&input.to, exchange).await);
    }
    let mut failures = Failures::default();
    check_reply(&mut failures, test.context().registry(), case, last);
    for (name, expect) in &case.expect.mocks {
        check_mock(&mut failures, &test, name, expect, within).await;
    }
    if let Some(order) = &case.expect.order {
        check_order(&mut failures, order, &arrivals);
    }
    test.context().stop().await;
    Ok(failures)
}

fn check_reply(
    failures: &mut Failures,
    registry: &camel_core::Registry,
    case: &TestCase,
    last: Option<Result<Exchange, CamelError>>,
) {
    let expect = &case.expect;
    match (last, &expect.failed) {
        (None, _) => {}
        (Some(Ok(reply)), Some(failed)) => failures.push(
            format!(
                "expected the last input to fail with {}, it succeeded",
                failed.kind
            ),
            check::diff(
                &failed.kind,
                &format!(
                    "reply {:?}",
                    reply.message.body.as_text().unwrap_or_default()
                ),
            ),
        ),
        (Some(Err(e)), Some(failed)) => {
            if e.kind_name() != failed.kind {
                failures.push(
                    "the last input failed with another error kind",
                    check::diff(&failed.kind, e.kind_name()),
                );
            }
            if let Some(part) = &failed.message {
                if !e.message().contains(part.as_str()) {
                    failures.push(
                        format!("the error message does not contain {part:?}"),
                        check::diff(part, &e.message()),
                    );
                }
            }
        }
        (Some(Err(e)), None) => failures.push(
            format!("the last input failed: {} ({e})", e.kind_name()),
            "",
        ),
        (Some(Ok(reply)), None) => {
            if let Some(want) = &expect.reply {
                if let Some(body) = &want.body {
                    check::body(failures, "reply", body, &reply.message.body);
                }
                check::headers(failures, "reply", &want.headers, &reply);
                let p = predicates(&want.simple, &want.jq, &want.jsonpath);
                check::predicates(failures, "reply", registry, &p, &reply);
            }
        }
    }
}

async fn check_mock(
    failures: &mut Failures,
    test: &TestContext,
    name: &str,
    expect: &MockCheck,
    within: Duration,
) {
    let mock = test.mock(name);
    let what = format!("mock:{}", name.strip_prefix("mock:").unwrap_or(name));
    let awaited = [
        expect.count,
        expect.min_count,
        expect.bodies.as_ref().map(Vec::len),
        expect.bodies_any_order.as_ref().map(Vec::len),
    ]
    .into_iter()
    .flatten()
    .max()
    .unwrap_or(0);
    mock.expected_minimum_message_count(awaited);
    // Waits for the messages to arrive (or `within` to pass); the checks below report.
    let _ = mock.assert_is_satisfied(within).await;
    let received = mock.received();
    if let Some(count) = expect.count {
        if received.len() != count {
            failures.push(
                format!(
                    "{what}: expected {count} message(s), received {}",
                    received.len()
                ),
                "",
            );
        }
    }
    if let Some(min) = expect.min_count {
        if received.len() < min {
            failures.push(
                format!(
                    "{what}: expected at least {min} message(s), received {}",
                    received.len()
                ),
                "",
            );
        }
    }
    if let Some(bodies) = &expect.bodies {
        check::bodies(failures, &what, bodies, &received, false);
    }
    if let Some(bodies) = &expect.bodies_any_order {
        check::bodies(failures, &what, bodies, &received, true);
    }
    let p = predicates(&expect.simple, &expect.jq, &expect.jsonpath);
    for (i, ex) in received.iter().enumerate() {
        let at = format!("{what} message {}", i + 1);
        check::headers(failures, &at, &expect.headers, ex);
        check::predicates(failures, &at, test.context().registry(), &p, ex);
    }
    if received.is_empty() && (!expect.headers.is_empty() || !p.is_empty()) {
        failures.push(
            format!("{what}: no message came to check headers or predicates on"),
            "",
        );
    }
}
