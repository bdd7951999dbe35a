//! The resequencer's metrics under their documented names and labels, read from a real
//! Prometheus recorder (its own test binary: the recorder is global to the process).

use std::sync::Arc;

use camel_api::{Exchange, ExchangePattern};
use camel_components::MockComponent;
use camel_core::CamelContext;

const ROUTE: &str = "- route:\n    id: reseq_metrics\n    from:\n      uri: direct:in\n      steps:\n        - resequence:\n            stream: {sequence: '${header.seq}', initial_sequence: 1, capacity: 100, reject_old: true, ignore_invalid: true}\n        - to: mock:out\n";

/// A continuation far slower than the stop's deadline: what it holds at the stop is lost.
const STUCK: &str = "- route:\n    id: reseq_lost\n    from:\n      uri: direct:lost\n      steps:\n        - resequence:\n            stream: {sequence: '${header.seq}', initial_sequence: 1}\n        - delay: 60000\n        - to: mock:never\n";

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
    ctx.add_routes(camel_core::yaml::load_str(STUCK, "s.yaml").unwrap())
        .await
        .unwrap();
    ctx.start().await.unwrap();
    for (seq, accepted) in [(2, true), (1, true), (1, false)] {
        // InOut: the resequencer answers at acceptance; each accepted such exchange is
        // counted (the log warning itself is limited to one per 30 s). The second 1 is
        // below the watermark under `reject_old`: refused, not acknowledged.
        let mut ex = Exchange::new("x").with_header("seq", seq);
        ex.pattern = ExchangePattern::InOut;
        let answer = ctx.request("direct:in", ex).await;
        assert_eq!(answer.is_ok(), accepted, "{seq}: {answer:?}");
    }
    // Without a sequence: skipped under `ignore_invalid`, counted as `invalid`.
    ctx.request("direct:in", Exchange::new("no sequence"))
        .await
        .unwrap();
    for seq in 1..=3 {
        let ex = Exchange::new("x").with_header("seq", seq);
        ctx.request("direct:lost", ex).await.unwrap();
    }
    let failed_before = ctx.stats().failed();
    ctx.set_shutdown_timeout(std::time::Duration::from_millis(300));
    let report = ctx.stop().await;
    // The three acknowledged exchanges are reported, counted as failed, and measured.
    assert_eq!(report.lost, [("reseq_lost".to_string(), 3)], "{report:?}");
    assert_eq!(ctx.stats().failed() - failed_before, 3);
    assert!(
        report.elapsed < std::time::Duration::from_secs(5),
        "{report:?}"
    );

    let text = handle.render();
    for expected in [
        "camel_resequencer_lost_total{routeId=\"reseq_lost\",route=\"reseq_lost\"} 3",
        "camel_resequencer_lost_total{routeId=\"reseq_metrics\",route=\"reseq_metrics\"} 0",
        "camel_exchanges_failed_total{routeId=\"reseq_lost\"} 3",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
    }
    for expected in [
        "camel_resequencer_held{routeId=\"reseq_metrics\",route=\"reseq_metrics\"}",
        "camel_resequencer_inout_warnings_total{routeId=\"reseq_metrics\",route=\"reseq_metrics\"} 2",
        "camel_resequencer_post_ack_failures_total{routeId=\"reseq_metrics\",route=\"reseq_metrics\"} 0",
        "camel_resequencer_dropped_total{routeId=\"reseq_metrics\",route=\"reseq_metrics\",reason=\"invalid\"} 1",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
    }
    // The refusal is counted as such, never as an acknowledged exchange dropped as old.
    let rejected = "camel_resequencer_rejected_total{routeId=\"reseq_metrics\",route=\"reseq_metrics\",reason=\"old\"} 1";
    assert!(text.contains(rejected), "missing `{rejected}` in:\n{text}");
    assert!(
        !text.contains("camel_resequencer_dropped_total{routeId=\"reseq_metrics\",route=\"reseq_metrics\",reason=\"old\"}"),
        "{text}"
    );
}
