use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use async_trait::async_trait;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::gate::OwnedInflight;
use crate::{BoxProcessor, CamelError, Exchange, ProcessorFuture, RouteCounters, RouteGate};

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

    /// Records `n` exchanges that completed (were acknowledged) and were then lost by a
    /// step that had taken them over, such as a resequencer cut off at a stop deadline:
    /// they count as failed, not as completed a second time.
    pub fn record_lost(&self, n: u64) {
        self.failed.fetch_add(n, Ordering::Relaxed);
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

/// The pipeline a route runs now. Replacing it is one atomic store: exchanges already
/// running finish on the pipeline they started on (ADR 0006).
pub struct RoutePipeline(ArcSwap<BoxProcessor>);

impl RoutePipeline {
    /// A route pipeline that runs `pipeline`.
    pub fn new(pipeline: BoxProcessor) -> Self {
        RoutePipeline(ArcSwap::from_pointee(pipeline))
    }

    /// Makes `pipeline` the one new exchanges run through.
    pub fn store(&self, pipeline: BoxProcessor) {
        self.0.store(Arc::new(pipeline));
    }

    /// The pipeline new exchanges run through now.
    pub fn current(&self) -> BoxProcessor {
        (**self.0.load()).clone()
    }

    #[inline]
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        self.0.load().process(exchange)
    }
}

impl fmt::Debug for RoutePipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RoutePipeline")
            .field(&*self.0.load())
            .finish()
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
    pipeline: Arc<RoutePipeline>,
    gate: Arc<RouteGate>,
    cancel: CancellationToken,
    stats: Arc<ExchangeStats>,
    counters: Arc<RouteCounters>,
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
    /// Builds a context; the route controller does this, tests may too. `counters` receive
    /// one count per exchange the route runs (camel-core hands them to its metrics).
    pub fn new(
        route_id: Arc<str>,
        pipeline: Arc<RoutePipeline>,
        gate: Arc<RouteGate>,
        cancel: CancellationToken,
        stats: Arc<ExchangeStats>,
        counters: Arc<RouteCounters>,
    ) -> Self {
        ConsumerContext {
            inner: Arc::new(ContextInner {
                route_id,
                pipeline,
                gate,
                cancel,
                stats,
                counters,
                health: Arc::default(),
            }),
        }
    }

    /// A context around a fixed pipeline, for tests and tools (its counts go nowhere).
    pub fn for_pipeline(route_id: &str, pipeline: BoxProcessor) -> Self {
        Self::new(
            route_id.into(),
            Arc::new(RoutePipeline::new(pipeline)),
            Arc::default(),
            CancellationToken::new(),
            ExchangeStats::new(),
            Arc::default(),
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
        // As in `process_now`: no span unless a subscriber wants one.
        let result = if tracing::enabled!(tracing::Level::DEBUG) {
            let span = tracing::debug_span!("exchange", route_id = %self.inner.route_id, exchange_id = %exchange.id);
            self.send_nested(exchange).instrument(span).await
        } else {
            self.send_nested(exchange).await
        };
        self.inner.stats.record(result.is_ok());
        result
    }

    /// Like [`ConsumerContext::send`], for a consumer that runs inside another route's
    /// exchange (`direct:`): the exchange is not counted again in the context's
    /// completed-exchange statistics.
    pub async fn send_nested(&self, exchange: Exchange) -> Result<Exchange, CamelError> {
        let inner = &*self.inner;
        let _guard = inner.gate.enter().await?;
        let result = inner.pipeline.process(exchange).await;
        inner.counters.record(result.is_ok());
        result
    }

    /// Like [`ConsumerContext::send_nested`], without an `async` frame when it can be
    /// avoided: with the gate open and a pipeline that completes synchronously, the result
    /// is returned at once and nothing is allocated. This is `direct:`'s hot path.
    pub fn process_nested(&self, exchange: Exchange) -> ProcessorFuture {
        self.process_now(exchange, false)
    }

    /// Like [`ConsumerContext::send`] (the exchange is counted in the context's
    /// statistics), without an `async` frame when it can be avoided: a consumer that takes
    /// a ready result at once and keeps only the pending ones (the Kafka consumer) pays no
    /// allocation and no poll for a route that completes synchronously.
    pub fn process(&self, exchange: Exchange) -> ProcessorFuture {
        self.process_now(exchange, true)
    }

    #[inline]
    fn process_now(&self, exchange: Exchange, count: bool) -> ProcessorFuture {
        let inner = &*self.inner;
        let Some(guard) = inner.gate.try_enter() else {
            let this = self.clone();
            return ProcessorFuture::boxed(async move {
                if count {
                    this.send(exchange).await
                } else {
                    this.send_nested(exchange).await
                }
            });
        };
        // Only when a subscriber wants it: without one, a disabled span still goes through
        // tracing's `log` compatibility (which sqlx switches on) for every exchange.
        let span = (count && tracing::enabled!(tracing::Level::DEBUG)).then(|| {
            tracing::debug_span!("exchange", route_id = %inner.route_id, exchange_id = %exchange.id)
        });
        let entered = span.as_ref().map(tracing::Span::enter);
        let processed = inner.pipeline.process(exchange);
        drop(entered);
        // The ready result is handed back as it came (no re-wrapping: an exchange is
        // about a hundred bytes, and each move of it costs).
        let ok = match &processed {
            ProcessorFuture::Ready(Some(result)) => result.is_ok(),
            ProcessorFuture::Ready(None) => {
                return ProcessorFuture::ready(Err(CamelError::processor(
                    "a pipeline returned a future that had already completed",
                )))
            }
            ProcessorFuture::Pending(_) => {
                use tracing::Instrument;
                let owned = OwnedInflight::new(&inner.gate);
                drop(guard);
                let this = self.clone();
                return ProcessorFuture::boxed(async move {
                    let result = match span {
                        Some(span) => processed.instrument(span).await,
                        None => processed.await,
                    };
                    drop(owned);
                    this.record(result.is_ok(), count);
                    result
                });
            }
        };
        drop(guard);
        self.record(ok, count);
        processed
    }

    #[inline]
    fn record(&self, ok: bool, count: bool) {
        self.inner.counters.record(ok);
        if count {
            self.inner.stats.record(ok);
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

    /// This route's exchange counters.
    pub fn counters(&self) -> &Arc<RouteCounters> {
        &self.inner.counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(pipeline: BoxProcessor) -> (ConsumerContext, Arc<ExchangeStats>) {
        let stats = ExchangeStats::new();
        let ctx = ConsumerContext::new(
            "r".into(),
            Arc::new(RoutePipeline::new(pipeline)),
            Arc::default(),
            CancellationToken::new(),
            stats.clone(),
            Arc::default(),
        );
        (ctx, stats)
    }

    #[tokio::test]
    async fn process_answers_a_synchronous_route_at_once_and_counts_it() {
        let (ctx, stats) = context(BoxProcessor::sync(|ex: Exchange| {
            if ex.header("bad").is_some() {
                return Err(CamelError::processor("bad"));
            }
            Ok(ex)
        }));
        assert!(matches!(
            ctx.process(Exchange::new("a")),
            ProcessorFuture::Ready(Some(Ok(_)))
        ));
        assert!(matches!(
            ctx.process(Exchange::new("b").with_header("bad", true)),
            ProcessorFuture::Ready(Some(Err(_)))
        ));
        assert!(matches!(
            ctx.process_nested(Exchange::new("c")),
            ProcessorFuture::Ready(Some(Ok(_)))
        ));
        // The nested call is not counted in the context's statistics.
        assert_eq!((stats.completed(), stats.failed()), (2, 1));
    }

    #[tokio::test]
    async fn process_counts_a_route_that_waits_when_it_ends() {
        let (ctx, stats) = context(BoxProcessor::from_fn(|ex: Exchange| async move {
            tokio::task::yield_now().await;
            Ok(ex)
        }));
        let pending = ctx.process(Exchange::new("a"));
        assert!(matches!(pending, ProcessorFuture::Pending(_)));
        assert_eq!(stats.completed(), 0);
        assert!(pending.await.is_ok());
        assert_eq!(stats.completed(), 1);
    }
}
