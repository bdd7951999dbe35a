//! Context-level error handling across files: the top-level `errorHandler`,
//! `onException`, `onCompletion`, `routeConfiguration` and interceptors of one file reach
//! the routes of every file loaded with it, as in Camel where they are context-wide.

use std::sync::Arc;

use camel_api::Exchange;
use camel_components::MockComponent;
use camel_core::properties::Properties;
use camel_core::{CamelContext, RouteDefinition};

fn load(texts: &[(&str, &str)]) -> Result<Vec<RouteDefinition>, String> {
    camel_core::yaml::load_texts_with(texts, &Properties::new()).map_err(|e| e.to_string())
}

const SHARED: &str = r#"
- routeConfiguration:
    id: to-the-dead
    errorHandler:
      deadLetterChannel: {deadLetterUri: mock:dead}
- onException:
    exception: [Refused]
    handled: true
    steps: [{to: mock:refused}]
- interceptFrom:
    uri: "direct:*"
    steps: [{to: mock:entered}]
"#;

const ORDERS: &str = r#"
- route:
    id: orders
    routeConfigurationId: to-the-dead
    from:
      uri: direct:orders
      steps: [{throwException: {exceptionType: Boom, message: x}}]
- route:
    id: refusals
    from:
      uri: direct:refusals
      steps: [{throwException: {exceptionType: Refused, message: x}}]
"#;

#[tokio::test]
async fn a_configuration_clause_and_interceptor_of_one_file_reach_the_routes_of_another() {
    let ctx = CamelContext::new();
    let mock = MockComponent::new();
    ctx.add_component(Arc::new(mock.clone()));
    let routes = load(&[(SHARED, "shared.yaml"), (ORDERS, "orders.yaml")]).unwrap();
    ctx.add_routes(routes).await.unwrap();
    ctx.start().await.unwrap();
    ctx.request("direct:orders", Exchange::new("a"))
        .await
        .expect("handled by the dead letter channel of shared.yaml");
    assert_eq!(mock.endpoint("dead").received_count(), 1);
    assert_eq!(mock.endpoint("refused").received_count(), 0);
    ctx.request("direct:refusals", Exchange::new("b"))
        .await
        .expect("handled by the clause of shared.yaml");
    assert_eq!(mock.endpoint("refused").received_count(), 1);
    assert_eq!(mock.endpoint("dead").received_count(), 1);
    assert_eq!(
        mock.endpoint("entered").received_count(),
        2,
        "the interceptor of shared.yaml ran as each route began"
    );
    ctx.stop().await;
}

#[test]
fn the_order_of_the_files_does_not_matter() {
    let routes = load(&[(ORDERS, "orders.yaml"), (SHARED, "shared.yaml")]).unwrap();
    let orders = routes
        .iter()
        .find(|r| r.id.as_deref() == Some("orders"))
        .unwrap();
    assert!(orders.errors.context_error_handler.is_some());
    assert_eq!(orders.errors.context_on_exception.len(), 1);
    assert_eq!(orders.errors.intercepts.intercept_from.len(), 1);
}

#[test]
fn a_second_top_level_error_handler_in_another_file_is_a_located_error() {
    let a = "- errorHandler: {deadLetterChannel: {deadLetterUri: 'mock:a'}}\n";
    let b = "- route: {from: {uri: 'direct:b'}}\n- errorHandler: {noErrorHandler: {}}\n";
    let err = load(&[(a, "a.yaml"), (b, "b.yaml")]).unwrap_err();
    assert!(err.contains("b.yaml:2:"), "at the second: {err}");
    assert!(err.contains("a.yaml:1:"), "names the first: {err}");
    assert!(err.contains("errorHandler"), "{err}");
}

#[test]
fn a_route_naming_an_id_no_file_defines_is_located_in_its_own_file() {
    let route = "- route:\n    routeConfigurationId: nope\n    from: {uri: direct:a}\n";
    let err = load(&[(SHARED, "shared.yaml"), (route, "orders.yaml")]).unwrap_err();
    assert!(err.contains("orders.yaml:2:"), "{err}");
    assert!(err.contains("nope"), "{err}");
}

#[tokio::test]
async fn a_mistake_in_a_shared_handler_is_located_in_the_file_that_holds_it() {
    // The routes of orders.yaml are compiled with the handler of shared.yaml: its error
    // points at shared.yaml, not at the same place in orders.yaml.
    let shared = "\n\n- errorHandler:\n    deadLetterChannel: {deadLetterUri: 'nosuch:dead'}\n";
    let orders = "- route:\n    from: {uri: direct:a, steps: [{to: mock:a}]}\n\n\n";
    let routes = load(&[(shared, "shared.yaml"), (orders, "orders.yaml")]).unwrap();
    let ctx = CamelContext::new();
    let err = ctx.add_routes(routes).await.unwrap_err().to_string();
    assert!(err.contains("shared.yaml:4:"), "{err}");
    assert!(!err.contains("orders.yaml:4:"), "{err}");
}

#[test]
fn a_file_loaded_alone_keeps_its_own_items() {
    let routes = camel_core::yaml::load_str(ORDERS, "orders.yaml");
    let err = routes.unwrap_err().to_string();
    assert!(err.contains("to-the-dead"), "{err}");
}
