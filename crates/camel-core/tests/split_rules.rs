//! The continuation-boundary rules N2, N3 and N4, tested on definitions built by hand.

use camel_core::builder::RouteBuilder;
use camel_core::{CamelContext, RouteErrorKind};
use serde_json::json;

fn rule_of(errs: camel_core::RouteErrors) -> &'static str {
    match &errs.0[0].kind {
        RouteErrorKind::Rejected { rule, .. } => rule,
        other => panic!("expected a rejection, got {other:?}"),
    }
}

fn reseq() -> serde_json::Value {
    json!({"stream": {"sequence": "${header.seq}"}})
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
