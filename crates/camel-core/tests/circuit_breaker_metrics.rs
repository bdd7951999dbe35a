//! The circuit breaker's state gauge under its documented name and labels, read from a
//! real Prometheus recorder (its own test binary: the recorder is global to the process).

use std::time::Duration;

use camel_api::Exchange;
use camel_core::CamelContext;

const ROUTE: &str = r#"
- route:
    id: shop
    from:
      uri: direct:in
      steps:
        - circuitBreaker:
            id: inventory
            resilience4jConfiguration:
              slidingWindowSize: 1
              minimumNumberOfCalls: 1
              waitDurationInOpenState: 5
              permittedNumberOfCallsInHalfOpenState: 2
            steps:
              - throwException: {exceptionType: java.io.IOException, message: down}
            onFallback:
              steps: [{setBody: {constant: cached}}]
        - circuitBreaker:
            steps: [{setBody: {constant: fine}}]
"#;

#[tokio::test(start_paused = true)]
async fn state_gauge_follows_the_circuit() {
    let handle = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .expect("the only recorder of this test binary");
    let ctx = CamelContext::new();
    ctx.add_routes(camel_core::yaml::load_str(ROUTE, "m.yaml").unwrap())
        .await
        .unwrap();
    ctx.start().await.unwrap();
    let state = || {
        let text = handle.render();
        let line = "camel_circuit_breaker_state{routeId=\"shop\",nodeId=\"inventory\"} ";
        text.lines()
            .find_map(|l| l.strip_prefix(line))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no `{line}` in:\n{text}"))
    };
    assert_eq!(state(), "0");
    // A breaker without an id is labelled by its path in the route.
    let unnamed =
        "camel_circuit_breaker_state{routeId=\"shop\",nodeId=\"steps[1].circuit_breaker\"} 0";
    assert!(handle.render().contains(unnamed), "{}", handle.render());

    ctx.request("direct:in", Exchange::new("x")).await.unwrap();
    assert_eq!(state(), "1", "open after one failure");
    tokio::time::advance(Duration::from_secs(5)).await;
    ctx.request("direct:in", Exchange::new("x")).await.unwrap();
    assert_eq!(state(), "2", "half open: one of two trial calls made");
    ctx.request("direct:in", Exchange::new("x")).await.unwrap();
    assert_eq!(state(), "1", "both trial calls failed");
    ctx.stop().await;
}
