//! Redelivery re-runs the failing step inside a `filter` or `choice`, not the whole block
//! (issue 13 item 3, ADR 0091), in YAML and with the builder.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use camel_api::{error_kind as names, BoxProcessor, CamelError, Exchange};
use camel_components::MockComponent;
use camel_core::builder::{simple, RouteBuilder};
use camel_core::{CamelContext, RouteDefinition};
use camel_eip::config::RedeliveryPolicyConfig;

#[path = "support/redelivery.rs"]
mod redelivery;

use redelivery::{counter, load, Run};

async fn run(routes: Vec<RouteDefinition>, fails: usize) -> Run {
    redelivery::run(routes, fails, |_| true).await
}

const CHOICE: &str = r#"
- route:
    errorHandler:
      deadLetterChannel:
        deadLetterUri: mock:dead
        redeliveryPolicy: {maximumRedeliveries: 3, redeliveryDelay: 100}
    from:
      uri: direct:in
      steps:
        - choice:
            when:
              - simple: "${body} == 'go'"
                steps:
                  - process: {ref: first}
                  - setHeader: {name: marked, constant: "yes"}
                  - process: {ref: flaky}
                  - to: mock:out
"#;

#[tokio::test(start_paused = true)]
async fn a_failing_step_in_a_choice_is_redelivered_alone() {
    let r = run(load(CHOICE), 2).await;
    let out = r
        .ctx
        .request("direct:in", Exchange::new("go"))
        .await
        .unwrap();
    assert_eq!(
        r.failing.load(Ordering::SeqCst),
        3,
        "two failures, then success"
    );
    assert_eq!(
        r.first.load(Ordering::SeqCst),
        1,
        "the step before it ran once"
    );
    assert_eq!(r.mock.endpoint("out").received_count(), 1);
    assert_eq!(r.mock.endpoint("dead").received_count(), 0);
    assert_eq!(
        out.message
            .header(names::REDELIVERY_COUNTER)
            .map(|v| v.to_string()),
        Some("2".into())
    );
    r.ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_exhausted_step_in_a_filter_is_dead_lettered_once() {
    let text = CHOICE.replace(
        "        - choice:\n            when:\n              - simple: \"${body} == 'go'\"\n                steps:",
        "        - filter:\n            simple: \"${body} == 'go'\"\n            steps:",
    );
    let text = text.replace("                  - ", "              - ");
    let r = run(load(&text), usize::MAX).await;
    let out = r
        .ctx
        .request("direct:in", Exchange::new("go"))
        .await
        .unwrap();
    assert_eq!(
        r.failing.load(Ordering::SeqCst),
        4,
        "first try and 3 redeliveries"
    );
    assert_eq!(r.first.load(Ordering::SeqCst), 1);
    assert_eq!(r.mock.endpoint("out").received_count(), 0);
    assert_eq!(r.mock.endpoint("dead").received_count(), 1, "handled once");
    assert!(out.is_stopped());
    let dead = &r.mock.endpoint("dead").received()[0];
    assert_eq!(
        dead.message
            .header(names::REDELIVERY_COUNTER)
            .map(|v| v.to_string()),
        Some("3".into())
    );
    assert_eq!(
        dead.property(names::FAILURE_ENDPOINT)
            .map(|v| v.to_string()),
        Some("steps[0].filter.steps[2].process".into()),
        "the failing step inside the block"
    );
    assert!(
        dead.message.header("marked").is_some(),
        "dead-lettered as the failing step received it"
    );
    r.ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn nested_choices_redeliver_the_innermost_step_with_the_builder() {
    let route = RouteBuilder::from("direct:in")
        .dead_letter_channel(
            "mock:dead",
            RedeliveryPolicyConfig {
                maximum_redeliveries: Some(2),
                ..Default::default()
            },
        )
        .choice(|c| {
            c.when(simple("${body} == 'go'"), |s| {
                s.process_ref("first")
                    .choice(|inner| inner.otherwise(|s| s.process_ref("flaky").to("mock:out")))
            })
        })
        .build();
    let r = run(vec![route], 2).await;
    r.ctx
        .request("direct:in", Exchange::new("go"))
        .await
        .unwrap();
    assert_eq!(r.failing.load(Ordering::SeqCst), 3);
    assert_eq!(r.first.load(Ordering::SeqCst), 1);
    assert_eq!(r.mock.endpoint("out").received_count(), 1);
    assert_eq!(r.mock.endpoint("dead").received_count(), 0);
    r.ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_stop_cuts_a_redelivery_inside_a_choice_short_without_dead_lettering() {
    let text = CHOICE.replace("redeliveryDelay: 100", "redeliveryDelay: 3600000");
    let r = run(load(&text), usize::MAX).await;
    let sender = r.ctx.clone();
    let pending =
        tokio::spawn(async move { sender.request("direct:in", Exchange::new("go")).await });
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let report = r
        .ctx
        .stop_by(tokio::time::Instant::now() + std::time::Duration::from_secs(5))
        .await;
    assert!(report.cut_off.is_empty(), "{:?}", report.cut_off);
    let out = pending.await.unwrap();
    assert!(matches!(out, Err(CamelError::Stopping(_))), "{out:?}");
    assert_eq!(r.failing.load(Ordering::SeqCst), 1);
    assert_eq!(r.mock.endpoint("dead").received_count(), 0);
}

#[tokio::test(start_paused = true)]
async fn an_in_place_step_failing_in_a_choice_is_redelivered_alone() {
    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    let (count, first) = counter();
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let in_place = BoxProcessor::sync_in_place(move |_ex: &mut Exchange| {
        if seen.fetch_add(1, Ordering::SeqCst) < 2 {
            Err(CamelError::processor("not yet"))
        } else {
            Ok(())
        }
    });
    ctx.add_resource("first", count);
    ctx.add_resource("flaky", Arc::new(in_place));
    ctx.add_routes(load(CHOICE)).await.unwrap();
    ctx.start().await.unwrap();
    ctx.request("direct:in", Exchange::new("go")).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(first.load(Ordering::SeqCst), 1);
    assert_eq!(mock.endpoint("out").received_count(), 1);
    assert_eq!(mock.endpoint("dead").received_count(), 0);
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn continued_goes_on_after_the_failing_nested_step_not_after_the_block() {
    let text = r#"
- route:
    onException:
      - onException:
          exception: [java.lang.Exception]
          redeliveryPolicy: {maximumRedeliveries: 1, redeliveryDelay: 10}
          continued: {constant: true}
    from:
      uri: direct:in
      steps:
        - choice:
            when:
              - simple: "${body} == 'go'"
                steps:
                  - process: {ref: first}
                  - process: {ref: flaky}
                  - to: mock:out
        - to: mock:after
"#;
    let r = run(load(text), usize::MAX).await;
    let out = r
        .ctx
        .request("direct:in", Exchange::new("go"))
        .await
        .unwrap();
    assert_eq!(
        r.failing.load(Ordering::SeqCst),
        2,
        "one try, one redelivery"
    );
    assert_eq!(r.first.load(Ordering::SeqCst), 1);
    assert_eq!(
        r.mock.endpoint("out").received_count(),
        1,
        "the step after the failing one inside the choice ran"
    );
    assert_eq!(r.mock.endpoint("after").received_count(), 1);
    assert_eq!(
        out.property(names::ERROR_HANDLER_HANDLED),
        Some(&false.into())
    );
    assert!(out.property(names::EXCEPTION_CAUGHT).is_some());
}
