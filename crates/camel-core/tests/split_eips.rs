//! `split`, `throttle`, `delay`, `loop`, `sort` and `sample` in Camel-spelled YAML and the
//! builder: the same definitions, the same behaviour.

use std::sync::Arc;
use std::time::Duration;

use camel_api::{Body, CamelError, Exchange, Value};
use camel_components::MockComponent;
use camel_core::builder::{
    constant, header, jsonpath, simple, Loop, RouteBuilder, Sample, Split, Throttle, Tokenize,
};
use camel_core::{CamelContext, RouteDefinition};
use camel_eip::aggregation::{AggregationStrategy, SharedStrategy};
use serde_json::json;

fn yaml(steps: &str) -> RouteDefinition {
    let indented: String = steps.lines().map(|l| format!("        {l}\n")).collect();
    let text =
        format!("- route:\n    id: r\n    from:\n      uri: direct:in\n      steps:\n{indented}");
    let mut routes = camel_core::yaml::load_str(&text, "test.yaml")
        .unwrap_or_else(|e| panic!("{e}\n---\n{text}"));
    routes.remove(0)
}

fn built(b: RouteBuilder) -> RouteDefinition {
    b.id("r").build()
}

/// Joins the bodies it is given with `+`.
struct Plus;

impl AggregationStrategy for Plus {
    fn aggregate(&self, old: Option<Exchange>, new: Exchange) -> Result<Exchange, CamelError> {
        Ok(match old {
            None => new,
            Some(mut acc) => {
                let joined = format!(
                    "{}+{}",
                    acc.message.body.as_text().unwrap_or_default(),
                    new.message.body.as_text().unwrap_or_default()
                );
                acc.message.body = Body::from(joined);
                acc
            }
        })
    }
}

async fn context(route: RouteDefinition) -> Result<(CamelContext, MockComponent), CamelError> {
    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    let plus: SharedStrategy = Arc::new(Plus);
    ctx.add_resource("plus", Arc::new(plus));
    ctx.add_routes(vec![route])
        .await
        .map_err(CamelError::processor)?;
    ctx.start().await.map_err(CamelError::processor)?;
    Ok((ctx, mock))
}

/// Runs `input` through the YAML route and the built route and checks they behave the
/// same; returns the result and the bodies `mock:part` received, once per route.
async fn same(
    y: RouteDefinition,
    b: RouteDefinition,
    input: Exchange,
) -> (Result<Exchange, CamelError>, Vec<Body>) {
    let mut outcomes = Vec::new();
    for route in [y, b] {
        let (ctx, mock) = context(route).await.unwrap();
        let out = ctx.request("direct:in", input.clone()).await;
        let parts: Vec<Body> = mock
            .endpoint("part")
            .received()
            .into_iter()
            .map(|e| e.message.body)
            .collect();
        ctx.stop().await;
        outcomes.push((out, parts));
    }
    let second = outcomes.pop().unwrap();
    let first = outcomes.pop().unwrap();
    assert_eq!(first.1, second.1);
    match (&first.0, &second.0) {
        (Ok(a), Ok(b)) => assert_eq!(a.message, b.message),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        _ => panic!("different outcomes: {:?} vs {:?}", first.0, second.0),
    }
    first
}

fn texts(items: &[&str]) -> Vec<Body> {
    items.iter().map(|s| Body::from(*s)).collect()
}

#[tokio::test]
async fn split_by_tokenize_with_a_strategy() {
    let y = yaml(
        "- split:\n    tokenize: {token: \",\", group: 2, skipFirst: true}\n    aggregationStrategy: GroupedBodyAggregationStrategy\n    steps:\n      - to: mock:part",
    );
    let b = built(
        RouteBuilder::from("direct:in").split(
            Split::tokenize(Tokenize::token(",").group(2).skip_first())
                .aggregation_strategy("GroupedBodyAggregationStrategy"),
            |s| s.to("mock:part"),
        ),
    );
    let snake = yaml(
        "- split:\n    tokenize: {token: \",\", group: 2, skip_first: true}\n    aggregation_strategy: GroupedBodyAggregationStrategy\n    steps:\n      - to: mock:part",
    );
    // The builder writes the token as the language's `expression`, a file as `token`: the
    // same configuration once decoded.
    let decoded = |r: &RouteDefinition| {
        let s: Split = serde_json::from_value(r.steps[0].config.clone()).unwrap();
        let t = s.tokenize.unwrap();
        (t.text, t.options, s.aggregation_strategy)
    };
    assert_eq!(decoded(&snake), decoded(&b));
    let (out, parts) = same(y, b, Exchange::new("h,a,b,c")).await;
    assert_eq!(parts, texts(&["a,b", "c"]));
    assert_eq!(out.unwrap().message.body, Body::from(json!(["a,b", "c"])));
}

#[tokio::test]
async fn split_by_jsonpath_in_parallel_with_a_registered_strategy() {
    let y = yaml(
        "- split:\n    jsonpath: \"$.items[*].name\"\n    parallelProcessing: true\n    parallelLimit: 2\n    aggregationStrategy: plus\n    steps:\n      - to: mock:part",
    );
    let b = built(RouteBuilder::from("direct:in").split(
        {
            let mut s = Split::default().parallel(2).aggregation_strategy("plus");
            s.jsonpath = Some(camel_api::definition::LanguageValue {
                text: "$.items[*].name".into(),
                options: Default::default(),
            });
            s
        },
        |s| s.to("mock:part"),
    ));
    let input = Exchange::new(json!({"items": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}));
    let snake = yaml(
        "- split:\n    jsonpath: \"$.items[*].name\"\n    parallel_processing: true\n    parallel_limit: 2\n    aggregation_strategy: plus\n    steps:\n      - to: mock:part",
    );
    assert_eq!(snake, b);
    let (out, parts) = same(y, b, input).await;
    assert_eq!(parts.len(), 3);
    assert_eq!(out.unwrap().message.body, Body::from("a+b+c"));
}

#[tokio::test]
async fn split_by_simple_list_and_split_by_builder_expression() {
    let y = yaml("- split:\n    simple: \"${header.list}\"\n    steps:\n      - to: mock:part");
    let b = built(
        RouteBuilder::from("direct:in").split_by(simple("${header.list}"), |s| s.to("mock:part")),
    );
    assert_eq!(y, b);
    let input = Exchange::new("x").with_header("list", "[1, 2]");
    let (out, parts) = same(y, b, input).await;
    assert_eq!(parts, [Body::from(json!(1)), Body::from(json!(2))]);
    assert_eq!(out.unwrap().message.body, Body::from("x"));
    // `expression: {tokenize: …}` is the tokenize language.
    let y = yaml(
        "- split:\n    expression:\n      tokenize: {expression: \";\", group: 2}\n    steps:\n      - to: mock:part",
    );
    let (ctx, mock) = context(y).await.unwrap();
    ctx.request("direct:in", Exchange::new("1;2;3"))
        .await
        .unwrap();
    let got: Vec<Body> = mock
        .endpoint("part")
        .received()
        .into_iter()
        .map(|e| e.message.body)
        .collect();
    assert_eq!(got, texts(&["1;2", "3"]));
    ctx.stop().await;
}

#[tokio::test]
async fn split_stop_on_exception_and_its_failure() {
    let y = yaml(
        "- split:\n    tokenize: \",\"\n    stopOnException: true\n    steps:\n      - to: mock:part\n      - filter:\n          simple: \"${body} == 'b'\"\n          steps:\n            - throwException: {exceptionType: java.lang.IllegalStateException, message: bad}",
    );
    let b = built(RouteBuilder::from("direct:in").split(
        Split::tokenize(Tokenize::token(",")).stop_on_exception(true),
        |s| {
            s.to("mock:part").filter(simple("${body} == 'b'"), |f| {
                f.step(
                    "throw_exception",
                    json!({"exception_type": "java.lang.IllegalStateException", "message": "bad"}),
                )
            })
        },
    ));
    let (out, parts) = same(y, b, Exchange::new("a,b,c")).await;
    assert_eq!(parts, texts(&["a", "b"]));
    assert_eq!(out.unwrap_err().kind_name(), "IllegalStateException");
}

#[tokio::test]
async fn split_errors_are_located() {
    for (steps, expect) in [
        (
            "- split:\n    aggregationStrategy: GroupedBodyStrategy\n    steps: []",
            "unknown aggregation strategy",
        ),
        (
            "- split:\n    tokenize: {token: \"x*\", regex: true}\n    steps: []",
            "matches the empty string",
        ),
        (
            "- split:\n    tokenize: \",\"\n    simple: \"${body}\"\n    steps: []",
            "more than one expression",
        ),
        (
            "- split:\n    tokenize: {tokn: \",\"}\n    steps: []",
            "tokn",
        ),
    ] {
        let err = context(yaml(steps))
            .await
            .err()
            .unwrap_or_else(|| panic!("{steps}"));
        assert!(err.to_string().contains(expect), "{steps}: {err}");
        assert!(err.to_string().contains("test.yaml:"), "located: {err}");
    }
}

#[tokio::test(start_paused = true)]
async fn throttle_per_period_and_per_key() {
    let y = yaml("- throttle:\n    constant: \"2\"\n    time_period_millis: 1000\n    correlation_expression: {header: tenant}\n- to: mock:part");
    let b = built(
        RouteBuilder::from("direct:in")
            .throttle(Throttle::per_period(2, 1000).correlation(header("tenant")))
            .to("mock:part"),
    );
    assert_eq!(y, b);
    let camel = yaml("- throttle:\n    constant: 2\n    timePeriodMillis: 1000\n    correlationExpression: {header: tenant}\n- to: mock:part");
    let (ctx, _mock) = context(camel).await.unwrap();
    let start = tokio::time::Instant::now();
    for tenant in ["a", "a", "b", "a"] {
        ctx.request(
            "direct:in",
            Exchange::new("x").with_header("tenant", tenant),
        )
        .await
        .unwrap();
    }
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(1),
        "only the third `a` waited"
    );
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn throttle_reject_execution() {
    let y = yaml("- throttle: {constant: 1, rejectExecution: true}");
    let b = built(
        RouteBuilder::from("direct:in")
            .throttle(Throttle::per_period(1, 1000).reject_execution(true)),
    );
    assert_eq!(
        yaml("- throttle: {constant: \"1\", time_period_millis: 1000, reject_execution: true}"),
        b
    );
    let (ctx, _mock) = context(y).await.unwrap();
    ctx.request("direct:in", Exchange::new("x")).await.unwrap();
    let e = ctx
        .request("direct:in", Exchange::new("x"))
        .await
        .unwrap_err();
    assert_eq!(e.kind_name(), "RejectedExecutionException");
    ctx.stop().await;
    assert!(
        context(yaml("- throttle: {constant: 1, mode: ConcurrentRequests}"))
            .await
            .is_err()
    );
}

#[tokio::test(start_paused = true)]
async fn delay_by_header_in_both_dsls() {
    let y = yaml("- delay: {header: wait}");
    let b = built(RouteBuilder::from("direct:in").delay(header("wait")));
    assert_eq!(y, b);
    let (ctx, _mock) = context(y).await.unwrap();
    let start = tokio::time::Instant::now();
    ctx.request("direct:in", Exchange::new("x").with_header("wait", 750))
        .await
        .unwrap();
    assert_eq!(start.elapsed(), Duration::from_millis(750));
    ctx.stop().await;
    // `- delay: 250` is the constant shorthand.
    let (ctx, _mock) = context(yaml("- delay: 250")).await.unwrap();
    let start = tokio::time::Instant::now();
    ctx.request("direct:in", Exchange::new("x")).await.unwrap();
    assert_eq!(start.elapsed(), Duration::from_millis(250));
    ctx.stop().await;
    let b = built(RouteBuilder::from("direct:in").delay(constant("250")));
    assert_eq!(yaml("- delay: {constant: \"250\"}"), b);
}

#[tokio::test]
async fn loop_count_copy_and_do_while() {
    let y = yaml("- loop:\n    constant: 3\n    copy: true\n    steps:\n      - to: mock:part");
    let b = built(
        RouteBuilder::from("direct:in").loop_(Loop::times(3).copy(true), |l| l.to("mock:part")),
    );
    assert_eq!(
        yaml("- loop:\n    constant: \"3\"\n    copy: true\n    steps:\n      - to: mock:part"),
        b
    );
    let (out, parts) = same(y, b, Exchange::new("x")).await;
    assert_eq!(parts.len(), 3);
    let out = out.unwrap();
    assert_eq!(out.property("CamelLoopIndex"), Some(&Value::from(2u64)));
    assert_eq!(out.property("CamelLoopSize"), Some(&Value::from(3u64)));
    let y = yaml(
        "- loop:\n    doWhile: true\n    simple: \"${body.length} < 3\"\n    steps:\n      - transform: {simple: \"${body}x\"}\n      - to: mock:part",
    );
    let b = built(
        RouteBuilder::from("direct:in").loop_(Loop::while_(simple("${body.length} < 3")), |l| {
            l.transform(simple("${body}x")).to("mock:part")
        }),
    );
    assert_eq!(
        yaml("- loop:\n    do_while: true\n    simple: \"${body.length} < 3\"\n    steps:\n      - transform: {simple: \"${body}x\"}\n      - to: mock:part"),
        b
    );
    let (out, parts) = same(y, b, Exchange::new("")).await;
    assert_eq!(parts, texts(&["x", "xx", "xxx"]));
    assert_eq!(out.unwrap().message.body, Body::from("xxx"));
}

#[tokio::test]
async fn sort_by_expression_with_a_comparator() {
    let y = yaml("- sort:\n    jsonpath: \"$.n\"\n    comparator: reverse");
    let b = built(RouteBuilder::from("direct:in").sort(Some(jsonpath("$.n")), Some("reverse")));
    assert_eq!(y, b);
    let (out, _) = same(y, b, Exchange::new(json!({"n": [1, 3, 2]}))).await;
    assert_eq!(out.unwrap().message.body, Body::from(json!([3, 2, 1])));
    let err = context(yaml("- sort: {comparator: byDate}"))
        .await
        .err()
        .unwrap();
    assert!(err.to_string().contains("unknown comparator"), "{err}");
}

#[tokio::test]
async fn sample_every_nth_in_both_dsls() {
    let y = yaml("- sample: {message_frequency: 2}\n- to: mock:part");
    let b = built(
        RouteBuilder::from("direct:in")
            .sample(Sample {
                message_frequency: Some(2),
                ..Default::default()
            })
            .to("mock:part"),
    );
    assert_eq!(y, b);
    let camel = yaml("- sample: {messageFrequency: 2}\n- to: mock:part");
    let (ctx, mock) = context(camel).await.unwrap();
    for i in 0..5 {
        ctx.request("direct:in", Exchange::new(format!("{i}")))
            .await
            .unwrap();
    }
    let got: Vec<Body> = mock
        .endpoint("part")
        .received()
        .into_iter()
        .map(|e| e.message.body)
        .collect();
    assert_eq!(got, texts(&["1", "3"]));
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn sample_per_period() {
    let (ctx, mock) = context(yaml("- sample: {samplePeriod: 1s}\n- to: mock:part"))
        .await
        .unwrap();
    for _ in 0..3 {
        ctx.request("direct:in", Exchange::new("x")).await.unwrap();
    }
    tokio::time::advance(Duration::from_secs(1)).await;
    ctx.request("direct:in", Exchange::new("x")).await.unwrap();
    assert_eq!(mock.endpoint("part").received().len(), 2);
    ctx.stop().await;
}
