//! A route's exchange metrics under their documented names and labels, exact once the
//! route has stopped although they are batched per thread while it runs (ADR 0047). Its
//! own test binary: the Prometheus recorder is global to the process.

use camel_api::Exchange;
use camel_core::CamelContext;

/// Fails on a body that is not a number.
const ROUTE: &str = "- route:\n    id: counted\n    from:\n      uri: direct:counted\n      steps:\n        - transform: {simple: '${bodyAs(int)}'}\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn route_counts_are_exact_after_a_stop() {
    let handle = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .expect("the only recorder of this test binary");
    let ctx = CamelContext::new();
    ctx.add_routes(camel_core::yaml::load_str(ROUTE, "m.yaml").unwrap())
        .await
        .unwrap();
    ctx.start().await.unwrap();

    let text = handle.render();
    assert!(
        text.contains("camel_exchanges_total{routeId=\"counted\"} 0"),
        "registered at start, at zero:\n{text}"
    );

    // More than one batch, from several tasks (so from both worker threads), 7 failing.
    let callers: Vec<_> = (0..4)
        .map(|caller| {
            let ctx = ctx.clone();
            tokio::spawn(async move {
                for i in 0..300 {
                    let fail = caller == 0 && i < 7;
                    let ex = Exchange::new(if fail { "not a number" } else { "12" });
                    let result = ctx.request("direct:counted", ex).await;
                    assert_eq!(result.is_err(), fail, "{result:?}");
                }
            })
        })
        .collect();
    for caller in callers {
        caller.await.unwrap();
    }
    ctx.stop().await;

    let text = handle.render();
    for expected in [
        "camel_exchanges_total{routeId=\"counted\"} 1200",
        "camel_exchanges_failed_total{routeId=\"counted\"} 7",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
    }
}
