//! A route's metrics under the names Camel's micrometer route policy gives them, as
//! Prometheus writes them, all labelled `routeId` (ADR 0122).
//!
//! The exchange counts come from the route's batched [`RouteCounters`](camel_api::RouteCounters)
//! (ADR 0047); the in-flight and uptime gauges are set by the route's flush ticker; the
//! duration histogram, the handled-failure and the external-redelivery counters need one
//! look at each finished exchange, so they are kept only when [`set_exchange_timing`]
//! turned them on (the `camel` binary does when it serves `/metrics`). Without it a
//! route's pipeline runs unwrapped: nothing is added per exchange.
//!
//! The `metrics` facade cannot remove a series. When a route is removed its handles are
//! zeroed and its id is listed in [`removed_routes`], which a renderer uses to leave the
//! route's series out of a scrape (the `camel` binary's does); a route added again under
//! the same id is taken off the list and counts from zero.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use camel_api::{BoxProcessor, CamelError, CountSink, Exchange, Process, ProcessorFuture};
use metrics::{Counter, Gauge, Histogram};

/// Every exchange a route ran (counter).
pub const EXCHANGES_TOTAL: &str = "camel_exchanges_total";
/// Exchanges that ended without an error (counter).
pub const EXCHANGES_SUCCEEDED: &str = "camel_exchanges_succeeded_total";
/// Exchanges that ended with an error (counter).
pub const EXCHANGES_FAILED: &str = "camel_exchanges_failed_total";
/// Exchanges in the route now (gauge).
pub const EXCHANGES_INFLIGHT: &str = "camel_exchanges_inflight";
/// Exchanges whose source had delivered them before (counter).
pub const EXCHANGES_EXTERNAL_REDELIVERIES: &str = "camel_exchanges_external_redeliveries_total";
/// Exchanges that failed and whose failure an error handler handled (counter).
pub const EXCHANGES_FAILURES_HANDLED: &str = "camel_exchanges_failures_handled_total";
/// How long exchanges took through the route, by `failed` (histogram, seconds).
pub const ROUTE_POLICY_SECONDS: &str = "camel_route_policy_seconds";
/// Seconds since the route last started; 0 while stopped (gauge).
pub const ROUTE_UPTIME_SECONDS: &str = "camel_route_uptime_seconds";
/// Routes of the process that are running (gauge).
pub const ROUTES_RUNNING: &str = "camel_routes_running";
/// Routes of the process, running or not (gauge).
pub const ROUTES_ADDED: &str = "camel_routes_added";

/// Histogram: how long each send of a route's `to` step took, by `routeId`,
/// `endpointName` (the URI without its query, credentials removed), `eventType`
/// (`ExchangeSentEvent`, as Camel's exchange event notifier names it) and `failed`.
/// Only while exchange timing is on.
pub const EXCHANGE_EVENT_NOTIFIER_SECONDS: &str = "camel_exchange_event_notifier_seconds";

/// Histogram: how long each step of a route took, by `routeId`, `nodeId` (the step's `id`,
/// or its path in the route) and `failed`, as Camel's micrometer message history names it.
/// Only while step timing is on ([`set_step_timing`]).
pub const MESSAGE_HISTORY_SECONDS: &str = "camel_message_history_seconds";

/// The label every route-scoped metric carries: the route's id, as Camel's tags name it.
pub const ROUTE_ID_LABEL: &str = "routeId";

/// The exchange property a consumer sets (to `true`) on an exchange its broker had
/// delivered before; counted in [`EXCHANGES_EXTERNAL_REDELIVERIES`].
pub const EXTERNAL_REDELIVERED: &str = camel_api::error_kind::EXTERNAL_REDELIVERED;

/// The upper bounds of [`ROUTE_POLICY_SECONDS`]'s buckets, from 1 ms to 1 min.
pub const DURATION_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

static TIMING: AtomicBool = AtomicBool::new(false);

/// Turns on (or off) the per-exchange metrics — the duration histogram, handled
/// failures, external redeliveries — for routes started afterwards. Off by default: a
/// process that installs no metrics recorder pays nothing for them.
pub fn set_exchange_timing(on: bool) {
    TIMING.store(on, Ordering::Relaxed);
}

/// True when routes started now keep the per-exchange metrics.
pub fn exchange_timing() -> bool {
    TIMING.load(Ordering::Relaxed)
}

static STEP_TIMING: AtomicBool = AtomicBool::new(false);

/// Turns on (or off) the per-step duration histogram ([`MESSAGE_HISTORY_SECONDS`]) for
/// routes compiled afterwards: Camel's `camel.metrics.enableMessageHistory`. Off by
/// default; each step of a route compiled while it is on is wrapped in a timer, which
/// costs two clock reads and a histogram record per step per exchange.
pub fn set_step_timing(on: bool) {
    STEP_TIMING.store(on, Ordering::Relaxed);
}

/// True when routes compiled now time each step.
pub fn step_timing() -> bool {
    STEP_TIMING.load(Ordering::Relaxed)
}

static REMOVED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Ids of routes removed from a context (and not added again): a renderer leaves series
/// labelled with them out.
pub fn removed_routes() -> Vec<String> {
    lock_removed().iter().cloned().collect()
}

fn lock_removed() -> std::sync::MutexGuard<'static, BTreeSet<String>> {
    REMOVED.lock().unwrap_or_else(|p| p.into_inner())
}

/// `n` routes joined a context.
pub(crate) fn routes_added(n: usize) {
    metrics::gauge!(ROUTES_ADDED).increment(n as f64);
}

/// The handles of one route's metrics, made once when the route is added.
#[derive(Clone)]
pub(crate) struct RouteMetrics(Arc<Handles>);

struct Handles {
    total: Counter,
    succeeded: Counter,
    failed: Counter,
    inflight: Gauge,
    uptime: Gauge,
    external_redeliveries: Counter,
    failures_handled: Counter,
    took_ok: Histogram,
    took_failed: Histogram,
}

impl RouteMetrics {
    /// Registers every series of `route_id` (they show from the start, at zero).
    pub(crate) fn register(route_id: &str) -> Self {
        lock_removed().remove(route_id);
        let id = route_id.to_string();
        let labels = [(ROUTE_ID_LABEL, id.clone())];
        let by_outcome = |failed: &'static str| metrics::histogram!(ROUTE_POLICY_SECONDS, ROUTE_ID_LABEL => id.clone(), "failed" => failed);
        let handles = Handles {
            total: metrics::counter!(EXCHANGES_TOTAL, &labels),
            succeeded: metrics::counter!(EXCHANGES_SUCCEEDED, &labels),
            failed: metrics::counter!(EXCHANGES_FAILED, &labels),
            inflight: metrics::gauge!(EXCHANGES_INFLIGHT, &labels),
            uptime: metrics::gauge!(ROUTE_UPTIME_SECONDS, &labels),
            external_redeliveries: metrics::counter!(EXCHANGES_EXTERNAL_REDELIVERIES, &labels),
            failures_handled: metrics::counter!(EXCHANGES_FAILURES_HANDLED, &labels),
            took_ok: by_outcome("false"),
            took_failed: by_outcome("true"),
        };
        // A route added again under an id used before counts from zero.
        for c in [
            &handles.total,
            &handles.succeeded,
            &handles.failed,
            &handles.external_redeliveries,
            &handles.failures_handled,
        ] {
            c.absolute(0);
        }
        handles.inflight.set(0.0);
        handles.uptime.set(0.0);
        RouteMetrics(Arc::new(handles))
    }

    /// The route was removed: its series read zero and leave the scrape.
    pub(crate) fn retire(&self, route_id: &str) {
        self.0.inflight.set(0.0);
        self.0.uptime.set(0.0);
        metrics::gauge!(ROUTES_ADDED).decrement(1.0);
        lock_removed().insert(route_id.to_string());
    }

    /// Where the route's batched counts go.
    pub(crate) fn sink(&self) -> impl CountSink {
        Sink(self.clone())
    }

    /// Counts `n` exchanges acknowledged and then lost as failed.
    pub(crate) fn lost(&self, n: u64) {
        self.0.failed.increment(n);
    }

    /// Sets the gauges the flush ticker keeps.
    pub(crate) fn running(&self, inflight: usize, uptime: std::time::Duration) {
        self.0.inflight.set(inflight as f64);
        self.0.uptime.set(uptime.as_secs_f64());
    }

    /// The route started (`true`) or stopped.
    pub(crate) fn started(&self, started: bool) {
        let running = metrics::gauge!(ROUTES_RUNNING);
        if started {
            running.increment(1.0);
        } else {
            running.decrement(1.0);
            self.running(0, std::time::Duration::ZERO);
        }
    }

    /// `pipeline`, wrapped to time each exchange when [`exchange_timing`] is on.
    pub(crate) fn wrap(&self, pipeline: BoxProcessor) -> BoxProcessor {
        if exchange_timing() {
            BoxProcessor::new(Timed {
                inner: pipeline,
                metrics: self.clone(),
            })
        } else {
            pipeline
        }
    }
}

impl Finish for RouteMetrics {
    fn finished(&self, started: std::time::Instant, result: &Result<Exchange, CamelError>) {
        let took = started.elapsed().as_secs_f64();
        match result {
            Ok(ex) => {
                self.0.took_ok.record(took);
                if is_true(ex.property(camel_api::error_kind::ERROR_HANDLER_HANDLED)) {
                    self.0.failures_handled.increment(1);
                }
                if is_true(ex.property(EXTERNAL_REDELIVERED)) {
                    self.0.external_redeliveries.increment(1);
                }
            }
            Err(_) => self.0.took_failed.record(took),
        }
    }
}

fn is_true(v: Option<&camel_api::Value>) -> bool {
    matches!(v, Some(camel_api::Value::Bool(true)))
}

impl std::fmt::Debug for RouteMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RouteMetrics")
    }
}

#[derive(Debug)]
struct Sink(RouteMetrics);

impl CountSink for Sink {
    fn add(&self, exchanges: u64, failures: u64) {
        let h = &self.0 .0;
        h.total.increment(exchanges);
        h.succeeded.increment(exchanges.saturating_sub(failures));
        if failures > 0 {
            h.failed.increment(failures);
        }
    }
}

/// What a [`Timed`] processor does with each finished exchange.
trait Finish: Clone + Send + Sync + 'static {
    fn finished(&self, started: std::time::Instant, result: &Result<Exchange, CamelError>);
}

/// A processor that times each exchange it runs (a route pipeline, a `to` step); made only
/// when exchange timing is on.
struct Timed<F> {
    inner: BoxProcessor,
    metrics: F,
}

impl<F: Finish> Process for Timed<F> {
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        let started = std::time::Instant::now();
        match self.inner.process(exchange) {
            ProcessorFuture::Ready(Some(result)) => {
                self.metrics.finished(started, &result);
                ProcessorFuture::ready(result)
            }
            ProcessorFuture::Ready(None) => ProcessorFuture::Ready(None),
            ProcessorFuture::Pending(pending) => {
                let metrics = self.metrics.clone();
                ProcessorFuture::boxed(async move {
                    let result = pending.await;
                    metrics.finished(started, &result);
                    result
                })
            }
        }
    }
}

/// The two series (by outcome) of one timed `to` step or one timed step.
#[derive(Clone)]
struct SendMetrics {
    ok: Histogram,
    failed: Histogram,
}

impl Finish for SendMetrics {
    fn finished(&self, started: std::time::Instant, result: &Result<Exchange, CamelError>) {
        let took = started.elapsed().as_secs_f64();
        match result {
            Ok(_) => self.ok.record(took),
            Err(_) => self.failed.record(took),
        }
    }
}

/// `producer` (the processor of a `to` step of `route_id` sending to `uri`), timed into
/// [`EXCHANGE_EVENT_NOTIFIER_SECONDS`] when exchange timing is on; as it is otherwise.
pub(crate) fn timed_send(producer: BoxProcessor, route_id: &str, uri: &str) -> BoxProcessor {
    if !exchange_timing() {
        return producer;
    }
    // The query is left out: it can be long and varied, and it is where options and
    // secrets sit; the path names the destination.
    let redacted = camel_api::redact_url(uri).to_string();
    let endpoint = redacted.split('?').next().unwrap_or_default().to_string();
    let series = |failed: &'static str| {
        metrics::histogram!(
            EXCHANGE_EVENT_NOTIFIER_SECONDS,
            ROUTE_ID_LABEL => route_id.to_string(),
            "endpointName" => endpoint.clone(),
            "eventType" => "ExchangeSentEvent",
            "failed" => failed
        )
    };
    BoxProcessor::new(Timed {
        inner: producer,
        metrics: SendMetrics {
            ok: series("false"),
            failed: series("true"),
        },
    })
}

/// `step` (the processor of the step `node_id` of `route_id`), timed into
/// [`MESSAGE_HISTORY_SECONDS`] when step timing is on; as it is otherwise. A step's time
/// includes the steps nested in it (a `choice` includes its branch).
pub(crate) fn timed_step(step: BoxProcessor, route_id: &str, node_id: &str) -> BoxProcessor {
    if !step_timing() {
        return step;
    }
    let series = |failed: &'static str| {
        metrics::histogram!(
            MESSAGE_HISTORY_SECONDS,
            ROUTE_ID_LABEL => route_id.to_string(),
            "nodeId" => node_id.to_string(),
            "failed" => failed
        )
    };
    BoxProcessor::new(Timed {
        inner: step,
        metrics: SendMetrics {
            ok: series("false"),
            failed: series("true"),
        },
    })
}
