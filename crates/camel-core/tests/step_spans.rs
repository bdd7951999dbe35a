//! Step spans: with the `camel::step` target enabled when a route is compiled, every step
//! execution runs in a `step` span carrying the route id and the step's path, nested steps
//! included, and a failing step reports its error inside its span.

use std::sync::{Arc, Mutex};

use camel_api::{BoxProcessor, CamelError, Exchange};
use camel_core::CamelContext;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

#[derive(Default, Clone)]
struct Seen {
    /// (route_id, step) of each step span, in creation order.
    spans: Arc<Mutex<Vec<(String, String)>>>,
    /// (step of the enclosing span, error) of each `step failed` event.
    failures: Arc<Mutex<Vec<(String, String)>>>,
}

#[derive(Default)]
struct Fields(Vec<(String, String)>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .push((field.name().to_string(), format!("{value:?}")));
    }
}

impl Fields {
    fn get(&self, name: &str) -> String {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }
}

struct StepPath(String);

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Seen {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().target() != "camel::step" {
            return;
        }
        let mut f = Fields::default();
        attrs.record(&mut f);
        let step = f.get("step");
        self.spans
            .lock()
            .unwrap()
            .push((f.get("route_id"), step.clone()));
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(StepPath(step));
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        if event.metadata().target() != "camel::step" {
            return;
        }
        let mut f = Fields::default();
        event.record(&mut f);
        let step = ctx
            .event_span(event)
            .and_then(|s| s.extensions().get::<StepPath>().map(|p| p.0.clone()))
            .unwrap_or_default();
        self.failures.lock().unwrap().push((step, f.get("error")));
    }
}

const ROUTES: &str = r#"
- route:
    id: spans
    from:
      uri: direct:in
      steps:
        - set_header: { name: h, constant: "1" }
        - filter:
            simple: "${header.h} == '1'"
            steps:
              - set_body: { constant: inner }
        - process: { ref: boom }
"#;

/// Runs one exchange into `direct:in` of `yaml`, where the processor `boom` fails with
/// `message`, recording spans and failures; returns what was recorded and the outcome.
async fn run_with_boom(yaml: &str, message: &'static str) -> (Seen, bool) {
    let seen = Seen::default();
    let subscriber = tracing_subscriber::registry().with(seen.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    let ctx = CamelContext::new();
    ctx.add_resource(
        "boom",
        Arc::new(BoxProcessor::sync(move |_ex: Exchange| {
            Err(CamelError::processor(message))
        })),
    );
    let routes = camel_core::yaml::load_str(yaml, "spans.yaml").unwrap();
    ctx.add_routes(routes).await.unwrap();
    ctx.start().await.unwrap();
    let failed = ctx.request("direct:in", Exchange::new("x")).await.is_err();
    ctx.stop().await;
    (seen, failed)
}

#[tokio::test]
async fn every_step_runs_in_a_span_with_its_path() {
    let (seen, failed) = run_with_boom(ROUTES, "boom went the step").await;
    assert!(failed, "the last step fails");

    let spans: Vec<String> = seen
        .spans
        .lock()
        .unwrap()
        .iter()
        .inspect(|(route, _)| assert_eq!(route, "spans"))
        .map(|(_, step)| step.clone())
        .collect();
    assert_eq!(
        spans,
        [
            "steps[0].set_header",
            "steps[1].filter",
            "steps[1].filter.steps[0].set_body",
            "steps[2].process",
        ]
    );
    let failures = seen.failures.lock().unwrap().clone();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].0, "steps[2].process");
    assert!(failures[0].1.contains("boom went the step"), "{failures:?}");
}

#[tokio::test]
async fn a_nested_failure_is_logged_from_the_inside_out() {
    let yaml = r#"
- route:
    id: nested
    from:
      uri: direct:in
      steps:
        - filter:
            constant: "true"
            steps:
              - process: { ref: boom }
"#;
    let (seen, failed) = run_with_boom(yaml, "inner boom").await;
    assert!(failed);
    let failures: Vec<String> = seen
        .failures
        .lock()
        .unwrap()
        .iter()
        .inspect(|(_, e)| assert!(e.contains("inner boom"), "{e}"))
        .map(|(step, _)| step.clone())
        .collect();
    assert_eq!(
        failures,
        ["steps[0].filter.steps[0].process", "steps[0].filter"]
    );
}
