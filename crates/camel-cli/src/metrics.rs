//! The process's metrics recorder: two Prometheus recorders behind one router.
//!
//! The `metrics` facade cannot remove a series, and the Prometheus exporter's idle timeout
//! applies to every series of a kind. A destination's batcher stops when idle and a new
//! one starts with the next delivery, so without expiry every queue or topic a process
//! ever sent to would keep its `camel_sink_batch_*` series forever (dynamic destinations
//! make that unbounded). Routes, outboxes and resequencers, on the other hand, hold their
//! metric handles for their whole life: expiring those would lose them for good (a handle
//! keeps writing to a series the exporter no longer renders). So `camel_sink_batch_*`
//! metrics go to a recorder of their own, with an idle timeout, and everything else to one
//! without. `/metrics` renders both. See `adr/0041-sink-series-expire.md`.
//!
//! A removed route's series cannot leave the recorder either: its handles are zeroed and
//! [`Exporter::render`] leaves out every series labelled with a removed route's id
//! (`adr/0122-camel-metric-names-and-the-routeid-label.md`).

use std::net::SocketAddr;
use std::time::Duration;

use camel_core::context::metrics as route_metrics;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use metrics_util::layers::RouterBuilder;
use metrics_util::MetricKindMask;

/// Metric names routed to the expiring recorder: a batcher's per-destination series. The
/// process-wide `camel_sink_batchers` gauge does not match (it has no trailing `_`).
pub(crate) const EXPIRING_PREFIX: &str = "camel_sink_batch_";

/// How often histograms are summarised and idle series dropped, as the exporter's own
/// listener does.
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// Renders what the installed recorders hold.
#[derive(Clone, Debug)]
pub(crate) struct Exporter {
    main: PrometheusHandle,
    sinks: PrometheusHandle,
}

impl Exporter {
    /// Builds the two recorders; `sink_expiry` is how long a sink series may stay unchanged
    /// before it is dropped (`None` keeps it forever). Returns the exporter and the router
    /// to install (or to use as a local recorder in tests).
    pub(crate) fn build(sink_expiry: Option<Duration>) -> (Exporter, metrics_util::layers::Router) {
        let main = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full(route_metrics::ROUTE_POLICY_SECONDS.to_string()),
                route_metrics::DURATION_BUCKETS,
            )
            .expect("the duration buckets are not empty")
            .set_buckets_for_metric(
                Matcher::Full(route_metrics::EXCHANGE_EVENT_NOTIFIER_SECONDS.to_string()),
                route_metrics::DURATION_BUCKETS,
            )
            .expect("the duration buckets are not empty")
            .set_buckets_for_metric(
                Matcher::Full(route_metrics::MESSAGE_HISTORY_SECONDS.to_string()),
                route_metrics::DURATION_BUCKETS,
            )
            .expect("the duration buckets are not empty")
            .build_recorder();
        let sinks = PrometheusBuilder::new()
            .idle_timeout(MetricKindMask::ALL, sink_expiry)
            .build_recorder();
        let exporter = Exporter {
            main: main.handle(),
            sinks: sinks.handle(),
        };
        let mut router = RouterBuilder::from_recorder(main);
        router.add_route(MetricKindMask::ALL, EXPIRING_PREFIX, sinks);
        (exporter, router.build())
    }

    /// Builds and installs the recorders as the process's global recorder, and starts
    /// their upkeep on the current runtime.
    pub(crate) fn install(sink_expiry: Option<Duration>) -> Result<Exporter, String> {
        let (exporter, router) = Exporter::build(sink_expiry);
        metrics::set_global_recorder(router).map_err(|e| e.to_string())?;
        // Someone reads the metrics now: routes time their exchanges.
        route_metrics::set_exchange_timing(true);
        let upkeep = exporter.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(UPKEEP_EVERY);
            loop {
                every.tick().await;
                upkeep.run_upkeep();
            }
        });
        Ok(exporter)
    }

    fn run_upkeep(&self) {
        self.main.run_upkeep();
        self.sinks.run_upkeep();
    }

    /// The Prometheus text of both recorders (their metric names are disjoint), without
    /// the series of removed routes.
    pub(crate) fn render(&self) -> String {
        let mut text = self.main.render();
        text.push_str(&self.sinks.render());
        without_routes(text, &route_metrics::removed_routes())
    }
}

/// `text` without the sample lines labelled with one of `removed` as their `routeId`.
fn without_routes(text: String, removed: &[String]) -> String {
    if removed.is_empty() {
        return text;
    }
    let labels: Vec<String> = removed
        .iter()
        .map(|id| format!("{}=\"{}\"", route_metrics::ROUTE_ID_LABEL, escaped(id)))
        .collect();
    let gone = |line: &str| {
        !line.starts_with('#')
            && labels.iter().any(|l| {
                line.match_indices(l.as_str()).any(|(at, _)| {
                    matches!(line.as_bytes().get(at.wrapping_sub(1)), Some(b'{' | b','))
                })
            })
    };
    let mut out = String::with_capacity(text.len());
    for line in text.lines().filter(|l| !gone(l)) {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A label value as the exporter writes it.
fn escaped(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Serves `/metrics` (any path answers, as the exporter's own listener did) on `addr`.
pub(crate) async fn serve(addr: SocketAddr, exporter: Exporter) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let app = axum::Router::new().fallback(move || {
        let exporter = exporter.clone();
        async move { response(&exporter) }
    });
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::warn!(error = %e, "the metrics listener stopped");
        }
    });
    Ok(bound)
}

/// `/metrics` as an HTTP response.
pub(crate) fn response(exporter: &Exporter) -> axum::response::Response {
    use axum::response::IntoResponse;
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4",
        )],
        exporter.render(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink_series(text: &str) -> bool {
        text.contains("camel_sink_batch_queued_entries{sink=\"nats:orders\"")
    }

    #[test]
    fn sink_series_expire_and_the_rest_stays() {
        let (exporter, router) = Exporter::build(Some(Duration::from_millis(200)));
        let started = std::time::Instant::now();
        metrics::with_local_recorder(&router, || {
            metrics::gauge!("camel_sink_batch_queued_entries", "sink" => "nats:orders").set(3.0);
            metrics::gauge!("camel_sink_batchers").set(1.0);
            metrics::counter!("camel_exchanges_total", "routeId" => "a").increment(1);
        });
        let text = exporter.render();
        assert!(sink_series(&text), "{text}");
        assert!(
            text.contains("camel_exchanges_total{routeId=\"a\"} 1"),
            "{text}"
        );
        // The exporter's clock is the real one: look until the series has aged out.
        let text = loop {
            let text = exporter.render();
            if !sink_series(&text) || started.elapsed() > Duration::from_secs(10) {
                break text;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(!sink_series(&text), "still there after 10 s: {text}");
        assert!(started.elapsed() >= Duration::from_millis(200));
        assert!(
            text.contains("camel_exchanges_total{routeId=\"a\"} 1"),
            "{text}"
        );
        assert!(text.contains("camel_sink_batchers 1"), "{text}");
    }

    #[test]
    fn removed_routes_leave_the_text() {
        let text = "# TYPE camel_exchanges_total counter\ncamel_exchanges_total{routeId=\"a\"} 1\ncamel_exchanges_total{routeId=\"ab\"} 2\ncamel_route_policy_seconds_bucket{routeId=\"a\",failed=\"false\",le=\"0.1\"} 1\nx{other_routeId=\"a\"} 3\n";
        let kept = without_routes(text.to_string(), &["a".to_string()]);
        assert_eq!(
            kept,
            "# TYPE camel_exchanges_total counter\ncamel_exchanges_total{routeId=\"ab\"} 2\nx{other_routeId=\"a\"} 3\n"
        );
    }

    #[test]
    fn without_expiry_sink_series_stay() {
        let (exporter, router) = Exporter::build(None);
        metrics::with_local_recorder(&router, || {
            metrics::histogram!("camel_sink_batch_flush_entries", "sink" => "nats:orders")
                .record(10.0);
        });
        exporter.run_upkeep();
        let text = exporter.render();
        assert!(
            text.contains("camel_sink_batch_flush_entries_count{sink=\"nats:orders\"} 1"),
            "{text}"
        );
    }
}
