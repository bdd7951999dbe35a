//! `doTry` / `doCatch` / `doFinally` in Camel-spelled YAML and the builder (ADR 0052).

use std::sync::Arc;

use camel_api::{error_kind as names, Body, CamelError, Exchange, Value};
use camel_components::MockComponent;
use camel_core::builder::{simple, RouteBuilder};
use camel_core::{CamelContext, RouteDefinition};

fn load(text: &str) -> Vec<RouteDefinition> {
    camel_core::yaml::load_str(text, "routes.yaml").unwrap_or_else(|e| panic!("{e}"))
}

async fn context(routes: Vec<RouteDefinition>) -> (CamelContext, MockComponent) {
    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    ctx.add_routes(routes)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    ctx.start().await.unwrap();
    (ctx, mock)
}

const TRY: &str = r#"
- route:
    id: t
    errorHandler:
      deadLetterChannel: {deadLetterUri: mock:dead}
    from:
      uri: direct:in
      steps:
        - doTry:
            steps:
              - throwException:
                  exceptionType: java.io.FileNotFoundException
                  message: "no ${body}"
            doCatch:
              - exception: [java.lang.Exception]
                steps: [{to: mock:any}]
              - exception: [java.io.FileNotFoundException]
                onWhen: {simple: "${body} != 'skip'"}
                steps:
                  - setBody: {simple: "caught ${exception.message}"}
                  - to: mock:caught
            doFinally:
              steps: [{to: mock:finally}]
        - to: mock:out
"#;

#[tokio::test]
async fn the_closest_catch_takes_a_java_named_failure_and_the_route_goes_on() {
    let (ctx, mock) = context(load(TRY)).await;
    ctx.request("direct:in", Exchange::new("a.txt"))
        .await
        .unwrap();
    let caught = mock.endpoint("caught").received();
    assert_eq!(caught[0].message.body, Body::from("caught no a.txt"));
    assert_eq!(
        caught[0].property(names::EXCEPTION_KIND),
        Some(&Value::from("FileNotFoundException"))
    );
    assert_eq!(mock.endpoint("any").received_count(), 0);
    assert_eq!(mock.endpoint("finally").received_count(), 1);
    assert_eq!(mock.endpoint("out").received_count(), 1);
    assert_eq!(
        mock.endpoint("dead").received_count(),
        0,
        "the try block handled it"
    );
    // on_when false for the exact catch: the catch-all takes it.
    ctx.request("direct:in", Exchange::new("skip"))
        .await
        .unwrap();
    assert_eq!(mock.endpoint("any").received_count(), 1);
    ctx.stop().await;
}

#[tokio::test]
async fn an_uncaught_failure_runs_finally_then_reaches_the_route_handler() {
    let (ctx, mock) = context(load(
        r#"
- route:
    errorHandler:
      deadLetterChannel: {deadLetterUri: mock:dead}
    from:
      uri: direct:in
      steps:
        - doTry:
            steps: [{throwException: {exceptionType: Boom, message: x}}]
            doCatch: [{exception: [IOException], steps: [{to: mock:io}]}]
            doFinally: {steps: [{to: mock:finally}]}
        - to: mock:out
"#,
    ))
    .await;
    let out = ctx.request("direct:in", Exchange::new("m")).await.unwrap();
    assert!(out.is_stopped());
    assert_eq!(mock.endpoint("finally").received_count(), 1);
    assert_eq!(mock.endpoint("dead").received_count(), 1);
    assert_eq!(
        mock.endpoint("io").received_count() + mock.endpoint("out").received_count(),
        0
    );
    ctx.stop().await;
}

#[tokio::test]
async fn inside_multicast_branches_and_nested() {
    let (ctx, mock) = context(load(
        r#"
- route:
    from:
      uri: direct:in
      steps:
        - multicast:
            steps:
              - doTry:
                  steps:
                    - doTry:
                        steps: [{throwException: {exceptionType: Inner, message: x}}]
                        doCatch: [{exception: [Other], steps: [{to: mock:wrong}]}]
                  doCatch: [{exception: [Inner], steps: [{to: mock:branch}]}]
              - to: mock:other
"#,
    ))
    .await;
    ctx.request("direct:in", Exchange::new("m")).await.unwrap();
    assert_eq!(mock.endpoint("branch").received_count(), 1);
    assert_eq!(mock.endpoint("other").received_count(), 1);
    assert_eq!(mock.endpoint("wrong").received_count(), 0);
    ctx.stop().await;
}

#[tokio::test]
async fn builder_matches_yaml() {
    let built = RouteBuilder::from("direct:in")
        .id("t")
        .dead_letter_channel("mock:dead", Default::default())
        .do_try(
            |s| s.throw_exception("java.io.FileNotFoundException", "no ${body}"),
            |t| {
                t.do_catch(["java.lang.Exception"], None, |s| s.to("mock:any"))
                    .do_catch(
                        ["java.io.FileNotFoundException"],
                        Some(simple("${body} != 'skip'")),
                        |s| {
                            s.set_body(simple("caught ${exception.message}"))
                                .to("mock:caught")
                        },
                    )
                    .do_finally(|s| s.to("mock:finally"))
            },
        )
        .to("mock:out")
        .build();
    // Option keys are kept as written (each step decodes its own aliases), so the
    // builder is compared with the canonical snake_case spelling.
    let snake = TRY
        .replace("doCatch", "do_catch")
        .replace("onWhen", "on_when")
        .replace("doFinally", "do_finally")
        .replace("exceptionType", "exception_type");
    let mut yaml = load(&snake).remove(0);
    // The builder's dead letter channel carries an (empty) policy; compare the rest.
    yaml.errors.error_handler = built.errors.error_handler.clone();
    assert_eq!(built, yaml);
    let (ctx, mock) = context(vec![built]).await;
    ctx.request("direct:in", Exchange::new("a")).await.unwrap();
    assert_eq!(mock.endpoint("caught").received_count(), 1);
    ctx.stop().await;
}

#[tokio::test]
async fn an_empty_exception_list_catches_everything_as_no_list_does() {
    // Camel's `doCatch` without exceptions catches any; `exception: []` says the same.
    let routes = load(
        "- from:\n    uri: direct:a\n    steps:\n      - doTry:\n          steps:\n            - throwException: {exceptionType: java.lang.IllegalStateException, message: boom}\n          doCatch:\n            - exception: []\n              steps:\n                - setBody: {constant: caught}\n",
    );
    let ctx = CamelContext::new();
    ctx.add_routes(routes).await.unwrap();
    ctx.start().await.unwrap();
    let out = ctx.request("direct:a", Exchange::new("a")).await.unwrap();
    assert_eq!(out.message.body.as_text().unwrap(), "caught");
    ctx.stop().await;
    let _ = CamelError::processor("unused");
}
