//! Advice-with on a YAML route that reads from Kafka and writes to SQS and Kafka, run with
//! no broker: the source is replaced by `direct:`, `kafka:` endpoints are mocked and
//! skipped, `sqs:` ones mocked in front of a stand-in producer that proves it still runs.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Endpoint, EndpointUri, Exchange,
};
use camel_core::{RouteBuilder, RouteDefinition};
use camel_test::{advice_route, advice_with, AdviceError, TestContext};

const ROUTE: &str = r#"
- route:
    id: orders
    from:
      uri: kafka:orders
      parameters: {brokers: "127.0.0.1:1"}
    steps:
      - set_header: {name: kind, constant: order, id: tag}
      - delay: 5000
      - choice:
          when:
            - simple: "${body} == 'big'"
              steps:
                - to: {uri: "sqs://big-orders?region=eu-west-1", id: send-big}
          otherwise:
            steps:
              - to: sqs:small-orders
      - to: {uri: kafka:orders-out, id: publish}
"#;

/// A stand-in `sqs` component: records the bodies its producer is given and marks the
/// exchange, so a test sees the real endpoint ran after its mock.
#[derive(Clone, Debug, Default)]
struct StubSqs {
    sent: Arc<Mutex<Vec<String>>>,
}

#[derive(Debug)]
struct StubEndpoint {
    uri: String,
    sent: Arc<Mutex<Vec<String>>>,
}

impl Component for StubSqs {
    fn scheme(&self) -> &str {
        "sqs"
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        _: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        Ok(Arc::new(StubEndpoint {
            uri: uri.raw().to_string(),
            sent: self.sent.clone(),
        }))
    }
}

impl Endpoint for StubEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        let sent = self.sent.clone();
        Ok(BoxProcessor::sync(move |ex: Exchange| {
            let body = ex.message.body.as_text().unwrap_or_default().to_string();
            sent.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(body);
            Ok(ex.with_header("sent_by", "stub-sqs"))
        }))
    }
}

fn routes() -> Vec<RouteDefinition> {
    camel_core::yaml::load_str(ROUTE, "orders.camel.yaml").unwrap()
}

fn body(ex: &Exchange) -> String {
    ex.message.body.as_text().unwrap_or_default().to_string()
}

#[tokio::test(start_paused = true)]
async fn a_kafka_to_sqs_route_runs_without_brokers() {
    let mut routes = routes();
    advice_route(&mut routes, "orders", |a| {
        a.replace_from("direct:orders");
        a.mock_endpoints("sqs:*");
        a.mock_endpoints_and_skip("kafka:*");
        a.weave_by_id("tag").after(|s| s.to("mock:tagged"));
        a.weave_add_last(|s| s.to("mock:result"));
    })
    .unwrap();

    let test = TestContext::new();
    let sqs = StubSqs::default();
    test.context().add_component(Arc::new(sqs.clone()));
    test.context().add_routes(routes).await.unwrap();
    test.context().start().await.unwrap();

    let big = test.mock("sqs:big-orders");
    big.expected_bodies_received(["big"]);
    big.expected_header_received("kind", "order");
    let small = test.mock("mock:sqs:small-orders");
    small.expected_bodies_received(["small"]);
    let out = test.mock("kafka:orders-out");
    out.expected_message_count(2);
    let result = test.mock("result");
    result.expected_bodies_received(["big", "small"]);

    // The 5 s delay passes on the paused clock: the asserts neither sleep nor time out.
    let started = std::time::Instant::now();
    for b in ["big", "small"] {
        let reply = test
            .context()
            .request("direct:orders", Exchange::new(b))
            .await
            .unwrap();
        assert_eq!(
            reply.header("sent_by").and_then(|v| v.as_str()),
            Some("stub-sqs")
        );
    }
    for mock in [&big, &small, &out, &result] {
        mock.assert_is_satisfied(Duration::from_secs(30))
            .await
            .unwrap();
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the paused clock was not used"
    );

    // The mock saw the exchange before the real producer marked it.
    assert!(big.received()[0].header("sent_by").is_none());
    assert_eq!(
        *sqs.sent.lock().unwrap_or_else(PoisonError::into_inner),
        ["big", "small"]
    );
    // The kafka endpoint was skipped: its mock saw the exchange the stand-in marked.
    assert_eq!(
        out.received().iter().map(body).collect::<Vec<_>>(),
        ["big", "small"]
    );
    assert_eq!(test.mock("tagged").received_count(), 2);
    test.context().stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_unmet_expectation_fails_after_the_timeout_on_the_paused_clock() {
    let mut routes = routes();
    advice_route(&mut routes, "orders", |a| {
        a.replace_from("direct:orders");
        a.mock_endpoints_and_skip("*");
    })
    .unwrap();
    let test = TestContext::new();
    test.context().add_routes(routes).await.unwrap();
    test.context().start().await.unwrap();
    let small = test.mock("sqs:small-orders");
    small.expected_message_count(2);
    test.context()
        .request("direct:orders", Exchange::new("x"))
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let err = small
        .assert_is_satisfied(Duration::from_secs(3600))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        err.to_string()
            .contains("expected 2 message(s), received 1"),
        "{err}"
    );
    test.context().stop().await;
}

#[tokio::test]
async fn weave_replace_before_and_remove_reach_nested_steps() {
    let mut routes = routes();
    advice_route(&mut routes, "orders", |a| {
        a.replace_from("direct:orders");
        a.weave_by_id("send-big").replace(|s| {
            s.set_body(camel_core::builder::constant("replaced"))
                .to("mock:big")
        });
        a.weave_by_to_uri("sqs:small*")
            .before(|s| s.to("mock:before-small"));
        a.weave_by_to_uri("sqs:small*").remove();
        a.weave_by_id("publish").replace(|s| s.to("mock:published"));
        a.weave_by_id("tag").remove();
        a.weave_add_first(|s| s.process(|ex| Ok(ex.with_header("first", true))));
    })
    .unwrap();
    let advised = serde_json::to_string(&routes[0].steps).unwrap();
    assert!(!advised.contains("sqs:"), "{advised}");
    assert!(!advised.contains("kafka:"), "{advised}");

    // A second advice sees the first one's steps; the delay goes so this test runs on the
    // real clock.
    advice_route(&mut routes, "orders", |a| {
        a.weave_by_to_uri("mock:big")
            .after(|s| s.to("mock:after-big"));
    })
    .unwrap();
    routes[0].steps.retain(|s| s.name != "delay");
    let test = TestContext::new();
    test.context().add_routes(routes).await.unwrap();
    test.context().start().await.unwrap();
    for b in ["big", "small"] {
        test.context()
            .request("direct:orders", Exchange::new(b))
            .await
            .unwrap();
    }
    let big = test.mock("big");
    big.expected_bodies_received(["replaced"]);
    big.expected_header_received("first", true);
    big.assert_is_satisfied(Duration::from_secs(5))
        .await
        .unwrap();
    assert!(
        big.received()[0].header("kind").is_none(),
        "the tag step was removed"
    );
    assert_eq!(test.mock("after-big").received_count(), 1);
    assert_eq!(
        test.mock("before-small")
            .received()
            .iter()
            .map(body)
            .collect::<Vec<_>>(),
        ["small"]
    );
    assert_eq!(test.mock("published").received_count(), 2);
    test.context().stop().await;
}

#[test]
fn a_weave_that_selects_nothing_leaves_the_route_unchanged() {
    let mut routes = routes();
    let before = routes.clone();
    let err = advice_route(&mut routes, "orders", |a| {
        a.replace_from("direct:x");
        a.weave_by_id("sned-big").remove();
    })
    .unwrap_err();
    assert_eq!(
        err,
        AdviceError::NoMatch {
            route: "orders".into(),
            selector: "weave_by_id(\"sned-big\")".into()
        }
    );
    assert_eq!(routes, before);
    let err = advice_route(&mut routes, "order", |_| {}).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no route `order` to advise (routes: orders)"
    );
}

#[tokio::test]
async fn a_route_built_in_rust_is_advised_alike() {
    let mut route = RouteBuilder::from("kafka:in")
        .id("rust")
        .to("http://example.invalid/api")
        .to("log:done")
        .build();
    advice_with(&mut route, |a| {
        a.replace_from("direct:in");
        a.mock_endpoints_and_skip("http*:*");
    })
    .unwrap();
    let test = TestContext::new();
    let api = test.mock("http:example.invalid/api");
    api.when_any_exchange_received(|mut ex| {
        ex.message.body = "{\"ok\":true}".into();
        Ok(ex)
    });
    test.context().add_routes(vec![route]).await.unwrap();
    test.context().start().await.unwrap();
    let reply = test
        .context()
        .request("direct:in", Exchange::new("q"))
        .await
        .unwrap();
    assert_eq!(body(&reply), "{\"ok\":true}");
    assert_eq!(api.received().iter().map(body).collect::<Vec<_>>(), ["q"]);
    test.context().stop().await;
}
