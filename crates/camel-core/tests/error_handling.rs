//! Error handling in routes (ADR 0052): Camel-spelled YAML and the builder for the error
//! handler, redelivery, `on_exception` and `throw_exception`, with paused time.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::{error_kind as names, Body, BoxProcessor, CamelError, Exchange, Value};
use camel_components::MockComponent;
use camel_core::builder::RouteBuilder;
use camel_core::{CamelContext, RouteDefinition};
use camel_eip::config::{OnException, PredicateOption, RedeliveryPolicyConfig};
use tokio::time::Instant;

/// A processor failing its first `fails` calls with `error`, recording call times.
fn flaky(fails: usize, error: CamelError) -> (Arc<BoxProcessor>, Arc<Mutex<Vec<Instant>>>) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = calls.clone();
    let p = BoxProcessor::sync(move |ex: Exchange| {
        let mut c = seen.lock().unwrap();
        c.push(Instant::now());
        if c.len() <= fails {
            Err(error.clone())
        } else {
            Ok(ex)
        }
    });
    (Arc::new(p), calls)
}

fn gaps(calls: &Mutex<Vec<Instant>>) -> Vec<u64> {
    calls
        .lock()
        .unwrap()
        .windows(2)
        .map(|w| (w[1] - w[0]).as_millis() as u64)
        .collect()
}

async fn context(
    routes: Vec<RouteDefinition>,
    flaky: Arc<BoxProcessor>,
) -> (CamelContext, MockComponent) {
    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    ctx.add_resource("flaky", flaky);
    ctx.add_routes(routes)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    ctx.start().await.unwrap();
    (ctx, mock)
}

fn load(text: &str) -> Vec<RouteDefinition> {
    camel_core::yaml::load_str(text, "routes.yaml").unwrap_or_else(|e| panic!("{e}"))
}

const DEAD_LETTER: &str = r#"
- route:
    id: orders
    errorHandler:
      deadLetterChannel:
        deadLetterUri: mock:dead
        redeliveryPolicy:
          maximumRedeliveries: 3
          redeliveryDelay: 100
          useExponentialBackOff: true
          backOffMultiplier: 3
    from:
      uri: direct:in
      steps:
        - process: {ref: flaky}
        - to: mock:out
"#;

#[tokio::test(start_paused = true)]
async fn a_dead_letter_channel_redelivers_with_back_off_then_handles() {
    let (step, calls) = flaky(usize::MAX, CamelError::processor("db down"));
    let (ctx, mock) = context(load(DEAD_LETTER), step).await;
    let out = ctx.request("direct:in", Exchange::new("o1")).await.unwrap();
    assert_eq!(
        out.property(names::ERROR_HANDLER_HANDLED),
        Some(&Value::Bool(true))
    );
    assert_eq!(gaps(&calls), [100, 300, 900]);
    assert_eq!(mock.endpoint("out").received_count(), 0);
    let dead = mock.endpoint("dead").received();
    assert_eq!(dead.len(), 1);
    assert_eq!(
        dead[0].header(names::REDELIVERY_COUNTER),
        Some(&Value::from(3i64))
    );
    assert_eq!(
        dead[0].property(names::FAILURE_ROUTE_ID),
        Some(&Value::from("orders"))
    );
    assert_eq!(
        dead[0].property(names::FAILURE_ENDPOINT),
        Some(&Value::from("steps[0].process"))
    );
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_redelivery_that_succeeds_goes_on_with_the_route() {
    let (step, calls) = flaky(2, CamelError::processor("blip"));
    let (ctx, mock) = context(load(DEAD_LETTER), step).await;
    ctx.request("direct:in", Exchange::new("o1")).await.unwrap();
    assert_eq!(gaps(&calls), [100, 300]);
    let out = mock.endpoint("out").received();
    assert_eq!(
        out[0].header(names::REDELIVERY_COUNTER),
        Some(&Value::from(2i64))
    );
    assert_eq!(mock.endpoint("dead").received_count(), 0);
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_builder_makes_the_same_route_and_it_behaves_the_same() {
    let built = RouteBuilder::from("direct:in")
        .id("orders")
        .dead_letter_channel(
            "mock:dead",
            RedeliveryPolicyConfig {
                maximum_redeliveries: Some(3),
                redelivery_delay: Some(100),
                use_exponential_back_off: Some(true),
                back_off_multiplier: Some(3.0),
                ..Default::default()
            },
        )
        .process_ref("flaky")
        .to("mock:out")
        .build();
    assert_eq!(built, load(DEAD_LETTER).remove(0));
    let (step, calls) = flaky(usize::MAX, CamelError::processor("db down"));
    let (ctx, mock) = context(vec![built], step).await;
    ctx.request("direct:in", Exchange::new("o1")).await.unwrap();
    assert_eq!(gaps(&calls), [100, 300, 900]);
    assert_eq!(mock.endpoint("dead").received_count(), 1);
    ctx.stop().await;
}

const CONTEXT_LEVEL: &str = r#"
- errorHandler:
    deadLetterChannel:
      deadLetterUri: mock:dead
      useOriginalMessage: true
- onException:
    exception: [java.lang.IllegalArgumentException]
    handled: {constant: "true"}
    steps:
      - setBody: {simple: "rejected: ${exception.message} (${exception.kind})"}
      - to: mock:rejected
- route:
    id: a
    from:
      uri: direct:a
      steps:
        - setBody: {constant: changed}
        - process: {ref: flaky}
- route:
    id: b
    errorHandler:
      defaultErrorHandler:
        redeliveryPolicy: {maximumRedeliveries: 2, redeliveryDelay: "1s"}
    from:
      uri: direct:b
      steps:
        - process: {ref: flaky}
- route:
    id: c
    from:
      uri: direct:c
      steps:
        - throwException:
            exceptionType: java.lang.IllegalArgumentException
            message: "bad ${body}"
"#;

#[tokio::test(start_paused = true)]
async fn context_level_handler_and_clauses_apply_and_a_route_handler_wins() {
    let (step, calls) = flaky(usize::MAX, CamelError::processor("boom"));
    let (ctx, mock) = context(load(CONTEXT_LEVEL), step).await;
    ctx.request("direct:a", Exchange::new("first"))
        .await
        .unwrap();
    let dead = mock.endpoint("dead").received();
    assert_eq!(
        dead[0].message.body,
        Body::from("first"),
        "use_original_message"
    );
    let before = calls.lock().unwrap().len();
    let failed = ctx.request("direct:b", Exchange::new("x")).await;
    assert!(
        failed.is_err(),
        "route b's default handler fails the exchange"
    );
    assert_eq!(calls.lock().unwrap().len() - before, 3);
    assert_eq!(
        mock.endpoint("dead").received_count(),
        1,
        "route b has its own handler"
    );
    let out = ctx
        .request("direct:c", Exchange::new("order"))
        .await
        .unwrap();
    assert!(out.is_stopped());
    let rejected = mock.endpoint("rejected").received();
    assert_eq!(
        rejected[0].message.body,
        Body::from("rejected: bad order (IllegalArgumentException)")
    );
    ctx.stop().await;
}

const CLAUSES: &str = r#"
- route:
    id: r
    onException:
      - onException:
          exception: [java.lang.Exception]
          handled: true
          steps: [{to: mock:general}]
      - onException:
          exception: [OrderRejected]
          onWhen: {simple: "${header.kind} == 'soft'"}
          continued: {simple: "${header.kind} == 'soft'"}
          redeliveryPolicy: {maximumRedeliveries: 1, redeliveryDelay: 5}
    from:
      uri: direct:in
      steps:
        - throwException: {exceptionType: OrderRejected, message: no stock}
        - to: mock:out
"#;

#[tokio::test(start_paused = true)]
async fn on_when_picks_the_clause_and_continued_goes_on() {
    let (step, _) = flaky(0, CamelError::processor("unused"));
    let (ctx, mock) = context(load(CLAUSES), step).await;
    ctx.request("direct:in", Exchange::new("a").with_header("kind", "soft"))
        .await
        .unwrap();
    let out = mock.endpoint("out").received();
    assert_eq!(out.len(), 1, "continued: the route went on");
    assert_eq!(
        out[0].header(names::REDELIVERY_COUNTER),
        Some(&Value::from(1i64))
    );
    ctx.request("direct:in", Exchange::new("b").with_header("kind", "hard"))
        .await
        .unwrap();
    assert_eq!(mock.endpoint("general").received_count(), 1);
    assert_eq!(mock.endpoint("out").received_count(), 1);
    ctx.stop().await;
}

#[tokio::test]
async fn builder_clauses_match_yaml() {
    let built = RouteBuilder::from("direct:in")
        .id("r")
        .on_exception(
            OnException {
                exception: vec!["java.lang.Exception".into()],
                handled: Some(PredicateOption::Fixed(true)),
                ..Default::default()
            },
            |s| s.to("mock:general"),
        )
        .throw_exception("OrderRejected", "no stock")
        .build();
    let yaml = load(
        r#"
- route:
    id: r
    on_exception:
      exception: [java.lang.Exception]
      handled: true
      steps: [{to: mock:general}]
    from: {uri: direct:in, steps: [{throw_exception: {exception_type: OrderRejected, message: no stock}}]}
"#,
    );
    assert_eq!(built, yaml[0]);
}

#[tokio::test(start_paused = true)]
async fn a_stopping_route_fails_an_exchange_waiting_an_hour_for_redelivery() {
    let (step, calls) = flaky(usize::MAX, CamelError::processor("down"));
    let routes = load(
        r#"
- route:
    id: slow
    errorHandler:
      deadLetterChannel:
        deadLetterUri: mock:dead
        redeliveryPolicy: {maximumRedeliveries: 5, redeliveryDelay: 3600000}
    from: {uri: direct:in, steps: [{process: {ref: flaky}}]}
"#,
    );
    let (ctx, mock) = context(routes, step).await;
    let sender = ctx.clone();
    let pending =
        tokio::spawn(async move { sender.request("direct:in", Exchange::new("x")).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    let started = Instant::now();
    let report = ctx.stop_by(Instant::now() + Duration::from_secs(5)).await;
    // The pending redelivery ends as the stop begins: nothing is cut off at the deadline.
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert!(report.cut_off.is_empty(), "{:?}", report.cut_off);
    let out = pending.await.unwrap();
    assert!(matches!(out, Err(CamelError::Stopping(_))), "{out:?}");
    assert_eq!(calls.lock().unwrap().len(), 1);
    assert_eq!(mock.endpoint("dead").received_count(), 0);
}

async fn validate_errors(text: &str) -> String {
    let routes = match camel_core::yaml::load_str(text, "routes.yaml") {
        Ok(r) => r,
        Err(e) => return e.to_string(),
    };
    let ctx = CamelContext::new();
    match ctx.validate(&routes).await {
        Ok(()) => panic!("should not validate:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn bad_error_handling_input_is_located() {
    let unknown = validate_errors(
        "- errorHandler:\n    deadLetterChannel:\n      deadLetterUri: log:dead\n      maximumRedeliveries: 3\n- from: {uri: direct:a}\n",
    )
    .await;
    assert!(unknown.starts_with("routes.yaml:4:7:"), "{unknown}");
    assert!(unknown.contains("maximumRedeliveries"), "{unknown}");

    let handled = validate_errors(
        "- onException:\n    exception: [Exception]\n    handled: 42\n- from: {uri: direct:a}\n",
    )
    .await;
    assert!(handled.starts_with("routes.yaml:3:"), "{handled}");
    assert!(handled.contains("predicate"), "{handled}");

    let scheme = validate_errors(
        "- route:\n    errorHandler:\n      deadLetterChannel:\n        deadLetterUri: nosuch:dead\n    from: {uri: direct:a}\n",
    )
    .await;
    assert!(scheme.starts_with("routes.yaml:4:"), "{scheme}");
    assert!(scheme.contains("nosuch"), "{scheme}");

    let empty = validate_errors(
        "- onException:\n    exception: []\n    handled: true\n- from: {uri: direct:a}\n",
    )
    .await;
    assert!(empty.starts_with("routes.yaml:2:"), "{empty}");
    assert!(empty.contains("at least one"), "{empty}");

    let predicate = validate_errors(
        "- route:\n    onException:\n      exception: [Exception]\n      handled: {simple: \"${header.x} ==\"}\n    from: {uri: direct:a}\n",
    )
    .await;
    assert!(predicate.starts_with("routes.yaml:4:"), "{predicate}");
}
