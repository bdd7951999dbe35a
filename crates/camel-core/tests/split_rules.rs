//! The continuation-boundary rules N2, N3 and N4, tested on definitions built by hand, and
//! the rule that keeps steps with background work out of a resequencer's continuation.

use std::sync::Arc;

use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Endpoint, EndpointUri, ShutdownReason,
    StepLifecycle,
};
use camel_core::builder::{Resequence, RouteBuilder};
use camel_core::{CamelContext, RouteErrorKind, RouteErrors};
use serde_json::json;

fn rule_of(errs: camel_core::RouteErrors) -> &'static str {
    match &errs.0[0].kind {
        RouteErrorKind::Rejected { rule, .. } => rule,
        other => panic!("expected a rejection, got {other:?}"),
    }
}

fn reseq() -> Resequence {
    Resequence::stream(camel_core::builder::header("seq"))
}

#[tokio::test]
async fn n3_rejects_two_top_level_resequencers() {
    let route = RouteBuilder::from("direct:a")
        .id("two")
        .resequence(reseq())
        .resequence(reseq())
        .build();
    let errs = CamelContext::new().validate(&[route]).await.unwrap_err();
    assert_eq!(rule_of(errs.clone()), "N3");
    assert_eq!(errs.0[0].step.as_deref(), Some("steps[1].resequence"));
}

#[tokio::test]
async fn n4_rejects_a_nested_resequencer() {
    let route = RouteBuilder::from("direct:a")
        .id("nested")
        .filter(camel_core::builder::constant("true"), |s| {
            s.resequence(reseq())
        })
        .build();
    let errs = CamelContext::new().validate(&[route]).await.unwrap_err();
    assert_eq!(rule_of(errs), "N4");
}

#[tokio::test]
async fn n2_tests_every_top_level_aggregate() {
    // The first aggregate needs no split; the second does (force completion on stop).
    // A first-match check would miss it.
    let route = RouteBuilder::from("direct:a")
        .id("mixed")
        .step("aggregate", json!({"completion_size": 10}))
        .step("aggregate", json!({"force_completion_on_stop": true}))
        .resequence(reseq())
        .build();
    let errs = CamelContext::new().validate(&[route]).await.unwrap_err();
    assert_eq!(rule_of(errs.clone()), "N2");
    assert_eq!(errs.0[0].step.as_deref(), Some("steps[1].aggregate"));

    let with_timeout = RouteBuilder::from("direct:a")
        .id("timeout")
        .resequence(reseq())
        .step("aggregate", json!({"completion_timeout": 1000}))
        .build();
    let errs = CamelContext::new()
        .validate(&[with_timeout])
        .await
        .unwrap_err();
    assert_eq!(rule_of(errs), "N2");
}

/// A component whose endpoints own background work, like a batching sink.
#[derive(Debug)]
struct Busy;

#[derive(Debug)]
struct BusyEndpoint(String);

#[derive(Debug)]
struct BusyWork;

#[async_trait::async_trait]
impl StepLifecycle for BusyWork {
    fn name(&self) -> &str {
        "busy-batcher"
    }
    async fn start(&self) -> Result<(), CamelError> {
        Ok(())
    }
    async fn shutdown(&self, _reason: ShutdownReason) -> Result<(), CamelError> {
        Ok(())
    }
}

impl Component for Busy {
    fn scheme(&self) -> &str {
        "busy"
    }
    fn endpoint(
        &self,
        uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let text = uri.as_str().to_string();
        uri.parameters.finish(&[])?;
        Ok(Arc::new(BusyEndpoint(text)))
    }
}

impl Endpoint for BusyEndpoint {
    fn uri(&self) -> &str {
        &self.0
    }
    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Ok(BoxProcessor::sync(Ok))
    }
    fn lifecycle(&self) -> Option<Arc<dyn StepLifecycle>> {
        Some(Arc::new(BusyWork))
    }
}

async fn validate_with_busy(yaml: &str) -> Result<(), RouteErrors> {
    let routes = camel_core::yaml::load_str(yaml, "busy.yaml").unwrap_or_else(|e| panic!("{e}"));
    let ctx = CamelContext::new();
    ctx.add_component(Arc::new(Busy));
    ctx.validate(&routes).await
}

const HEAD: &str = "- route:\n    id: busy\n    from:\n      uri: direct:a\n      steps:\n";

#[tokio::test]
async fn a_continuation_step_with_background_work_is_rejected() {
    // After the resequencer, as a following step and as one of its nested steps.
    let following = format!(
        "{HEAD}        - resequence:\n            stream: {{sequence: '${{header.seq}}'}}\n        - to: busy:sink\n"
    );
    let nested = format!(
        "{HEAD}        - resequence:\n            stream: {{sequence: '${{header.seq}}'}}\n            steps:\n              - to: busy:sink\n"
    );
    for yaml in [following, nested] {
        let errs = validate_with_busy(&yaml).await.unwrap_err();
        assert_eq!(errs.0.len(), 1, "{errs}");
        let e = &errs.0[0];
        let RouteErrorKind::Rejected { rule, message } = &e.kind else {
            panic!("expected a rejection, got {:?}", e.kind)
        };
        assert_eq!(*rule, "resequence");
        assert!(message.contains("`busy-batcher`"), "{message}");
        assert!(message.contains("after a resequencer"), "{message}");
        // Reported at the resequencer, whose continuation cannot drain the step.
        assert_eq!(e.route_id.as_deref(), Some("busy"));
        assert_eq!(e.step.as_deref(), Some("steps[0].resequence"));
        let loc = e.location.as_ref().expect("a location in the file");
        assert_eq!((loc.line, loc.column), (6, 11), "{e}");
        let text = e.to_string();
        assert!(text.starts_with("busy.yaml:6:11: route `busy`"), "{text}");
        assert!(text.contains("busy-batcher"), "{text}");
    }

    // Before the resequencer the same step is fine: the main pipeline drains it.
    let before = format!(
        "{HEAD}        - to: busy:sink\n        - resequence:\n            stream: {{sequence: '${{header.seq}}'}}\n"
    );
    validate_with_busy(&before).await.unwrap();
}
