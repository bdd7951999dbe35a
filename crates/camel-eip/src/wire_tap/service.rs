//! The main-path side of the wire tap: copy, try to queue, carry on.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use camel_api::{
    BoxExpression, BoxProcessor, Exchange, ExchangeId, ExchangePattern, Process, ProcessorFuture,
    StepLifecycle,
};
use tokio::sync::mpsc;

use super::worker::{Delivery, TapLifecycle, Worker};
use crate::config::{DEFAULT_TAP_CONCURRENCY, DEFAULT_TAP_QUEUE};
use crate::dynamic::EndpointCache;
use crate::layer::StepLayer;

/// How a wire tap copies and queues.
#[derive(Clone, Debug)]
pub struct WireTapOptions {
    /// Tap a copy of the whole exchange (true) or a new exchange with the message only.
    pub copy: bool,
    /// Copies waiting for the tap's task, at most.
    pub queue_size: usize,
    /// Copies sent at once.
    pub concurrency: usize,
    /// Drop silently (debug log) a copy whose URI names no endpoint.
    pub ignore_invalid_endpoint: bool,
    /// The route, for metric labels.
    pub route_id: String,
    /// The step's path, for metric labels.
    pub step: String,
}

impl Default for WireTapOptions {
    fn default() -> Self {
        WireTapOptions {
            copy: true,
            queue_size: DEFAULT_TAP_QUEUE,
            concurrency: DEFAULT_TAP_CONCURRENCY,
            ignore_invalid_endpoint: false,
            route_id: String::new(),
            step: "wire_tap".into(),
        }
    }
}

/// What a wire tap did: copies dropped at a full queue, delivered, failed.
#[derive(Debug)]
pub struct TapCounters {
    dropped: AtomicU64,
    delivered: AtomicU64,
    failed: AtomicU64,
    dropped_metric: metrics::Counter,
    failed_metric: metrics::Counter,
}

impl TapCounters {
    fn new(route_id: &str, step: &str) -> Self {
        let labels = [
            ("routeId", route_id.to_string()),
            ("nodeId", step.to_string()),
        ];
        TapCounters {
            dropped: AtomicU64::new(0),
            delivered: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            dropped_metric: metrics::counter!("camel_wire_tap_dropped_total", &labels),
            failed_metric: metrics::counter!("camel_wire_tap_failed_total", &labels),
        }
    }

    /// Copies dropped because the queue was full or the tap had stopped.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Copies the tap endpoint accepted.
    pub fn delivered(&self) -> u64 {
        self.delivered.load(Ordering::Relaxed)
    }

    /// Copies that failed (preparation, URI or endpoint).
    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    pub(super) fn count_drop(&self) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
        self.dropped_metric.increment(1);
    }

    pub(super) fn count_delivered(&self) {
        self.delivered.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn count_failure(&self) {
        self.failed.fetch_add(1, Ordering::Relaxed);
        self.failed_metric.increment(1);
    }
}

/// The wire tap step.
#[derive(Clone, Debug)]
pub struct WireTap {
    queue: mpsc::Sender<Exchange>,
    shared: Arc<Shared>,
}

#[derive(Debug)]
pub(super) struct Shared {
    /// The lifecycle's name: unique within the route (the step's path).
    pub(super) name: String,
    pub(super) copy: bool,
    pub(super) counters: Arc<TapCounters>,
    /// Set by the lifecycle's shutdown: later copies are dropped and counted.
    pub(super) closed: AtomicBool,
    /// Set once the task was spawned: `worker`'s lock is taken only until then.
    pub(super) started: AtomicBool,
    /// The task, until it is spawned by the first exchange (taken then).
    pub(super) worker: Mutex<Option<Worker>>,
    pub(super) running: Mutex<Option<tokio::task::JoinHandle<()>>>,
    pub(super) stop: tokio_util::sync::CancellationToken,
}

impl WireTap {
    /// A wire tap sending to the URI `uri` evaluates to (on the tapped copy), through
    /// `cache`; `on_prepare` runs on each copy first.
    pub fn new(
        uri: BoxExpression,
        cache: Arc<EndpointCache<BoxProcessor>>,
        on_prepare: Option<BoxProcessor>,
        options: WireTapOptions,
    ) -> Self {
        let (queue, receiver) = mpsc::channel(options.queue_size.max(1));
        let counters = Arc::new(TapCounters::new(&options.route_id, &options.step));
        let delivery = Arc::new(Delivery {
            uri,
            cache,
            on_prepare,
            ignore_invalid: options.ignore_invalid_endpoint,
            counters: counters.clone(),
            route_id: options.route_id,
            memo: Default::default(),
        });
        let name = format!("wire_tap@{}", options.step);
        let stop = tokio_util::sync::CancellationToken::new();
        let worker = Worker {
            receiver,
            delivery,
            concurrency: options.concurrency.max(1),
            stop: stop.clone(),
        };
        WireTap {
            queue,
            shared: Arc::new(Shared {
                name,
                copy: options.copy,
                counters,
                closed: AtomicBool::new(false),
                started: AtomicBool::new(false),
                worker: Mutex::new(Some(worker)),
                running: Mutex::new(None),
                stop,
            }),
        }
    }

    /// The counters of this tap (shared by its clones).
    pub fn counters(&self) -> Arc<TapCounters> {
        self.shared.counters.clone()
    }

    /// The tap's background work, for the route: shutting it down drains the queue.
    pub fn lifecycle(&self) -> Arc<dyn StepLifecycle> {
        Arc::new(TapLifecycle {
            shared: self.shared.clone(),
        })
    }

    /// The wire tap as a route step.
    pub fn into_processor(self) -> BoxProcessor {
        BoxProcessor::new(self).named("wire_tap")
    }

    /// The wire tap as a tower layer: the inner service gets the exchange unchanged.
    pub fn layer(self) -> StepLayer {
        StepLayer::new(self.into_processor())
    }

    fn tap(&self, ex: &Exchange) {
        if self.shared.closed.load(Ordering::Acquire) {
            self.shared.counters.count_drop();
            return;
        }
        self.ensure_started();
        let mut copy = if self.shared.copy {
            ex.clone()
        } else {
            Exchange::from_message(ex.message.clone())
        };
        copy.id = ExchangeId::next();
        copy.pattern = ExchangePattern::InOnly;
        if self.queue.try_send(copy).is_err() {
            self.shared.counters.count_drop();
        }
    }

    /// Spawns the tap's task on the first exchange (a runtime is running then).
    fn ensure_started(&self) {
        if self.shared.started.load(Ordering::Acquire) {
            return;
        }
        let mut slot = self
            .shared
            .worker
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(worker) = slot.take() {
            let handle = tokio::spawn(worker.run());
            *self
                .shared
                .running
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(handle);
        }
        self.shared.started.store(true, Ordering::Release);
    }
}

impl Process for WireTap {
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        self.tap(&exchange);
        ProcessorFuture::ready(Ok(exchange))
    }

    fn process_in_place(
        &self,
        exchange: &mut Exchange,
    ) -> Option<Result<(), camel_api::CamelError>> {
        self.tap(exchange);
        Some(Ok(()))
    }
}
