//! Camel's interceptors (ADR 0090): `intercept`, `interceptFrom` and
//! `interceptSendToEndpoint`, at the top of a file and in a `routeConfiguration`, with
//! `when` conditions and `stop`.

use std::sync::Arc;

use camel_api::Exchange;
use camel_components::MockComponent;
use camel_core::{CamelContext, RouteDefinition};

fn load(text: &str) -> Result<Vec<RouteDefinition>, String> {
    camel_core::yaml::load_str(text, "routes.yaml").map_err(|e| e.to_string())
}

async fn start(text: &str) -> (CamelContext, MockComponent) {
    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    ctx.add_routes(load(text).unwrap()).await.unwrap();
    ctx.start().await.unwrap();
    (ctx, mock)
}

#[tokio::test]
async fn intercept_runs_before_every_step_and_when_with_stop_ends_the_route() {
    let (ctx, mock) = start(
        r#"
- intercept:
    steps:
      - to: mock:every
- intercept:
    steps:
      - when:
          simple: "${body} == 'halt'"
          steps:
            - to: mock:halted
            - stop
- route:
    from:
      uri: direct:a
      steps:
        - setHeader: {name: seen, constant: yes}
        - filter:
            simple: "${header.seen} == 'yes'"
            steps: [{to: mock:inner}]
        - to: mock:out
"#,
    )
    .await;
    ctx.request("direct:a", Exchange::new("go")).await.unwrap();
    // setHeader, filter, the filter's `to`, the last `to`: four steps, nested included.
    assert_eq!(mock.endpoint("every").received_count(), 4);
    assert_eq!(mock.endpoint("out").received_count(), 1);
    assert_eq!(mock.endpoint("halted").received_count(), 0);

    let out = ctx
        .request("direct:a", Exchange::new("halt"))
        .await
        .unwrap();
    assert!(out.is_stopped());
    assert_eq!(mock.endpoint("halted").received_count(), 1);
    assert_eq!(
        mock.endpoint("out").received_count(),
        1,
        "stopped before step 1"
    );
    assert_eq!(mock.endpoint("every").received_count(), 5);
    ctx.stop().await;
}

#[tokio::test]
async fn intercept_from_applies_to_routes_whose_from_matches() {
    let (ctx, mock) = start(
        r#"
- interceptFrom:
    uri: "direct:order*"
    steps:
      - setHeader: {name: intercepted, simple: "${exchangeProperty.CamelInterceptedEndpoint}"}
- interceptFrom:
    steps: [{to: mock:all-routes}]
- route:
    from: {uri: direct:orders, steps: [{to: mock:orders}]}
- route:
    from: {uri: direct:other, steps: [{to: mock:other}]}
"#,
    )
    .await;
    ctx.request("direct:orders", Exchange::new("a"))
        .await
        .unwrap();
    ctx.request("direct:other", Exchange::new("b"))
        .await
        .unwrap();
    let orders = mock.endpoint("orders").received();
    assert_eq!(
        orders[0]
            .message
            .header("intercepted")
            .map(|v| v.to_string()),
        Some("direct:orders".to_string())
    );
    let other = mock.endpoint("other").received();
    assert!(other[0].message.header("intercepted").is_none());
    assert_eq!(mock.endpoint("all-routes").received_count(), 2);
    ctx.stop().await;
}

#[tokio::test]
async fn intercept_send_to_endpoint_skips_and_sends_after() {
    let (ctx, mock) = start(
        r#"
- interceptSendToEndpoint:
    uri: "mock:real*"
    skipSendToOriginalEndpoint: "true"
    afterUri: mock:after
    steps:
      - setBody: {constant: replaced}
      - to: mock:fake
- interceptSendToEndpoint:
    uri: mock:guarded
    skipSendToOriginalEndpoint: true
    steps:
      - when: {simple: "${header.dry} == 'yes'"}
      - to: mock:dry
- route:
    from:
      uri: direct:a
      steps:
        - to: mock:real-service
        - to: mock:guarded
        - to: mock:untouched
"#,
    )
    .await;
    ctx.request("direct:a", Exchange::new("x")).await.unwrap();
    assert_eq!(mock.endpoint("real-service").received_count(), 0);
    assert_eq!(mock.endpoint("fake").received_count(), 1);
    assert_eq!(mock.endpoint("after").received_count(), 1);
    assert_eq!(
        mock.endpoint("guarded").received_count(),
        1,
        "when false: sent"
    );
    assert_eq!(mock.endpoint("dry").received_count(), 0);
    let untouched = mock.endpoint("untouched").received();
    assert_eq!(
        untouched[0].message.body.as_text().as_deref(),
        Some("replaced")
    );

    let mut dry = Exchange::new("y");
    dry.message.headers.insert("dry", "yes");
    ctx.request("direct:a", dry).await.unwrap();
    assert_eq!(
        mock.endpoint("guarded").received_count(),
        1,
        "when true: skipped"
    );
    assert_eq!(mock.endpoint("dry").received_count(), 1);
    assert_eq!(mock.endpoint("untouched").received_count(), 2);
    ctx.stop().await;
}

#[tokio::test]
async fn interceptors_in_a_route_configuration_apply_to_the_routes_taking_it() {
    let (ctx, mock) = start(
        r#"
- routeConfiguration:
    id: mocked
    interceptSendToEndpoint:
      - interceptSendToEndpoint:
          uri: "mock:db"
          skipSendToOriginalEndpoint: true
          steps: [{to: mock:fake-db}]
    interceptFrom:
      - interceptFrom: {steps: [{to: mock:entered}]}
    intercept:
      - intercept: {steps: [{to: mock:step}]}
- route:
    routeConfigurationId: mocked
    from: {uri: direct:a, steps: [{to: mock:db}]}
- route:
    from: {uri: direct:b, steps: [{to: mock:db}]}
"#,
    )
    .await;
    ctx.request("direct:a", Exchange::new("x")).await.unwrap();
    assert_eq!(mock.endpoint("fake-db").received_count(), 1);
    assert_eq!(mock.endpoint("db").received_count(), 0);
    assert_eq!(mock.endpoint("entered").received_count(), 1);
    assert_eq!(mock.endpoint("step").received_count(), 1);
    ctx.request("direct:b", Exchange::new("y")).await.unwrap();
    assert_eq!(
        mock.endpoint("db").received_count(),
        1,
        "route b takes no configuration"
    );
    assert_eq!(mock.endpoint("entered").received_count(), 1);
    ctx.stop().await;
}

#[test]
fn bad_interceptors_are_located_errors() {
    let err = load("- interceptSendToEndpoint:\n    steps: []\n").unwrap_err();
    assert!(
        err.contains("routes.yaml:1:") || err.contains("routes.yaml:2:"),
        "{err}"
    );
    assert!(err.contains("uri"), "{err}");
    let err = load("- intercept:\n    skip: true\n").unwrap_err();
    assert!(err.contains("routes.yaml:2:"), "{err}");
    assert!(err.contains("skip"), "{err}");
}

#[tokio::test]
async fn a_bad_step_inside_an_interceptor_is_located_at_it() {
    let ctx = CamelContext::new();
    let routes = load(
        "- intercept:\n    steps:\n      - nosuchstep: {}\n- route:\n    from: {uri: direct:a, steps: [{to: log:x}]}\n",
    )
    .unwrap();
    let err = ctx.add_routes(routes).await.unwrap_err().to_string();
    assert!(err.contains("routes.yaml:3:"), "{err}");
}

#[tokio::test]
async fn builder_routes_take_the_same_interceptors() {
    use camel_core::builder::{simple, RouteBuilder};
    use camel_core::model::intercept::{Flag, InterceptSendToEndpointDefinition};
    let route = RouteBuilder::from("direct:built")
        .intercept_from(Some("direct:b*"), None, |s| s.to("mock:entered"))
        .intercept(Some(simple("${header.trace} == 'on'")), |s| {
            s.to("mock:traced")
        })
        .intercept_send_to_endpoint(
            InterceptSendToEndpointDefinition {
                uri: "mock:db".into(),
                skip_send_to_original_endpoint: Flag(true),
                after_uri: Some("mock:after".into()),
                ..Default::default()
            },
            None,
            |s| s.to("mock:fake-db"),
        )
        .to("mock:db")
        .to("mock:out")
        .build();
    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    ctx.add_routes(vec![route]).await.unwrap();
    ctx.start().await.unwrap();
    ctx.request("direct:built", Exchange::new("x"))
        .await
        .unwrap();
    assert_eq!(mock.endpoint("entered").received_count(), 1);
    assert_eq!(mock.endpoint("traced").received_count(), 0);
    assert_eq!(mock.endpoint("fake-db").received_count(), 1);
    assert_eq!(mock.endpoint("db").received_count(), 0);
    assert_eq!(mock.endpoint("after").received_count(), 1);
    let mut traced = Exchange::new("y");
    traced.message.headers.insert("trace", "on");
    ctx.request("direct:built", traced).await.unwrap();
    assert_eq!(
        mock.endpoint("traced").received_count(),
        2,
        "before each of two steps"
    );
    assert_eq!(mock.endpoint("out").received_count(), 2);
    ctx.stop().await;
}

#[tokio::test]
async fn a_failing_interceptor_step_reaches_the_error_handler() {
    let (ctx, mock) = start(
        r#"
- interceptFrom:
    steps:
      - throwException: {exceptionType: IllegalStateException, message: "from ${body}"}
- route:
    errorHandler:
      deadLetterChannel: {deadLetterUri: mock:dead}
    from: {uri: direct:a, steps: [{to: mock:out}]}
"#,
    )
    .await;
    ctx.request("direct:a", Exchange::new("x")).await.unwrap();
    assert_eq!(mock.endpoint("dead").received_count(), 1);
    assert_eq!(mock.endpoint("out").received_count(), 0);
    let dead = &mock.endpoint("dead").received()[0];
    assert_eq!(
        dead.property(camel_api::error_kind::FAILURE_ENDPOINT)
            .map(|v| v.to_string()),
        Some("intercept_from".into())
    );
    ctx.stop().await;
}
