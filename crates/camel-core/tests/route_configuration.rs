//! Camel's `routeConfiguration` (ADR 0052): by id, by wildcard, and without an id.

use std::sync::Arc;

use camel_api::Exchange;
use camel_components::MockComponent;
use camel_core::{CamelContext, RouteDefinition};

fn load(text: &str) -> Result<Vec<RouteDefinition>, String> {
    camel_core::yaml::load_str(text, "routes.yaml").map_err(|e| e.to_string())
}

const ROUTES: &str = r#"
- routeConfiguration:
    onException:
      - onException:
          exception: [java.lang.Exception]
          handled: true
          steps: [{to: mock:default-config}]
- routeConfiguration:
    id: audited-orders
    errorHandler:
      deadLetterChannel: {deadLetterUri: mock:dead}
    onCompletion:
      - onCompletion: {mode: BeforeConsumer, steps: [{to: mock:audit}]}
- route:
    id: plain
    from:
      uri: direct:plain
      steps: [{throwException: {exceptionType: Boom, message: x}}]
- route:
    id: audited
    routeConfigurationId: "audited-*"
    from:
      uri: direct:audited
      steps: [{throwException: {exceptionType: Boom, message: x}}]
"#;

#[tokio::test]
async fn configurations_apply_by_id_wildcard_or_to_routes_naming_none() {
    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    ctx.add_routes(load(ROUTES).unwrap()).await.unwrap();
    ctx.start().await.unwrap();
    ctx.request("direct:plain", Exchange::new("a"))
        .await
        .unwrap();
    assert_eq!(mock.endpoint("default-config").received_count(), 1);
    assert_eq!(mock.endpoint("dead").received_count(), 0);
    ctx.request("direct:audited", Exchange::new("b"))
        .await
        .unwrap();
    assert_eq!(
        mock.endpoint("default-config").received_count(),
        1,
        "not for a route naming another"
    );
    assert_eq!(mock.endpoint("dead").received_count(), 1);
    assert_eq!(mock.endpoint("audit").received_count(), 1);
    ctx.stop().await;
}

#[test]
fn an_unknown_id_and_a_bad_intercept_are_located_errors() {
    let err =
        load("- route:\n    routeConfigurationId: nope\n    from: {uri: direct:a}\n").unwrap_err();
    assert!(err.contains("routes.yaml:2:"), "{err}");
    assert!(err.contains("nope"), "{err}");
    let err = load("- routeConfiguration:\n    intercept: {stepz: []}\n").unwrap_err();
    assert!(err.contains("routes.yaml:2:"), "{err}");
    assert!(err.contains("stepz"), "{err}");
}
