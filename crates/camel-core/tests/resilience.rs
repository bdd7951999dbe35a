//! `load_balance`, `circuit_breaker`, `validate`, `set_exchange_pattern`, `to` with a
//! pattern, `log` options, `step` and `convert_header_to`: Camel-spelled YAML, the builder,
//! and located errors.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use camel_api::{Body, BoxProcessor, CamelError, Exchange, ExchangePattern, Value};
use camel_components::MockComponent;
use camel_core::builder::{
    constant, header, simple, CircuitBreaker, FailoverBalancer, LoadBalance, RouteBuilder,
};
use camel_core::{CamelContext, RouteDefinition, RouteErrors};
use camel_eip::load_balance::{Balancer, CustomBalancer};

fn route(steps: &str) -> RouteDefinition {
    let indented: String = steps.lines().map(|l| format!("        {l}\n")).collect();
    let text =
        format!("- route:\n    id: r\n    from:\n      uri: direct:in\n      steps:\n{indented}");
    camel_core::yaml::load_str(&text, "routes.yaml")
        .unwrap_or_else(|e| panic!("{e}\n---\n{text}"))
        .remove(0)
}

/// A processor failing with an `IOException` while `fails` is above zero.
fn flaky(fails: Arc<AtomicUsize>, calls: Arc<AtomicUsize>) -> Arc<BoxProcessor> {
    Arc::new(BoxProcessor::sync(move |mut ex: Exchange| {
        calls.fetch_add(1, Ordering::SeqCst);
        if fails
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err(CamelError::user("java.io.IOException", "backend down"));
        }
        ex.message.body = Body::from("live");
        Ok(ex)
    }))
}

#[derive(Debug)]
struct ByHeader;

impl Balancer for ByHeader {
    fn choose(&self, ex: &Exchange, _targets: usize) -> Result<usize, CamelError> {
        Ok(ex.header("lane").and_then(Value::as_i64).unwrap_or(0) as usize)
    }
}

async fn context(routes: Vec<RouteDefinition>) -> (CamelContext, MockComponent) {
    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    ctx.add_resource("byHeader", Arc::new(CustomBalancer::new(ByHeader)));
    ctx.add_resource(
        "pattern",
        Arc::new(BoxProcessor::sync(|mut ex: Exchange| {
            let p = format!("{:?}", ex.pattern);
            ex.message.headers.insert("seen_pattern", p);
            Ok(ex)
        })),
    );
    ctx.add_routes(routes)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    ctx.start().await.unwrap();
    (ctx, mock)
}

async fn bodies(ctx: &CamelContext, n: usize, ex: impl Fn(usize) -> Exchange) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..n {
        let r = ctx.request("direct:in", ex(i)).await.unwrap();
        out.push(r.message.body.as_text().unwrap_or_default().into_owned());
    }
    out
}

const TARGETS: &str = "    steps:\n      - setBody: {constant: a}\n      - setBody: {constant: b}\n      - setBody: {constant: c}";

async fn balanced(policy: &str) -> CamelContext {
    let r = route(&format!("- loadBalance:\n{policy}\n{TARGETS}"));
    context(vec![r]).await.0
}

#[tokio::test]
async fn round_robin_random_weighted_sticky_topic_custom_in_camel_spelling() {
    let ctx = balanced("    roundRobinLoadBalancer: {}").await;
    assert_eq!(
        bodies(&ctx, 4, |_| Exchange::new("x")).await,
        ["a", "b", "c", "a"]
    );

    let ctx = balanced("    randomLoadBalancer: {}").await;
    let seen: std::collections::HashSet<_> = bodies(&ctx, 100, |_| Exchange::new("x"))
        .await
        .into_iter()
        .collect();
    assert_eq!(seen.len(), 3);

    let ctx = balanced(
        "    weightedLoadBalancer: {distributionRatio: '2;0;1', distributionRatioDelimiter: ';', roundRobin: true}",
    )
    .await;
    assert_eq!(
        bodies(&ctx, 6, |_| Exchange::new("x")).await,
        ["a", "c", "a", "a", "c", "a"]
    );

    let ctx =
        balanced("    stickyLoadBalancer:\n      correlationExpression: {header: customer}").await;
    let by_customer = |i: usize| Exchange::new("x").with_header("customer", format!("c{}", i % 4));
    let first = bodies(&ctx, 4, by_customer).await;
    assert_eq!(bodies(&ctx, 4, by_customer).await, first);

    let (ctx, mock) = context(vec![route(
        "- loadBalance:\n    topicLoadBalancer: {}\n    steps: [{to: mock:a}, {to: mock:b}]\n- to: mock:after",
    )])
    .await;
    ctx.request("direct:in", Exchange::new("t")).await.unwrap();
    for name in ["a", "b", "after"] {
        assert_eq!(mock.endpoint(name).received_count(), 1, "{name}");
    }

    let ctx = balanced("    customLoadBalancer: {ref: byHeader}").await;
    let lanes = bodies(&ctx, 3, |i| {
        Exchange::new("x").with_header("lane", 2 - i as i64)
    })
    .await;
    assert_eq!(lanes, ["c", "b", "a"]);
}

#[tokio::test]
async fn builder_and_snake_case_yaml_are_the_same_definition() {
    let cases: Vec<(&str, LoadBalance)> = vec![
        ("round_robin_load_balancer: {}", LoadBalance::round_robin()),
        ("random_load_balancer: {}", LoadBalance::random()),
        ("topic_load_balancer: {}", LoadBalance::topic()),
        (
            "weighted_load_balancer: {distribution_ratio: '3,1', round_robin: true}",
            LoadBalance::weighted(&[3, 1]).weighted_round_robin(),
        ),
        (
            "sticky_load_balancer: {correlation_expression: {header: customer}}",
            LoadBalance::sticky(header("customer")),
        ),
        (
            "failover_load_balancer: {exception: [IOException], maximum_failover_attempts: 2, round_robin: true}",
            LoadBalance::failover_with(
                FailoverBalancer::default()
                    .exception("IOException")
                    .maximum_failover_attempts(2)
                    .round_robin(true),
            ),
        ),
        ("custom_load_balancer: {ref: byHeader}", LoadBalance::custom("byHeader")),
    ];
    for (yaml, balance) in cases {
        let y = route(&format!(
            "- load_balance:\n    {yaml}\n    steps: [{{to: mock:a}}, {{to: mock:b}}]"
        ));
        let b = RouteBuilder::from("direct:in")
            .id("r")
            .load_balance(balance, |t| t.to("mock:a").to("mock:b"))
            .build();
        assert_eq!(y, b, "{yaml}");
        context(vec![b]).await;
    }
}

const FAILOVER: &str = r#"
- loadBalance:
    failoverLoadBalancer:
      exception: [java.io.IOException]
      maximumFailoverAttempts: 1
    steps:
      - process: {ref: flaky}
      - process: {ref: flaky}
      - setBody: {constant: third}
"#;

#[tokio::test(start_paused = true)]
async fn failover_in_yaml_moves_on_for_listed_kinds_up_to_the_limit() {
    let fails = Arc::new(AtomicUsize::new(1));
    let calls = Arc::new(AtomicUsize::new(0));
    let ctx = CamelContext::new();
    ctx.add_resource("flaky", flaky(fails.clone(), calls.clone()));
    ctx.add_routes(vec![route(FAILOVER)]).await.unwrap();
    ctx.start().await.unwrap();
    // One failure: the second target answers.
    let out = ctx.request("direct:in", Exchange::new("x")).await.unwrap();
    assert_eq!(out.message.body, Body::from("live"));
    // Two failures: one failover allowed, so the third target is never reached.
    fails.store(2, Ordering::SeqCst);
    let err = ctx
        .request("direct:in", Exchange::new("x"))
        .await
        .unwrap_err();
    assert_eq!(err.kind_name(), "IOException");
    assert_eq!(calls.load(Ordering::SeqCst), 4);
}

const BREAKER: &str = r#"
- circuitBreaker:
    resilience4jConfiguration:
      slidingWindowSize: 2
      minimumNumberOfCalls: 2
      failureRateThreshold: 50
      waitDurationInOpenState: 10
      permittedNumberOfCallsInHalfOpenState: 1
    steps:
      - process: {ref: flaky}
    onFallback:
      steps:
        - setBody: {simple: "fallback: ${exception.message}"}
- setHeader: {name: from_fallback, simple: "${exchangeProperty.CamelResponseFromFallback}"}
- setHeader: {name: short, simple: "${exchangeProperty.CamelResponseShortCircuited}"}
"#;

#[tokio::test(start_paused = true)]
async fn circuit_breaker_in_yaml_opens_half_opens_and_closes() {
    let fails = Arc::new(AtomicUsize::new(usize::MAX));
    let calls = Arc::new(AtomicUsize::new(0));
    let ctx = CamelContext::new();
    ctx.add_resource("flaky", flaky(fails.clone(), calls.clone()));
    ctx.add_routes(vec![route(BREAKER)]).await.unwrap();
    ctx.start().await.unwrap();
    let send = || async {
        let out = ctx.request("direct:in", Exchange::new("x")).await.unwrap();
        let h = |n: &str| out.header(n).map(|v| v.to_string()).unwrap_or_default();
        (
            out.message.body.as_text().unwrap_or_default().into_owned(),
            h("from_fallback"),
            h("short"),
        )
    };
    for _ in 0..2 {
        let (body, fallback, short) = send().await;
        assert_eq!(body, "fallback: backend down");
        assert_eq!((fallback.as_str(), short.as_str()), ("true", "false"));
    }
    // Open: short-circuited to the fallback without calling the backend.
    let (body, _, short) = send().await;
    assert_eq!(short, "true");
    assert!(body.starts_with("fallback: "), "{body}");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // The backend recovers; after the wait, a trial call closes the circuit.
    fails.store(0, Ordering::SeqCst);
    tokio::time::advance(Duration::from_secs(10)).await;
    let (body, fallback, short) = send().await;
    assert_eq!(
        (body.as_str(), fallback.as_str(), short.as_str()),
        ("live", "false", "false")
    );
    let (body, ..) = send().await;
    assert_eq!(body, "live");
    assert_eq!(calls.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn circuit_breaker_builder_matches_snake_case_yaml() {
    let y = route(
        "- circuit_breaker:\n    resilience4j_configuration: {minimum_number_of_calls: 5, timeout_enabled: true, timeout_duration: 2000}\n    steps: [{to: mock:a}]\n    on_fallback: {steps: [{set_body: {constant: cached}}]}",
    );
    let b = RouteBuilder::from("direct:in")
        .id("r")
        .circuit_breaker_with_fallback(
            CircuitBreaker::new()
                .minimum_number_of_calls(5)
                .timeout(Duration::from_secs(2)),
            |s| s.to("mock:a"),
            |f| f.set_body(constant("cached")),
        )
        .build();
    assert_eq!(y, b);
    let (ctx, mock) = context(vec![b]).await;
    let out = ctx.request("direct:in", Exchange::new("x")).await.unwrap();
    assert_eq!(mock.endpoint("a").received_count(), 1);
    assert_eq!(
        out.properties.get("CamelResponseSuccessfulExecution"),
        Some(&Value::Bool(true))
    );
}

const VALIDATE: &str = r#"
- doTry:
    steps:
      - validate: {simple: "${header.amount} > 0"}
      - setBody: {constant: valid}
    doCatch:
      - exception: [org.apache.camel.support.processor.validation.PredicateValidationException]
        steps:
          - setBody: {simple: "rejected: ${exception.message}"}
"#;

#[tokio::test]
async fn validate_fails_with_a_kind_do_catch_can_name() {
    let (ctx, _) = context(vec![route(VALIDATE)]).await;
    let ok = ctx
        .request("direct:in", Exchange::new("x").with_header("amount", 3))
        .await
        .unwrap();
    assert_eq!(ok.message.body, Body::from("valid"));
    let rejected = ctx
        .request("direct:in", Exchange::new("x").with_header("amount", -3))
        .await
        .unwrap();
    assert_eq!(
        rejected.message.body,
        Body::from("rejected: validation failed for predicate `simple: ${header.amount} > 0`")
    );
    // The builder gives the same definition.
    let b = RouteBuilder::from("direct:in")
        .id("r")
        .validate(simple("${header.amount} > 0"))
        .build();
    assert_eq!(b, route("- validate: {simple: \"${header.amount} > 0\"}"));
    let (ctx, _) = context(vec![b]).await;
    let err = ctx
        .request("direct:in", Exchange::new("x"))
        .await
        .unwrap_err();
    assert!(matches!(err, CamelError::Validation { .. }), "{err}");
}

#[tokio::test]
async fn exchange_pattern_step_and_to_with_pattern() {
    let (ctx, mock) = context(vec![route(
        "- to: {uri: mock:a, pattern: InOut}\n- process: {ref: pattern}\n- setHeader: {name: before, simple: \"${header.seen_pattern}\"}\n- setExchangePattern: InOut\n- process: {ref: pattern}",
    )])
    .await;
    let out = ctx.request("direct:in", Exchange::new("x")).await.unwrap();
    assert_eq!(
        mock.endpoint("a").received()[0].pattern,
        ExchangePattern::InOut
    );
    assert_eq!(
        out.header("before"),
        Some(&Value::from("InOnly")),
        "restored after the send"
    );
    assert_eq!(out.header("seen_pattern"), Some(&Value::from("InOut")));

    let b = RouteBuilder::from("direct:in")
        .id("r")
        .to_with_pattern("mock:a", ExchangePattern::InOut)
        .set_exchange_pattern(ExchangePattern::InOnly)
        .build();
    assert_eq!(
        b,
        route("- to: {uri: mock:a, pattern: InOut}\n- set_exchange_pattern: {pattern: InOnly}")
    );
}

#[tokio::test]
async fn step_groups_steps_under_its_id() {
    let y = route("- step:\n    id: enrich\n    steps:\n      - setHeader: {name: a, constant: '1'}\n      - setBody: {constant: done}");
    let (ctx, _) = context(vec![y]).await;
    let out = ctx.request("direct:in", Exchange::new("x")).await.unwrap();
    assert_eq!(out.message.body, Body::from("done"));
    let b = RouteBuilder::from("direct:in")
        .id("r")
        .step_group("enrich", |s| s.set_body(constant("done")))
        .build();
    assert_eq!(
        b,
        route("- step:\n    id: enrich\n    steps:\n      - set_body: {constant: done}")
    );
    // A mistake inside the group is reported under the group's id.
    let errs =
        errors_of("- step:\n    id: enrich\n    steps:\n      - setBody: {constant: x, simple: y}")
            .await;
    let text = errs.to_string();
    assert!(text.contains("step#enrich.steps[0]"), "{text}");
}

#[tokio::test]
async fn convert_header_to_with_its_options() {
    let (ctx, _) = context(vec![route(
        "- convertHeaderTo: {name: amount, type: java.lang.Integer}\n- convertHeaderTo: {name: flag, type: Boolean, toName: ok, mandatory: false}\n- convertHeaderTo: {name: raw, type: String, charset: ISO-8859-1}",
    )])
    .await;
    let mut input = Exchange::new("x")
        .with_header("amount", "12")
        .with_header("flag", "maybe");
    input
        .message
        .headers
        .insert("raw", Value::Bytes(vec![0x63, 0x61, 0x66, 0xe9].into()));
    let out = ctx.request("direct:in", input).await.unwrap();
    assert_eq!(out.header("amount"), Some(&Value::Int(12)));
    assert_eq!(out.header("ok"), None, "not mandatory: no value");
    assert_eq!(out.header("flag"), Some(&Value::from("maybe")));
    assert_eq!(out.header("raw"), Some(&Value::from("café")));
    let err = ctx
        .request(
            "direct:in",
            Exchange::new("x").with_header("amount", "twelve"),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CamelError::Conversion { .. }), "{err}");
    let b = RouteBuilder::from("direct:in")
        .id("r")
        .convert_header_to("amount", "Integer")
        .build();
    assert_eq!(
        b,
        route("- convert_header_to: {name: amount, type: Integer}")
    );
}

#[tokio::test]
async fn log_options_marker_and_language() {
    let (ctx, _) = context(vec![route(
        "- log: {message: 'hello', loggingLevel: WARN, logName: audit, marker: confidential, logLanguage: constant}",
    )])
    .await;
    ctx.request("direct:in", Exchange::new("x")).await.unwrap();
    let errs = errors_of("- log: {message: hi, logger: myLogger}").await;
    assert!(
        errs.to_string().contains("name the logger with `log_name`"),
        "{errs}"
    );
}

async fn errors_of(steps: &str) -> RouteErrors {
    let ctx = CamelContext::new();
    ctx.add_component(Arc::new(MockComponent::new()));
    ctx.validate(&[route(steps)])
        .await
        .expect_err("the route should not compile")
}

#[tokio::test]
async fn mistakes_are_located_errors() {
    for (steps, expected) in [
        (
            "- loadBalance:\n    steps: [{to: mock:a}]",
            "a balancer: round_robin_load_balancer",
        ),
        (
            "- loadBalance:\n    roundRobinLoadBalancer: {}\n    randomLoadBalancer: {}\n    steps: [{to: mock:a}]",
            "a load balancer has one policy",
        ),
        (
            "- loadBalance:\n    weightedLoadBalancer: {distributionRatio: '1,2,3'}\n    steps: [{to: mock:a}]",
            "3 distribution ratios for 1 targets",
        ),
        (
            "- loadBalance:\n    weightedLoadBalancer: {distributionRatio: 'one,two'}\n    steps: [{to: mock:a}, {to: mock:b}]",
            "not a list of whole numbers",
        ),
        (
            "- loadBalance:\n    roundRobinLoadBalancer: {}",
            "at least one target",
        ),
        (
            "- loadBalance:\n    customLoadBalancer: {ref: nope}\n    steps: [{to: mock:a}]",
            "no load balancer is registered under `nope`",
        ),
        (
            "- circuitBreaker:\n    resilience4jConfiguration: {failureRateThreshold: 0}\n    steps: [{to: mock:a}]",
            "a percentage above 0",
        ),
        (
            "- circuitBreaker:\n    resilience4jConfiguration: {slidingWindowSize: 0}\n    steps: [{to: mock:a}]",
            "must be at least 1",
        ),
        (
            "- circuitBreaker:\n    resilience4jConfiguration: {waitDurationInOpenState: soon}\n    steps: [{to: mock:a}]",
            "`soon` is not a duration",
        ),
        (
            "- convertHeaderTo: {name: a, type: java.util.Date}",
            "cannot convert a header to `java.util.Date`",
        ),
        (
            "- convertHeaderTo: {name: a, type: String, charset: EBCDIC}",
            "does not support the charset `EBCDIC`",
        ),
        ("- setExchangePattern: {pattern: OutIn}", "OutIn"),
        ("- to: {uri: mock:a, pattern: InAndOut}", "InAndOut"),
    ] {
        let errs = errors_of(steps).await;
        let text = errs.to_string();
        assert!(text.contains(expected), "{steps}\n→ {text}");
        assert!(text.contains("routes.yaml:"), "located: {text}");
    }
}

/// Records the fields of `log` events, to see the marker.
#[derive(Clone, Default)]
struct Events(Arc<std::sync::Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Events {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Fields(String);
        impl tracing::field::Visit for Fields {
            fn record_debug(&mut self, f: &tracing::field::Field, v: &dyn std::fmt::Debug) {
                self.0.push_str(&format!("{}={v:?} ", f.name()));
            }
        }
        let mut fields = Fields(format!("{} ", event.metadata().level()));
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }
}

#[tokio::test(flavor = "current_thread")]
async fn the_marker_is_a_field_of_the_log_event() {
    use tracing_subscriber::layer::SubscriberExt;
    let events = Events::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(events.clone()));
    let (ctx, _) = context(vec![route(
        "- log: {message: 'order ${body}', loggingLevel: WARN, logName: audit, marker: confidential}",
    )])
    .await;
    ctx.request("direct:in", Exchange::new("o-1"))
        .await
        .unwrap();
    let seen = events.0.lock().unwrap().clone();
    let line = seen
        .iter()
        .find(|l| l.contains("order o-1"))
        .unwrap_or_else(|| panic!("no log event in {seen:?}"));
    assert!(line.starts_with("WARN "), "{line}");
    assert!(line.contains("logger=\"audit\""), "{line}");
    assert!(line.contains("marker=\"confidential\""), "{line}");
}
