//! Redelivery re-runs the failing step of one part of a `split`, one branch of a
//! `multicast`, or one iteration of a `loop`, not the whole block (ADR 0092), in YAML and
//! with the builder. With a dead letter
//! channel a part that stays failed is dead-lettered and the split goes on; with the
//! default handler the split fails, and is not redelivered again as a whole.

use std::sync::atomic::Ordering;

use camel_api::{error_kind as names, Exchange, Value};
use camel_components::MockComponent;
use camel_core::builder::{Loop, Multicast, RouteBuilder, Split, Tokenize};
use camel_core::RouteDefinition;
use camel_eip::config::{DefaultErrorHandler, ErrorHandlerConfig, RedeliveryPolicyConfig};

#[path = "support/redelivery.rs"]
mod redelivery;

use redelivery::{load, Run};

/// True for the exchange that fails: the split part `b`, or loop iteration 1.
fn chosen(ex: &Exchange) -> bool {
    ex.message.body.as_text().as_deref() == Some("b")
        || ex.property("CamelLoopIndex") == Some(&Value::from(1u64))
}

async fn run(routes: Vec<RouteDefinition>, fails: usize) -> Run {
    redelivery::run(routes, fails, chosen).await
}

fn bodies(mock: &MockComponent, name: &str) -> Vec<String> {
    mock.endpoint(name)
        .received()
        .iter()
        .map(|e| e.message.body.as_text().unwrap_or_default().to_string())
        .collect()
}

const SPLIT: &str = r#"
- route:
    errorHandler:
      deadLetterChannel:
        deadLetterUri: mock:dead
        redeliveryPolicy: {maximumRedeliveries: 3, redeliveryDelay: 100}
    from:
      uri: direct:in
      steps:
        - split:
            tokenize: {token: ","}
            steps:
              - process: {ref: first}
              - process: {ref: flaky}
              - to: mock:out
        - to: mock:after
"#;

#[tokio::test(start_paused = true)]
async fn a_failing_step_in_a_split_part_is_redelivered_for_that_part_alone() {
    let r = run(load(SPLIT), 2).await;
    r.ctx
        .request("direct:in", Exchange::new("a,b,c"))
        .await
        .unwrap();
    assert_eq!(
        r.first.load(Ordering::SeqCst),
        3,
        "the step before the failing one ran once per part"
    );
    assert_eq!(
        r.failing.load(Ordering::SeqCst),
        5,
        "once for a and c, three times for b"
    );
    assert_eq!(bodies(&r.mock, "out"), ["a", "b", "c"]);
    let b = &r.mock.endpoint("out").received()[1];
    assert_eq!(
        b.message
            .header(names::REDELIVERY_COUNTER)
            .map(|v| v.to_string()),
        Some("2".into())
    );
    assert_eq!(r.mock.endpoint("dead").received_count(), 0);
    assert_eq!(r.mock.endpoint("after").received_count(), 1);
    r.ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_part_that_stays_failed_is_dead_lettered_and_the_split_goes_on() {
    let r = run(load(SPLIT), usize::MAX).await;
    let out = r
        .ctx
        .request("direct:in", Exchange::new("a,b,c"))
        .await
        .unwrap();
    assert_eq!(r.first.load(Ordering::SeqCst), 3);
    assert_eq!(r.failing.load(Ordering::SeqCst), 1 + 4 + 1);
    assert_eq!(bodies(&r.mock, "out"), ["a", "c"]);
    assert_eq!(bodies(&r.mock, "dead"), ["b"], "the part, once");
    let dead = &r.mock.endpoint("dead").received()[0];
    assert_eq!(
        dead.property(names::FAILURE_ENDPOINT)
            .map(|v| v.to_string()),
        Some("steps[0].split.steps[1].process".into())
    );
    assert_eq!(
        dead.message
            .header(names::REDELIVERY_COUNTER)
            .map(|v| v.to_string()),
        Some("3".into())
    );
    assert_eq!(
        dead.property(camel_api::names::CORRELATION_ID)
            .map(|v| v.to_string()),
        Some(out.id.to_string()),
        "the part names the exchange it was cut from"
    );
    assert_eq!(
        r.mock.endpoint("after").received_count(),
        1,
        "the route goes on after the split"
    );
    r.ctx.stop().await;
}

fn default_handler() -> ErrorHandlerConfig {
    ErrorHandlerConfig {
        default_error_handler: Some(DefaultErrorHandler {
            redelivery_policy: Some(RedeliveryPolicyConfig {
                maximum_redeliveries: Some(3),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[tokio::test(start_paused = true)]
async fn with_the_default_handler_a_failed_part_fails_the_split_which_is_not_redelivered_whole() {
    for (stop_on_exception, first, out) in [(false, 3, vec!["a", "c"]), (true, 2, vec!["a"])] {
        let route = RouteBuilder::from("direct:in")
            .error_handler(default_handler())
            .split(
                Split::tokenize(Tokenize::token(",")).stop_on_exception(stop_on_exception),
                |s| s.process_ref("first").process_ref("flaky").to("mock:out"),
            )
            .to("mock:after")
            .build();
        let r = run(vec![route], usize::MAX).await;
        let e = r
            .ctx
            .request("direct:in", Exchange::new("a,b,c"))
            .await
            .unwrap_err();
        assert!(e.to_string().contains("not yet"), "{e}");
        assert_eq!(
            r.failing.load(Ordering::SeqCst),
            out.len() + 4,
            "b: the first try and 3 redeliveries, once (stop_on_exception {stop_on_exception})"
        );
        assert_eq!(r.first.load(Ordering::SeqCst), first);
        assert_eq!(bodies(&r.mock, "out"), out);
        assert_eq!(r.mock.endpoint("after").received_count(), 0);
        r.ctx.stop().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_split_part_redelivers_alone_with_the_builder_too() {
    let route = RouteBuilder::from("direct:in")
        .error_handler(default_handler())
        .split(Split::tokenize(Tokenize::token(",")), |s| {
            s.process_ref("first").process_ref("flaky").to("mock:out")
        })
        .build();
    let r = run(vec![route], 2).await;
    r.ctx
        .request("direct:in", Exchange::new("a,b,c"))
        .await
        .unwrap();
    assert_eq!(r.first.load(Ordering::SeqCst), 3);
    assert_eq!(r.failing.load(Ordering::SeqCst), 5);
    assert_eq!(bodies(&r.mock, "out"), ["a", "b", "c"]);
    r.ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_split_inside_a_filter_and_a_split_inside_a_split_fail_once() {
    let text = r#"
- route:
    errorHandler:
      defaultErrorHandler:
        redeliveryPolicy: {maximumRedeliveries: 3, redeliveryDelay: 100}
    from:
      uri: direct:in
      steps:
        - filter:
            simple: "${body} != ''"
            steps:
              - split:
                  tokenize: {token: ";"}
                  steps:
                    - split:
                        tokenize: {token: ","}
                        steps:
                          - process: {ref: first}
                          - process: {ref: flaky}
                          - to: mock:out
"#;
    let r = run(load(text), usize::MAX).await;
    let e = r
        .ctx
        .request("direct:in", Exchange::new("a,b;c"))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("not yet"), "{e}");
    assert_eq!(r.failing.load(Ordering::SeqCst), 1 + 4 + 1);
    assert_eq!(r.first.load(Ordering::SeqCst), 3);
    assert_eq!(bodies(&r.mock, "out"), ["a", "c"]);
    r.ctx.stop().await;
}

const LOOP: &str = r#"
- route:
    errorHandler:
      deadLetterChannel:
        deadLetterUri: mock:dead
        redeliveryPolicy: {maximumRedeliveries: 3, redeliveryDelay: 100}
    from:
      uri: direct:in
      steps:
        - loop:
            constant: 3
            steps:
              - process: {ref: first}
              - process: {ref: flaky}
              - to: mock:out
        - to: mock:after
"#;

#[tokio::test(start_paused = true)]
async fn a_failing_step_in_a_loop_iteration_is_redelivered_alone() {
    let r = run(load(LOOP), 2).await;
    r.ctx
        .request("direct:in", Exchange::new("x"))
        .await
        .unwrap();
    assert_eq!(r.first.load(Ordering::SeqCst), 3, "once per iteration");
    assert_eq!(r.failing.load(Ordering::SeqCst), 5);
    assert_eq!(r.mock.endpoint("out").received_count(), 3);
    assert_eq!(r.mock.endpoint("dead").received_count(), 0);
    assert_eq!(r.mock.endpoint("after").received_count(), 1);
    r.ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_exhausted_step_in_a_loop_is_dead_lettered_once() {
    let r = run(load(LOOP), usize::MAX).await;
    let out = r
        .ctx
        .request("direct:in", Exchange::new("x"))
        .await
        .unwrap();
    assert!(out.is_stopped(), "handled: the route ends");
    assert_eq!(r.first.load(Ordering::SeqCst), 2, "iterations 0 and 1");
    assert_eq!(r.failing.load(Ordering::SeqCst), 1 + 4);
    assert_eq!(r.mock.endpoint("out").received_count(), 1);
    assert_eq!(r.mock.endpoint("dead").received_count(), 1);
    let dead = &r.mock.endpoint("dead").received()[0];
    assert_eq!(
        dead.property(names::FAILURE_ENDPOINT)
            .map(|v| v.to_string()),
        Some("steps[0].loop.steps[1].process".into())
    );
    assert_eq!(
        dead.property("CamelLoopIndex").map(|v| v.to_string()),
        Some("1".into())
    );
    assert_eq!(r.mock.endpoint("after").received_count(), 0);
    r.ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_loop_iteration_redelivers_alone_with_the_builder() {
    let route = RouteBuilder::from("direct:in")
        .error_handler(default_handler())
        .loop_(Loop::times(3), |s| {
            s.process_ref("first").process_ref("flaky").to("mock:out")
        })
        .build();
    let r = run(vec![route], 2).await;
    r.ctx
        .request("direct:in", Exchange::new("x"))
        .await
        .unwrap();
    assert_eq!(r.first.load(Ordering::SeqCst), 3);
    assert_eq!(r.failing.load(Ordering::SeqCst), 5);
    assert_eq!(r.mock.endpoint("out").received_count(), 3);
    r.ctx.stop().await;
}

const MULTICAST: &str = r#"
- route:
    errorHandler:
      deadLetterChannel:
        deadLetterUri: mock:dead
        redeliveryPolicy: {maximumRedeliveries: 3, redeliveryDelay: 100}
    from:
      uri: direct:in
      steps:
        - multicast:
            steps:
              - process: {ref: first}
              - filter:
                  simple: "${body} == 'b'"
                  steps:
                    - process: {ref: first}
                    - process: {ref: flaky}
              - to: mock:out
        - to: mock:after
"#;

#[tokio::test(start_paused = true)]
async fn a_failing_step_in_a_multicast_branch_is_redelivered_alone() {
    let r = run(load(MULTICAST), 2).await;
    r.ctx
        .request("direct:in", Exchange::new("b"))
        .await
        .unwrap();
    assert_eq!(
        r.first.load(Ordering::SeqCst),
        2,
        "the first branch and the step before the failing one ran once"
    );
    assert_eq!(r.failing.load(Ordering::SeqCst), 3);
    assert_eq!(r.mock.endpoint("out").received_count(), 1);
    assert_eq!(r.mock.endpoint("dead").received_count(), 0);
    assert_eq!(r.mock.endpoint("after").received_count(), 1);
    r.ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_exhausted_multicast_branch_is_dead_lettered_and_the_others_go_on() {
    let r = run(load(MULTICAST), usize::MAX).await;
    let out = r
        .ctx
        .request("direct:in", Exchange::new("b"))
        .await
        .unwrap();
    assert_eq!(r.first.load(Ordering::SeqCst), 2);
    assert_eq!(r.failing.load(Ordering::SeqCst), 4);
    assert_eq!(bodies(&r.mock, "dead"), ["b"]);
    let dead = &r.mock.endpoint("dead").received()[0];
    assert_eq!(
        dead.property(names::FAILURE_ENDPOINT)
            .map(|v| v.to_string()),
        Some("steps[0].multicast.steps[1].filter.steps[1].process".into())
    );
    assert_eq!(
        dead.property(camel_api::names::CORRELATION_ID)
            .map(|v| v.to_string()),
        Some(out.id.to_string())
    );
    assert_ne!(dead.id, out.id, "a branch is an exchange of its own");
    assert_eq!(
        r.mock.endpoint("out").received_count(),
        1,
        "the next branch ran"
    );
    assert_eq!(r.mock.endpoint("after").received_count(), 1);
    assert!(
        out.property(camel_api::names::CORRELATION_ID).is_none(),
        "the branch's correlation id does not leak into the result"
    );
    r.ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn with_the_default_handler_a_failed_branch_fails_the_multicast_once() {
    let route = RouteBuilder::from("direct:in")
        .error_handler(default_handler())
        .multicast(Multicast::default(), |m| {
            m.process_ref("first").process_ref("flaky").to("mock:out")
        })
        .to("mock:after")
        .build();
    let r = run(vec![route], usize::MAX).await;
    let e = r
        .ctx
        .request("direct:in", Exchange::new("b"))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("not yet"), "{e}");
    assert_eq!(r.first.load(Ordering::SeqCst), 1, "not redelivered whole");
    assert_eq!(r.failing.load(Ordering::SeqCst), 4);
    assert_eq!(r.mock.endpoint("out").received_count(), 0);
    assert_eq!(r.mock.endpoint("after").received_count(), 0);
    r.ctx.stop().await;
}

#[tokio::test]
async fn without_an_active_handler_parts_and_branches_are_as_before() {
    let text = r#"
- route:
    from:
      uri: direct:in
      steps:
        - split:
            tokenize: {token: ","}
            steps: [{to: mock:part}]
        - multicast:
            steps: [{to: mock:branch}]
"#;
    let r = run(load(text), 0).await;
    let out = r
        .ctx
        .request("direct:in", Exchange::new("a,b"))
        .await
        .unwrap();
    for part in r.mock.endpoint("part").received() {
        assert!(part.property(camel_api::names::CORRELATION_ID).is_none());
    }
    let branch = &r.mock.endpoint("branch").received()[0];
    assert_eq!(branch.id, out.id, "a branch shares the exchange's id");
    assert!(branch.property(camel_api::names::CORRELATION_ID).is_none());
    r.ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_scatter_gather_branch_is_redelivered_alone_too() {
    let text = MULTICAST.replace("- multicast:", "- scatterGather:");
    let r = run(load(&text), 2).await;
    r.ctx
        .request("direct:in", Exchange::new("b"))
        .await
        .unwrap();
    assert_eq!(r.first.load(Ordering::SeqCst), 2);
    assert_eq!(r.failing.load(Ordering::SeqCst), 3);
    assert_eq!(r.mock.endpoint("out").received_count(), 1);
    r.ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn continued_inside_a_split_part_goes_on_with_the_parts_next_step() {
    let text = r#"
- route:
    onException:
      - onException:
          exception: [java.lang.Exception]
          redeliveryPolicy: {maximumRedeliveries: 2, redeliveryDelay: 10}
          continued: {constant: true}
    from:
      uri: direct:in
      steps:
        - split:
            tokenize: {token: ","}
            steps:
              - process: {ref: first}
              - process: {ref: flaky}
              - to: mock:out
        - to: mock:after
"#;
    let r = run(load(text), usize::MAX).await;
    r.ctx
        .request("direct:in", Exchange::new("a,b,c"))
        .await
        .unwrap();
    assert_eq!(r.first.load(Ordering::SeqCst), 3);
    assert_eq!(
        r.failing.load(Ordering::SeqCst),
        1 + 3 + 1,
        "b: one try, two redeliveries"
    );
    assert_eq!(
        bodies(&r.mock, "out"),
        ["a", "b", "c"],
        "part b went on after its failing step"
    );
    assert_eq!(r.mock.endpoint("after").received_count(), 1);
}
