//! `camel run --otel-step-spans`: a span per step, the child of the route's span (or of
//! the step that contains it), with `camel.step.id` and `camel.step.kind`.

mod support;

use std::time::Duration;

use support::otlp::{self, Received};
use support::spawn;

const ROUTES: &str = "\
- route:
    id: tick
    from:
      uri: timer:tick?repeatCount=1
      steps:
        - set_header: {name: a, constant: '1'}
        - choice:
            id: pick
            when:
              - simple: '${header.a} == 1'
                steps:
                  - log: picked
";

fn named<'a>(spans: &'a [Received], name: &str) -> &'a Received {
    spans
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no span `{name}` in {spans:#?}"))
}

#[test]
fn each_step_has_a_span_under_its_route_or_its_enclosing_step() {
    let receiver = otlp::receiver();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, ROUTES).unwrap();
    let file = file.display().to_string();
    let (mut child, _log) = spawn(&[
        "run",
        &file,
        "--otel-endpoint",
        &receiver.endpoint,
        "--otel-step-spans",
        "--max-messages",
        "1",
    ]);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("camel run stops after its exchange")
        .unwrap();
    assert!(status.success(), "{status:?}");

    let spans = receiver.collect(|s| s.len() >= 4);
    assert_eq!(spans.len(), 4, "the route and its three steps: {spans:#?}");
    let route = named(&spans, "tick");
    let header = named(&spans, "steps[0].set_header");
    let choice = named(&spans, "pick");
    let log = named(&spans, "steps[1].choice#pick.when[0].steps[0].log");
    for step in [header, choice, log] {
        assert_eq!(step.trace_id, route.trace_id, "one trace: {step:#?}");
        assert_eq!(step.kind, 1, "internal spans");
        assert_eq!(step.attribute("camel.route.id"), Some("tick"));
    }
    assert_eq!(header.parent_span_id, route.span_id);
    assert_eq!(choice.parent_span_id, route.span_id);
    assert_eq!(
        log.parent_span_id, choice.span_id,
        "nested in the choice's span"
    );
    assert_eq!(choice.attribute("camel.step.id"), Some("pick"));
    assert_eq!(choice.attribute("camel.step.kind"), Some("choice"));
    assert_eq!(header.attribute("camel.step.kind"), Some("set_header"));
    assert_eq!(
        log.attribute("camel.step.id"),
        Some("steps[1].choice#pick.when[0].steps[0].log")
    );
}
