use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use async_trait::async_trait;
use tokio::sync::{watch, Notify};
use tokio_util::sync::CancellationToken;

use crate::{BoxProcessor, CamelError, Exchange, ProcessorFuture};

/// The source of a route: polls a directory, fires a timer, listens on a queue.
///
/// `run` is spawned by the route controller and hands each exchange to
/// [`ConsumerContext::send`]. It returns when `ctx.cancelled()` fires (or on a fatal error).
#[async_trait]
pub trait Consumer: Send + fmt::Debug + 'static {
    /// Produces exchanges until cancelled.
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError>;
}

/// Counts of completed and failed exchanges, shared by every route of a context.
///
/// Recording is two relaxed atomic adds; a wake-up is paid only while somebody waits in
/// [`ExchangeStats::wait_for`].
#[derive(Debug, Default)]
pub struct ExchangeStats {
    completed: AtomicU64,
    failed: AtomicU64,
    waiters: AtomicUsize,
    reached: Notify,
}

impl ExchangeStats {
    /// New counters.
    pub fn new() -> Arc<Self> {
        Arc::new(ExchangeStats::default())
    }

    /// Exchanges that completed (successfully or not).
    pub fn completed(&self) -> u64 {
        self.completed.load(Ordering::Relaxed)
    }

    /// Exchanges that ended with an error.
    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    /// Records one finished exchange.
    pub fn record(&self, ok: bool) {
        if !ok {
            self.failed.fetch_add(1, Ordering::Relaxed);
        }
        self.completed.fetch_add(1, Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) > 0 {
            self.reached.notify_waiters();
        }
    }

    /// Resolves once `n` exchanges have completed in total.
    pub async fn wait_for(&self, n: u64) {
        struct Waiting<'a>(&'a AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let _waiting = Waiting(&self.waiters);
        loop {
            let notified = self.reached.notified();
            if self.completed.load(Ordering::SeqCst) >= n {
                return;
            }
            notified.await;
        }
    }
}

/// The intake gate of a route: open, paused (callers wait) or closed (callers are refused);
/// it also counts the exchanges in flight so a stop or swap can wait for them.
#[derive(Debug)]
pub struct RouteGate {
    open: AtomicBool,
    closed: AtomicBool,
    state: watch::Sender<bool>,
    inflight: AtomicUsize,
    /// Tasks waiting in `drained`; the last exchange out only pays for a wake-up when
    /// someone is waiting.
    drainers: AtomicUsize,
    idle: Notify,
}

impl Default for RouteGate {
    fn default() -> Self {
        RouteGate {
            open: AtomicBool::new(true),
            closed: AtomicBool::new(false),
            state: watch::Sender::new(true),
            inflight: AtomicUsize::new(0),
            drainers: AtomicUsize::new(0),
            idle: Notify::new(),
        }
    }
}

impl RouteGate {
    /// Pauses intake: new exchanges wait; those in flight go on.
    pub fn pause(&self) {
        self.open.store(false, Ordering::SeqCst);
        self.state.send_replace(false);
    }

    /// Resumes intake.
    pub fn resume(&self) {
        self.open.store(true, Ordering::SeqCst);
        self.state.send_replace(true);
    }

    /// Closes intake for good: waiting and new callers get [`CamelError::Stopping`].
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.pause();
    }

    /// True while intake is paused or closed.
    pub fn is_paused(&self) -> bool {
        !self.open.load(Ordering::SeqCst)
    }

    /// Exchanges currently in flight.
    pub fn inflight(&self) -> usize {
        self.inflight.load(Ordering::SeqCst)
    }

    /// Resolves when no exchange is in flight.
    pub async fn drained(&self) {
        struct Waiting<'a>(&'a AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.drainers.fetch_add(1, Ordering::SeqCst);
        let _waiting = Waiting(&self.drainers);
        loop {
            let notified = self.idle.notified();
            if self.inflight() == 0 {
                return;
            }
            notified.await;
        }
    }

    /// Enters without waiting: `None` when the gate is paused or closed.
    fn try_enter(&self) -> Option<InflightGuard<'_>> {
        if self.closed.load(Ordering::SeqCst) || !self.open.load(Ordering::SeqCst) {
            return None;
        }
        self.inflight.fetch_add(1, Ordering::SeqCst);
        // Re-check: a pause that raced with us must see this exchange as in flight or see
        // it waiting, never neither.
        if self.open.load(Ordering::SeqCst) {
            Some(InflightGuard(self))
        } else {
            drop(InflightGuard(self));
            None
        }
    }

    async fn enter(&self) -> Result<InflightGuard<'_>, CamelError> {
        loop {
            if self.closed.load(Ordering::SeqCst) {
                return Err(CamelError::Stopping("the route is stopped".into()));
            }
            if let Some(guard) = self.try_enter() {
                return Ok(guard);
            }
            let mut rx = self.state.subscribe();
            if !*rx.borrow_and_update() && rx.changed().await.is_err() {
                return Err(CamelError::Stopping("the route is gone".into()));
            }
        }
    }

    fn leave(&self) {
        if self.inflight.fetch_sub(1, Ordering::SeqCst) == 1
            && self.drainers.load(Ordering::SeqCst) > 0
        {
            self.idle.notify_waiters();
        }
    }
}

/// An in-flight exchange that outlives the borrow of its gate (a suspended pipeline).
struct OwnedInflight(Arc<RouteGate>);

impl OwnedInflight {
    /// Counts one more exchange in flight on `gate` (the caller already holds one, so the
    /// count never touches zero in the hand-over).
    fn new(gate: &Arc<RouteGate>) -> Self {
        gate.inflight.fetch_add(1, Ordering::SeqCst);
        OwnedInflight(gate.clone())
    }
}

impl Drop for OwnedInflight {
    fn drop(&mut self) {
        self.0.leave();
    }
}

struct InflightGuard<'a>(&'a RouteGate);

impl Drop for InflightGuard<'_> {
    fn drop(&mut self) {
        self.0.leave();
    }
}

/// What a consumer holds: the route's current pipeline, its gate and its cancellation.
///
/// Cheap to clone. `send` reads the current pipeline per exchange, so a hot swap is one
/// atomic store and exchanges already in flight finish on the pipeline they started on.
#[derive(Clone)]
pub struct ConsumerContext {
    inner: Arc<ContextInner>,
}

struct ContextInner {
    route_id: Arc<str>,
    pipeline: Arc<ArcSwap<BoxProcessor>>,
    gate: Arc<RouteGate>,
    cancel: CancellationToken,
    stats: Arc<ExchangeStats>,
    exchanges: metrics::Counter,
    failures: metrics::Counter,
    health: Arc<crate::ConsumerHealth>,
}

impl fmt::Debug for ConsumerContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConsumerContext")
            .field("route_id", &self.inner.route_id)
            .finish_non_exhaustive()
    }
}

impl ConsumerContext {
    /// Builds a context; the route controller does this, tests may too.
    pub fn new(
        route_id: Arc<str>,
        pipeline: Arc<ArcSwap<BoxProcessor>>,
        gate: Arc<RouteGate>,
        cancel: CancellationToken,
        stats: Arc<ExchangeStats>,
    ) -> Self {
        let exchanges =
            metrics::counter!("camel_route_exchanges_total", "route" => route_id.to_string());
        let failures =
            metrics::counter!("camel_route_failures_total", "route" => route_id.to_string());
        ConsumerContext {
            inner: Arc::new(ContextInner {
                route_id,
                pipeline,
                gate,
                cancel,
                stats,
                exchanges,
                failures,
                health: Arc::default(),
            }),
        }
    }

    /// A context around a fixed pipeline, for tests and tools.
    pub fn for_pipeline(route_id: &str, pipeline: BoxProcessor) -> Self {
        Self::new(
            route_id.into(),
            Arc::new(ArcSwap::from_pointee(pipeline)),
            Arc::default(),
            CancellationToken::new(),
            ExchangeStats::new(),
        )
    }

    /// The route id.
    pub fn route_id(&self) -> &str {
        &self.inner.route_id
    }

    /// Where the consumer reports that its source is failing (and recovered); the route
    /// controller reads it for `/health`.
    pub fn health(&self) -> &Arc<crate::ConsumerHealth> {
        &self.inner.health
    }

    /// Runs one exchange through the route's current pipeline. Waits while the route is
    /// paused (suspended or being swapped); fails once it is stopped.
    pub async fn send(&self, exchange: Exchange) -> Result<Exchange, CamelError> {
        use tracing::Instrument;
        let span = tracing::debug_span!("exchange", route_id = %self.inner.route_id, exchange_id = %exchange.id);
        let result = self.send_nested(exchange).instrument(span).await;
        self.inner.stats.record(result.is_ok());
        result
    }

    /// Like [`ConsumerContext::send`], for a consumer that runs inside another route's
    /// exchange (`direct:`): the exchange is not counted again in the context's
    /// completed-exchange statistics.
    pub async fn send_nested(&self, exchange: Exchange) -> Result<Exchange, CamelError> {
        let inner = &*self.inner;
        let _guard = inner.gate.enter().await?;
        let result = inner.pipeline.load().process(exchange).await;
        self.count(&result);
        result
    }

    /// Like [`ConsumerContext::send_nested`], without an `async` frame when it can be
    /// avoided: with the gate open and a pipeline that completes synchronously, the result
    /// is returned at once and nothing is allocated. This is `direct:`'s hot path.
    pub fn process_nested(&self, exchange: Exchange) -> ProcessorFuture {
        let inner = &*self.inner;
        let Some(guard) = inner.gate.try_enter() else {
            let this = self.clone();
            return ProcessorFuture::boxed(async move { this.send_nested(exchange).await });
        };
        match inner.pipeline.load().process(exchange) {
            ProcessorFuture::Ready(Some(result)) => {
                drop(guard);
                self.count(&result);
                ProcessorFuture::ready(result)
            }
            ProcessorFuture::Ready(None) => ProcessorFuture::ready(Err(CamelError::processor(
                "a pipeline returned a future that had already completed",
            ))),
            pending => {
                let owned = OwnedInflight::new(&inner.gate);
                drop(guard);
                let this = self.clone();
                ProcessorFuture::boxed(async move {
                    let result = pending.await;
                    drop(owned);
                    this.count(&result);
                    result
                })
            }
        }
    }

    fn count(&self, result: &Result<Exchange, CamelError>) {
        self.inner.exchanges.increment(1);
        if result.is_err() {
            self.inner.failures.increment(1);
        }
    }

    /// Resolves when the consumer must stop.
    pub fn cancelled(&self) -> tokio_util::sync::WaitForCancellationFuture<'_> {
        self.inner.cancel.cancelled()
    }

    /// True once the consumer must stop.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// The cancellation token (to hand to spawned tasks).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// The route's gate.
    pub fn gate(&self) -> &RouteGate {
        &self.inner.gate
    }

    /// The context-wide exchange counters.
    pub fn stats(&self) -> &Arc<ExchangeStats> {
        &self.inner.stats
    }
}
