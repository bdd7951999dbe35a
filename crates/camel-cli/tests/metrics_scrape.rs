//! A Prometheus scrape of `camel run --admin-addr` after a known run: five exchanges, two
//! of them failed, under Camel's metric names and the `routeId` label (ADR 0122); a
//! removed route's series leave the scrape.

mod support;

use support::admin_api::{admin_client, send, Camel, LIMIT};

/// Five ticks, each sent to a log endpoint; the first two fail their `validate`.
const ROUTES: &str = "- route:\n    id: five\n    from:\n      uri: timer:five\n      parameters: {period: 10, delay: 0, repeat_count: 5}\n      steps:\n        - to: 'log:sent?showBody=false'\n        - validate: {simple: '${header.CamelTimerCounter} > 2'}\n";

/// The value of the sample `series` (name and labels, exactly as rendered) in `text`.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

#[tokio::test]
async fn a_scrape_counts_the_run_under_camels_names() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, ROUTES).unwrap();
    let mut camel = Camel::start(&file);
    let base = camel.base_url().await;
    let http = admin_client();

    // The counts reach the recorder at the route's next flush (at most a second).
    let deadline = tokio::time::Instant::now() + LIMIT;
    let text = loop {
        let (code, body) = send(http.get(format!("{base}/metrics"))).await;
        assert_eq!(code, 200);
        let text = body.as_str().unwrap_or_default().to_string();
        if sample(&text, "camel_exchanges_total{routeId=\"five\"}") == Some(5.0) {
            break text;
        }
        assert!(tokio::time::Instant::now() < deadline, "{text}");
    };
    for (series, value) in [
        ("camel_exchanges_total{routeId=\"five\"}", 5.0),
        ("camel_exchanges_failed_total{routeId=\"five\"}", 2.0),
        ("camel_exchanges_succeeded_total{routeId=\"five\"}", 3.0),
        (
            "camel_exchanges_failures_handled_total{routeId=\"five\"}",
            0.0,
        ),
        (
            "camel_exchanges_external_redeliveries_total{routeId=\"five\"}",
            0.0,
        ),
        ("camel_exchanges_inflight{routeId=\"five\"}", 0.0),
        (
            "camel_route_policy_seconds_count{routeId=\"five\",failed=\"false\"}",
            3.0,
        ),
        (
            "camel_route_policy_seconds_count{routeId=\"five\",failed=\"true\"}",
            2.0,
        ),
        (
            "camel_route_policy_seconds_bucket{routeId=\"five\",failed=\"false\",le=\"+Inf\"}",
            3.0,
        ),
        (
            "camel_exchange_event_notifier_seconds_count{routeId=\"five\",endpointName=\"log:sent\",eventType=\"ExchangeSentEvent\",failed=\"false\"}",
            5.0,
        ),
        (
            "camel_exchange_event_notifier_seconds_count{routeId=\"five\",endpointName=\"log:sent\",eventType=\"ExchangeSentEvent\",failed=\"true\"}",
            0.0,
        ),
        ("camel_routes_running", 1.0),
        ("camel_routes_added", 1.0),
    ] {
        assert_eq!(sample(&text, series), Some(value), "{series} in:\n{text}");
    }
    assert!(
        sample(&text, "camel_route_uptime_seconds{routeId=\"five\"}").is_some(),
        "{text}"
    );
    assert!(
        text.contains(
            "camel_route_policy_seconds_bucket{routeId=\"five\",failed=\"false\",le=\"0.001\"}"
        ),
        "the duration buckets are Camel-sized:\n{text}"
    );
    assert!(
        !text.contains("camel_message_history_seconds"),
        "steps are timed only when asked:\n{text}"
    );

    let (code, _) = send(http.delete(format!("{base}/routes/five"))).await;
    assert_eq!(code, 200);
    let (_, body) = send(http.get(format!("{base}/metrics"))).await;
    let text = body.as_str().unwrap_or_default().to_string();
    assert!(
        !text.contains("routeId=\"five\""),
        "a removed route's series leave:\n{text}"
    );
    assert_eq!(sample(&text, "camel_routes_added"), Some(0.0), "{text}");
    let _ = camel.child.kill();
}

/// Camel's `camel.metrics.enableMessageHistory=true` (here in the `application.properties`
/// beside the route file) times every step, nested ones too, by `routeId` and `nodeId`: the
/// step's `id`, or its path in the route.
#[tokio::test]
async fn message_history_times_each_step_when_the_properties_ask() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(
        &file,
        "- route:\n    id: steps\n    from:\n      uri: timer:steps\n      parameters: {period: 10, delay: 0, repeat_count: 4}\n      steps:\n        - setBody: {id: body, constant: hi}\n        - filter:\n            simple: '${header.CamelTimerCounter} > 1'\n            steps:\n              - validate: {id: checked, simple: '${header.CamelTimerCounter} > 2'}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("application.properties"),
        "camel.metrics.enableMessageHistory = true\n",
    )
    .unwrap();
    let mut camel = Camel::start_in(&file, dir.path());
    let base = camel.base_url().await;
    let http = admin_client();

    let deadline = tokio::time::Instant::now() + LIMIT;
    let text = loop {
        let (_, body) = send(http.get(format!("{base}/metrics"))).await;
        let text = body.as_str().unwrap_or_default().to_string();
        if sample(&text, "camel_exchanges_total{routeId=\"steps\"}") == Some(4.0) {
            break text;
        }
        assert!(tokio::time::Instant::now() < deadline, "{text}");
    };
    // Four ticks reach the filter; the three it lets through reach `checked`, which
    // fails the second tick: the filter fails with it.
    let filter = |failed: &str| {
        text.lines()
            .find(|l| {
                l.starts_with("camel_message_history_seconds_count{routeId=\"steps\",nodeId=")
                    && l.contains(".filter\",")
                    && l.contains(&format!("failed=\"{failed}\""))
            })
            .unwrap_or_else(|| panic!("the filter step, named by its path:\n{text}"))
            .rsplit(' ')
            .next()
            .and_then(|v| v.parse::<f64>().ok())
    };
    assert_eq!(filter("false"), Some(3.0), "{text}");
    assert_eq!(filter("true"), Some(1.0), "{text}");
    for (series, value) in [
        (
            "camel_message_history_seconds_count{routeId=\"steps\",nodeId=\"body\",failed=\"false\"}",
            4.0,
        ),
        (
            "camel_message_history_seconds_count{routeId=\"steps\",nodeId=\"checked\",failed=\"false\"}",
            2.0,
        ),
        (
            "camel_message_history_seconds_count{routeId=\"steps\",nodeId=\"checked\",failed=\"true\"}",
            1.0,
        ),
    ] {
        assert_eq!(sample(&text, series), Some(value), "{series} in:\n{text}");
    }
    assert!(
        text.contains("camel_message_history_seconds_bucket{routeId=\"steps\",nodeId=\"body\",failed=\"false\",le=\"0.001\"}"),
        "the step buckets are the route's:\n{text}"
    );
    let _ = camel.child.kill();
}
