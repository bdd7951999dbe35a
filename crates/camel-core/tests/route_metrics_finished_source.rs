//! A route whose source has finished (a timer's `repeat_count`) stays started, and its
//! counts still reach the metrics without a stop. Its own test binary: the Prometheus
//! recorder is global to the process.

use std::time::Duration;

use camel_core::CamelContext;

const ROUTE: &str = "- route:\n    id: finite\n    from:\n      uri: timer:finite?period=10&repeatCount=3\n      steps:\n        - set_body: {constant: tick}\n";

#[tokio::test(start_paused = true)]
async fn counts_of_a_finished_source_are_flushed_while_the_route_runs() {
    let handle = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .expect("the only recorder of this test binary");
    let ctx = CamelContext::new();
    ctx.add_routes(camel_core::yaml::load_str(ROUTE, "m.yaml").unwrap())
        .await
        .unwrap();
    ctx.start().await.unwrap();
    // Paused time: the three firings and several flush periods pass at once.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let text = handle.render();
    assert!(
        text.contains("camel_exchanges_total{routeId=\"finite\"} 3"),
        "the three exchanges are counted while the route still runs:\n{text}"
    );
    ctx.stop().await;
}
