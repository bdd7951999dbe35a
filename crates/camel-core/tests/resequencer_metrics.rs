//! The resequencer's metrics under their documented names and labels, read from a real
//! Prometheus recorder (its own test binary: the recorder is global to the process).

use std::sync::Arc;

use camel_api::{Exchange, ExchangePattern};
use camel_components::MockComponent;
use camel_core::CamelContext;

const ROUTE: &str = "- route:\n    id: reseq_metrics\n    from:\n      uri: direct:in\n      steps:\n        - resequence:\n            stream: {sequence: '${header.seq}', initial_sequence: 1, capacity: 100, reject_old: true, ignore_invalid: true}\n        - to: mock:out\n";

#[tokio::test]
async fn metrics_carry_the_documented_names_and_labels() {
    let handle = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .expect("the only recorder of this test binary");
    let ctx = CamelContext::new();
    ctx.add_component(Arc::new(MockComponent::new()));
    ctx.add_routes(camel_core::yaml::load_str(ROUTE, "m.yaml").unwrap())
        .await
        .unwrap();
    ctx.start().await.unwrap();
    for seq in [2, 1, 1] {
        // InOut: the resequencer answers at acceptance; each such exchange is counted
        // (the log warning itself is limited to one per 30 s).
        let mut ex = Exchange::new("x").with_header("seq", seq);
        ex.pattern = ExchangePattern::InOut;
        ctx.request("direct:in", ex).await.unwrap();
    }
    // Without a sequence: skipped under `ignore_invalid`, counted as `invalid`.
    ctx.request("direct:in", Exchange::new("no sequence"))
        .await
        .unwrap();
    ctx.stop().await;

    let text = handle.render();
    for expected in [
        "camel_resequencer_held{route=\"reseq_metrics\"}",
        "camel_resequencer_inout_warnings_total{route=\"reseq_metrics\"} 3",
        "camel_resequencer_post_ack_failures_total{route=\"reseq_metrics\"} 0",
        "camel_resequencer_dropped_total{route=\"reseq_metrics\",reason=\"invalid\"} 1",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
    }
    // The second 1 arrives after 1 went out: `old` under `reject_old`.
    let old = "camel_resequencer_dropped_total{route=\"reseq_metrics\",reason=\"old\"} 1";
    assert!(text.contains(old), "missing `{old}` in:\n{text}");
}
