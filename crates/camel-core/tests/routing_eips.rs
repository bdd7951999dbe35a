//! Recipient list, routing slip, dynamic router, `to_d`, wire tap, enrich, poll enrich
//! and claim check: Camel-spelled YAML and the builder, through a running context
//! (ADRs 0060–0062).

use std::sync::Arc;
use std::time::Duration;

use camel_api::{Body, BoxProcessor, CamelError, Exchange, Value};
use camel_components::MockComponent;
use camel_core::builder::{
    constant, header, ClaimCheck, ClaimCheckOperation, Enrich, PollEnrich, RecipientList,
    RouteBuilder, WireTap,
};
use camel_core::{CamelContext, RouteDefinition};
use camel_eip::aggregation::{Builtin, SharedStrategy};

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

async fn compile_error(ctx: &CamelContext, routes: Vec<RouteDefinition>) -> String {
    match ctx.add_routes(routes).await {
        Ok(_) => panic!("the route compiled"),
        Err(e) => e.to_string(),
    }
}

/// Reply routes: `direct:NAME` answers `NAME(<body>)`; `direct:fail` fails.
const REPLIERS: &str = r##"
- route:
    from:
      uri: direct:a
      steps: [{setBody: {simple: "a(${body})"}}]
- route:
    from:
      uri: direct:b
      steps: [{setBody: {simple: "b(${body})"}}]
- route:
    from:
      uri: direct:fail
      steps: [{throwException: {exceptionType: java.io.IOException, message: "down"}}]
"##;

fn with_repliers(routes: &str) -> Vec<RouteDefinition> {
    let mut all = load(REPLIERS);
    all.extend(load(routes));
    all
}

#[tokio::test]
async fn recipient_list_from_a_header_in_camel_spelling_aggregates_in_list_order() {
    let (ctx, mock) = context(with_repliers(
        r##"
- route:
    from:
      uri: direct:in
      steps:
        - recipientList:
            header: to
            parallelProcessing: true
            aggregationStrategy: GroupedBodyAggregationStrategy
        - to: mock:out
"##,
    ))
    .await;
    let out = ctx
        .request(
            "direct:in",
            Exchange::new("x").with_header("to", "direct:b, direct:a"),
        )
        .await
        .unwrap();
    assert_eq!(
        out.message.body,
        Body::from(serde_json::json!(["b(x)", "a(x)"]))
    );
    assert_eq!(mock.endpoint("out").received_count(), 1);
    // No recipient: the exchange passes unchanged.
    let out = ctx.request("direct:in", Exchange::new("y")).await.unwrap();
    assert_eq!(out.message.body, Body::from("y"));
    ctx.stop().await;
}

#[tokio::test]
async fn recipient_list_delimiter_and_default_latest_reply() {
    let (ctx, mock) = context(with_repliers(
        r##"
- route:
    from:
      uri: direct:in
      steps:
        - recipient_list: {simple: "${body}", delimiter: ";"}
"##,
    ))
    .await;
    let out = ctx
        .request("direct:in", Exchange::new("mock:one;direct:a"))
        .await
        .unwrap();
    assert_eq!(out.message.body, Body::from("a(mock:one;direct:a)"));
    assert_eq!(
        mock.endpoint("one").received()[0].property("CamelRecipientListEndpoint"),
        Some(&Value::from("mock:one"))
    );
    ctx.stop().await;
}

#[tokio::test]
async fn an_unknown_scheme_fails_before_anything_is_sent_unless_ignored() {
    let (ctx, mock) = context(load(
        r##"
- route:
    from:
      uri: direct:strict
      steps: [{recipientList: {header: to}}]
- route:
    from:
      uri: direct:lenient
      steps: [{recipientList: {header: to, ignoreInvalidEndpoints: true}}]
"##,
    ))
    .await;
    let to = "mock:first,kafak:orders";
    let err = ctx
        .request("direct:strict", Exchange::new("x").with_header("to", to))
        .await
        .unwrap_err();
    assert!(
        matches!(err, CamelError::UnknownComponent { ref scheme, .. } if &**scheme == "kafak"),
        "{err}"
    );
    assert_eq!(mock.endpoint("first").received_count(), 0, "nothing sent");
    ctx.request("direct:lenient", Exchange::new("x").with_header("to", to))
        .await
        .unwrap();
    assert_eq!(mock.endpoint("first").received_count(), 1);
    ctx.stop().await;
}

#[tokio::test]
async fn stop_on_exception_leaves_later_recipients_out() {
    let (ctx, mock) = context(with_repliers(
        r##"
- route:
    from:
      uri: direct:stop
      steps: [{recipientList: {constant: "direct:fail,mock:after", stopOnException: true}}]
- route:
    from:
      uri: direct:all
      steps: [{recipientList: {constant: "direct:fail,mock:after"}}]
"##,
    ))
    .await;
    assert!(ctx
        .request("direct:stop", Exchange::new("x"))
        .await
        .is_err());
    assert_eq!(mock.endpoint("after").received_count(), 0);
    let err = ctx
        .request("direct:all", Exchange::new("x"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("down"), "{err}");
    assert_eq!(
        mock.endpoint("after").received_count(),
        1,
        "every recipient got its copy"
    );
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_timeout_leaves_late_recipients_out_of_the_aggregation() {
    let slow = RouteBuilder::from("direct:slow")
        .process_with(BoxProcessor::from_fn(|ex: Exchange| async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok(ex)
        }))
        .build();
    let list = RouteBuilder::from("direct:in")
        .recipient_list(
            RecipientList::new(constant("direct:a,direct:slow,direct:b"))
                .parallel()
                .strategy("grouped_body")
                .timeout(Duration::from_millis(250)),
        )
        .build();
    let mut routes = load(REPLIERS);
    routes.extend([slow, list]);
    let (ctx, _mock) = context(routes).await;
    let started = tokio::time::Instant::now();
    let out = ctx.request("direct:in", Exchange::new("x")).await.unwrap();
    assert_eq!(
        out.message.body,
        Body::from(serde_json::json!(["a(x)", "b(x)"]))
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    ctx.stop().await;
}

#[tokio::test]
async fn a_registered_strategy_is_found_by_name_and_an_unknown_one_is_a_located_error() {
    let ctx = CamelContext::new();
    let joined: SharedStrategy = Arc::new(Builtin::String {
        delimiter: "+".into(),
    });
    ctx.add_resource("joined", Arc::new(joined));
    let mut routes = load(REPLIERS);
    routes.extend(load(
        r##"
- route:
    from:
      uri: direct:in
      steps: [{recipientList: {constant: "direct:a,direct:b", aggregationStrategy: "#bean:joined"}}]
"##,
    ));
    ctx.add_routes(routes).await.unwrap();
    ctx.start().await.unwrap();
    let out = ctx.request("direct:in", Exchange::new("x")).await.unwrap();
    assert_eq!(out.message.body, Body::from("a(x)+b(x)"));
    let err = compile_error(
        &ctx,
        load(
            r##"
- route:
    from:
      uri: direct:other
      steps:
        - recipientList:
            constant: direct:a
            aggregationStrategy: nosuch
"##,
        ),
    )
    .await;
    assert!(
        err.contains("routes.yaml:8") && err.contains("nosuch"),
        "{err}"
    );
    ctx.stop().await;
}

#[tokio::test]
async fn routing_slip_walks_in_order_and_dynamic_router_asks_after_each_hop() {
    let (ctx, mock) = context(with_repliers(
        r##"
- route:
    from:
      uri: direct:slip
      steps:
        - routingSlip: {header: slip, uriDelimiter: "|", ignoreInvalidEndpoints: true}
- route:
    from:
      uri: direct:hop1
      steps:
        - setBody: {simple: "1(${body})"}
        - setHeader: {name: next, constant: "direct:hop2"}
- route:
    from:
      uri: direct:hop2
      steps:
        - setBody: {simple: "2(${body}) after ${exchangeProperty.CamelSlipEndpoint}"}
        - removeHeader: {name: next}
- route:
    from:
      uri: direct:router
      steps:
        - dynamicRouter: {header: next}
        - to: mock:routed
"##,
    ))
    .await;
    let out = ctx
        .request(
            "direct:slip",
            Exchange::new("x").with_header("slip", "direct:a|nope:x|direct:b"),
        )
        .await
        .unwrap();
    assert_eq!(out.message.body, Body::from("b(a(x))"));
    assert_eq!(
        out.property("CamelSlipEndpoint"),
        Some(&Value::from("direct:b"))
    );
    ctx.request(
        "direct:router",
        Exchange::new("x").with_header("next", "direct:hop1"),
    )
    .await
    .unwrap();
    let routed = mock.endpoint("routed").received();
    assert_eq!(
        routed[0].message.body,
        Body::from("2(1(x)) after direct:hop2")
    );
    ctx.stop().await;
}

#[tokio::test]
async fn to_d_resolves_per_exchange_and_a_fixed_bad_uri_fails_to_compile() {
    let (ctx, mock) = context(load(
        r##"
- route:
    from:
      uri: direct:in
      steps:
        - toD: "mock:${header.dest}"
- route:
    from:
      uri: direct:params
      steps:
        - toD: {uri: "mock:${header.dest}", parameters: {log: "false"}}
- route:
    from:
      uri: direct:whole
      steps:
        - toD: "${header.uri}"
"##,
    ))
    .await;
    for dest in ["eu", "us", "eu"] {
        ctx.request("direct:in", Exchange::new(dest).with_header("dest", dest))
            .await
            .unwrap();
    }
    assert_eq!(mock.endpoint("eu").received_count(), 2);
    assert_eq!(mock.endpoint("us").received_count(), 1);
    ctx.request("direct:params", Exchange::new("p").with_header("dest", "p"))
        .await
        .unwrap();
    assert_eq!(mock.endpoint("p").received_count(), 1);
    // A value spliced into the template cannot add an option: it is encoded, so the
    // mock is named by the whole text.
    ctx.request(
        "direct:in",
        Exchange::new("x").with_header("dest", "a?nosuchoption=1"),
    )
    .await
    .unwrap();
    assert_eq!(mock.endpoint("a%3Fnosuchoption%3D1").received_count(), 1);
    // A URI that is one function is the message's on purpose, and checked as one.
    let err = ctx
        .request(
            "direct:whole",
            Exchange::new("x").with_header("uri", "mock:a?nosuchoption=1"),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CamelError::InvalidUri { .. }), "{err}");
    let err = compile_error(
        &ctx,
        load("- route:\n    from:\n      uri: direct:bad\n      steps:\n        - toD: \"kafak:orders\"\n"),
    )
    .await;
    assert!(
        err.contains("kafak") && err.contains("routes.yaml:5"),
        "{err}"
    );
    ctx.stop().await;
}

#[tokio::test]
async fn wire_tap_sends_prepared_copies_and_the_main_exchange_is_unchanged() {
    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    ctx.add_resource(
        "prep",
        Arc::new(BoxProcessor::sync(|ex: Exchange| {
            Ok(ex.with_header("prepared", true))
        })),
    );
    ctx.add_routes(load(
        r##"
- route:
    from:
      uri: direct:in
      steps:
        - setProperty: {name: secret, constant: "s"}
        - wireTap: {uri: "mock:tap-${header.kind}", onPrepare: "#prep"}
        - wireTap:
            uri: mock:bare
            copy: false
            on_prepare:
              - setBody: {simple: "tapped ${body}"}
        - to: mock:main
"##,
    ))
    .await
    .unwrap();
    ctx.start().await.unwrap();
    let out = ctx
        .request(
            "direct:in",
            Exchange::new("order").with_header("kind", "audit"),
        )
        .await
        .unwrap();
    assert_eq!(out.message.body, Body::from("order"));
    assert!(out.message.headers.get("prepared").is_none());
    ctx.stop().await; // drains the taps
    let tapped = mock.endpoint("tap-audit").received();
    assert_eq!(tapped.len(), 1);
    assert_eq!(
        tapped[0].message.headers.get("prepared"),
        Some(&Value::from(true))
    );
    assert_eq!(tapped[0].property("secret"), Some(&Value::from("s")));
    assert_ne!(tapped[0].id, out.id, "a tap is a new exchange");
    let bare = mock.endpoint("bare").received();
    assert_eq!(bare[0].message.body, Body::from("tapped order"));
    assert!(
        bare[0].property("secret").is_none(),
        "copy: false carries the message only"
    );
}

#[tokio::test]
async fn enrich_replaces_or_aggregates_and_aggregate_on_exception() {
    let ctx = CamelContext::new();
    let joined: SharedStrategy = Arc::new(Builtin::String {
        delimiter: " & ".into(),
    });
    ctx.add_resource("joined", Arc::new(joined));
    let mut routes = load(REPLIERS);
    routes.extend(load(
        r##"
- route:
    from:
      uri: direct:plain
      steps: [{enrich: {constant: direct:a}}]
- route:
    from:
      uri: direct:merged
      steps: [{enrich: {simple: "direct:${header.src}", aggregationStrategy: joined}}]
- route:
    from:
      uri: direct:failing
      steps: [{enrich: {constant: direct:fail, aggregationStrategy: joined, aggregateOnException: true}}]
- route:
    from:
      uri: direct:strict
      steps: [{enrich: {constant: direct:fail, aggregationStrategy: joined}}]
- route:
    from:
      uri: direct:invalid
      steps: [{enrich: {constant: "nope:x", ignoreInvalidEndpoint: true}}]
"##,
    ));
    ctx.add_routes(routes).await.unwrap();
    ctx.start().await.unwrap();
    let input = Exchange::new("x").with_header("src", "b");
    let id = input.id;
    let out = ctx.request("direct:plain", input).await.unwrap();
    assert_eq!(out.message.body, Body::from("a(x)"));
    assert_eq!(out.id, id);
    let out = ctx
        .request("direct:merged", Exchange::new("x").with_header("src", "b"))
        .await
        .unwrap();
    assert_eq!(out.message.body, Body::from("x & b(x)"));
    let out = ctx
        .request("direct:failing", Exchange::new("x"))
        .await
        .unwrap();
    assert_eq!(out.message.body, Body::from("x & x"));
    assert!(ctx
        .request("direct:strict", Exchange::new("x"))
        .await
        .is_err());
    let out = ctx
        .request("direct:invalid", Exchange::new("x"))
        .await
        .unwrap();
    assert_eq!(out.message.body, Body::from("x"));
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn poll_enrich_takes_one_message_from_seda_or_times_out() {
    let routes = vec![
        RouteBuilder::from("direct:in")
            .poll_enrich(PollEnrich::new(constant("seda:prices")).timeout_ms(500))
            .build(),
        RouteBuilder::from("direct:mock")
            .poll_enrich(PollEnrich::new(constant("mock:x")).timeout_ms(0))
            .build(),
    ];
    let (ctx, _mock) = context(routes).await;
    ctx.request("seda:prices", Exchange::new("42"))
        .await
        .unwrap();
    let out = ctx
        .request("direct:in", Exchange::new("item"))
        .await
        .unwrap();
    assert_eq!(out.message.body, Body::from("42"));
    let started = tokio::time::Instant::now();
    let out = ctx
        .request("direct:in", Exchange::new("item"))
        .await
        .unwrap();
    assert_eq!(
        out.message.body,
        Body::from("item"),
        "nothing to take: unchanged"
    );
    assert_eq!(started.elapsed(), Duration::from_millis(500));
    let err = ctx
        .request("direct:mock", Exchange::new("item"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("cannot be polled"), "{err}");
    ctx.stop().await;
}

#[tokio::test]
async fn poll_enrich_yaml_shape() {
    let (ctx, _mock) = context(load(
        r##"
- route:
    from:
      uri: direct:in
      steps:
        - pollEnrich: {constant: "seda:q", timeout: "0", aggregationStrategy: grouped_body}
"##,
    ))
    .await;
    ctx.request("seda:q", Exchange::new("queued"))
        .await
        .unwrap();
    let out = ctx.request("direct:in", Exchange::new("in")).await.unwrap();
    assert_eq!(
        out.message.body,
        Body::from(serde_json::json!(["in", "queued"]))
    );
    ctx.stop().await;
}

#[tokio::test]
async fn claim_check_set_get_remove_filter_push_pop() {
    let (ctx, mock) = context(load(
        r##"
- route:
    from:
      uri: direct:in
      steps:
        - claimCheck: {operation: Set, key: "${header.id}"}
        - setBody: {constant: "small"}
        - setHeader: {name: keep, constant: "now"}
        - claimCheck: {operation: Get, key: "${header.id}", filter: "header:ke*"}
        - to: mock:got
        - claimCheck: {operation: GetAndRemove, key: "${header.id}", filter: "body,-headers"}
        - to: mock:removed
        - claimCheck: {operation: Push}
        - setBody: {constant: "between"}
        - claimCheck: {operation: Pop}
        - to: mock:popped
"##,
    ))
    .await;
    ctx.request(
        "direct:in",
        Exchange::new("big")
            .with_header("id", "7")
            .with_header("keep", "then"),
    )
    .await
    .unwrap();
    let got = &mock.endpoint("got").received()[0];
    assert_eq!(got.message.body, Body::from("small"));
    assert_eq!(got.message.headers.get("keep"), Some(&Value::from("then")));
    let removed = &mock.endpoint("removed").received()[0];
    assert_eq!(removed.message.body, Body::from("big"));
    assert_eq!(
        mock.endpoint("popped").received()[0].message.body,
        Body::from("big")
    );
    let err = compile_error(
        &ctx,
        load("- route:\n    from:\n      uri: direct:x\n      steps:\n        - claimCheck: {operation: Get}\n"),
    )
    .await;
    assert!(err.contains("key"), "{err}");
    let err = compile_error(
        &ctx,
        load("- route:\n    from:\n      uri: direct:y\n      steps:\n        - claimCheck: {operation: Set, key: k, filter: bodies}\n"),
    )
    .await;
    assert!(err.contains("bodies"), "{err}");
    ctx.stop().await;
}

#[tokio::test]
async fn builder_spellings_run() {
    let routes = vec![
        RouteBuilder::from("direct:in")
            .claim_check(ClaimCheck::new(ClaimCheckOperation::Push, None))
            .enrich(Enrich::new(constant("direct:a")))
            .wire_tap_prepared(WireTap::new("mock:tap"), |b| b.set_body(constant("t")))
            .claim_check(ClaimCheck::new(ClaimCheckOperation::Pop, None).filter("headers"))
            .routing_slip(camel_core::builder::RoutingSlip::new(header("slip")))
            .to_d("mock:${header.dest}")
            .build(),
        RouteBuilder::from("direct:a")
            .set_body(constant("enriched"))
            .build(),
    ];
    let (ctx, mock) = context(routes).await;
    let out = ctx
        .request(
            "direct:in",
            Exchange::new("x")
                .with_header("dest", "end")
                .with_header("slip", "mock:s"),
        )
        .await
        .unwrap();
    assert_eq!(out.message.body, Body::from("enriched"));
    ctx.stop().await;
    assert_eq!(mock.endpoint("end").received_count(), 1);
    assert_eq!(mock.endpoint("s").received_count(), 1);
    assert_eq!(
        mock.endpoint("tap").received()[0].message.body,
        Body::from("t")
    );
}
