//! One route at run time: its definition, compiled pipeline, gate and consumer task, and
//! the start, stop and swap procedures.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use camel_api::{
    BoxProcessor, CamelError, ConsumerContext, ExchangeStats, RouteCounters, RouteGate,
    RoutePipeline, ShutdownReason, StepLifecycle,
};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::compiler::CompiledRoute;
use crate::observe::metrics::RouteMetrics;
use crate::observe::traced::RouteTrace;

/// How long a stop waits, past its deadline, for an aborted consumer task to drop what
/// it holds. Dropping is synchronous and quick; the bound is for a task stuck in a poll.
const ABORTED_CONSUMER_DROP: Duration = Duration::from_millis(250);
use crate::error::{RouteError, RouteErrorKind};
use crate::model::RouteDefinition;

/// The state of a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteStatus {
    /// Not running.
    Stopped,
    /// Taking exchanges.
    Started,
    /// Running, but intake is paused.
    Suspended,
}

/// How long a lifecycle step that does not watch the stop deadline itself may go on
/// draining after it: a last resort (see `shutdown_lifecycles`).
const LIFECYCLE_DRAIN_GRACE: Duration = Duration::from_secs(10);

/// How often a running route's batched exchange counts reach its metrics, at the latest
/// (a busy route's counts get there every `RouteCounters::FLUSH_EVERY` exchanges per thread).
const METRICS_FLUSH_PERIOD: Duration = Duration::from_secs(1);

/// Hands `counters` to the metrics every `METRICS_FLUSH_PERIOD`, for as long as it is
/// polled, and sets the route's in-flight and uptime gauges.
async fn flush_periodically(
    counters: &RouteCounters,
    metrics: &RouteMetrics,
    gate: &RouteGate,
    since: Instant,
) -> std::convert::Infallible {
    let mut tick = tokio::time::interval(METRICS_FLUSH_PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        counters.flush();
        metrics.running(gate.inflight(), since.elapsed());
    }
}

struct RunningConsumer {
    cancel: CancellationToken,
    task: JoinHandle<()>,
    /// Flushed once the route has drained, so its metrics are exact after a stop.
    counters: Arc<RouteCounters>,
    /// What the consumer reports about its source; a consumer that ended with an error
    /// is failing too (the route is started but takes nothing in).
    health: Arc<camel_api::ConsumerHealth>,
    /// The context's counts, where exchanges a step lost after acknowledging them are
    /// recorded as failed.
    stats: Arc<ExchangeStats>,
}

pub(crate) struct RouteRuntime {
    pub(crate) definition: RouteDefinition,
    pub(crate) compiled: CompiledRoute,
    pipeline: Arc<RoutePipeline>,
    gate: Arc<RouteGate>,
    consumer: Option<RunningConsumer>,
    pub(crate) status: RouteStatus,
    /// Set by `stop`: lifecycle steps cannot be restarted, so the next start compiles the
    /// route afresh.
    pub(crate) stale: bool,
    /// The route's metric handles, made once when it is added.
    metrics: RouteMetrics,
    /// What the route's spans say about it (used only when a tracer is installed).
    trace: RouteTrace,
    /// The context's backlog tracer, asked whether the route is armed each time its
    /// pipeline is stored.
    backlog: crate::observe::backlog::BacklogTracer,
    /// When the route last started, while it runs.
    started_at: Option<Instant>,
    /// Why the last start failed, until the route starts.
    pub(crate) start_error: Option<Arc<str>>,
}

/// What stopping a route left behind.
#[derive(Debug, Default, Clone)]
pub struct StopOutcome {
    /// Exchanges still in flight when the deadline passed.
    pub cut_off: usize,
    /// Failures of lifecycle shutdowns.
    pub errors: Vec<String>,
    /// Exchanges a lifecycle step had acknowledged and gave up on at the deadline (a
    /// resequencer whose continuation could not drain in time); counted as failed.
    pub lost: u64,
}

impl RouteRuntime {
    pub(crate) fn new(
        definition: RouteDefinition,
        compiled: CompiledRoute,
        backlog: crate::observe::backlog::BacklogTracer,
    ) -> Self {
        let metrics = RouteMetrics::register(&compiled.id);
        let trace = RouteTrace::new(&compiled.id, &definition.from.uri);
        let traced = crate::observe::backlog::wrap_route(
            backlog.hook(&compiled.id),
            &definition.from.uri,
            compiled.assembly.pipeline.clone(),
        );
        let pipeline = Arc::new(RoutePipeline::new(trace.wrap(metrics.wrap(traced))));
        RouteRuntime {
            definition,
            compiled,
            pipeline,
            gate: Arc::default(),
            consumer: None,
            status: RouteStatus::Stopped,
            stale: false,
            metrics,
            trace,
            backlog,
            started_at: None,
            start_error: None,
        }
    }

    /// `pipeline` with what the process observes per exchange around it: the backlog
    /// tracer's record, the metrics' timing and the tracer's span, each only when
    /// switched on.
    fn wrap(&self, pipeline: BoxProcessor) -> BoxProcessor {
        let id = self.id();
        let traced = crate::observe::backlog::wrap_route(
            self.backlog.hook(id),
            &self.definition.from.uri,
            pipeline,
        );
        self.trace.wrap(self.metrics.wrap(traced))
    }

    /// The route is gone from its context: its series read zero and leave the scrape.
    pub(crate) fn retire_metrics(&self) {
        self.metrics.retire(self.id());
    }

    /// When the route last started, while it runs.
    pub(crate) fn started_at(&self) -> Option<Instant> {
        self.started_at
    }

    pub(crate) fn id(&self) -> &str {
        &self.compiled.id
    }

    /// The gate exchanges pass on their way in (replaced at each start).
    pub(crate) fn gate(&self) -> &Arc<RouteGate> {
        &self.gate
    }

    /// What the running consumer reports about its source; `None` when not running.
    pub(crate) fn health(&self) -> Option<Arc<camel_api::ConsumerHealth>> {
        self.consumer.as_ref().map(|c| c.health.clone())
    }

    /// Starts lifecycles (in route order), then the consumer; a failure is kept for the
    /// health checks until the route starts.
    pub(crate) async fn start(&mut self, stats: &Arc<ExchangeStats>) -> Result<(), RouteError> {
        if self.status != RouteStatus::Stopped {
            return Ok(());
        }
        let started = self.start_now(stats).await;
        self.start_error = started.as_ref().err().map(|e| e.to_string().into());
        started
    }

    async fn start_now(&mut self, stats: &Arc<ExchangeStats>) -> Result<(), RouteError> {
        start_lifecycles(&self.compiled.assembly.lifecycles, self.id()).await?;
        let consumer =
            self.compiled.source.consumer().map_err(|e| {
                RouteError::new(RouteErrorKind::Endpoint(e)).in_route(Some(self.id()))
            })?;
        self.pipeline
            .store(self.wrap(self.compiled.assembly.pipeline.clone()));
        self.gate = Arc::default();
        let cancel = CancellationToken::new();
        let counters = Arc::new(RouteCounters::new(self.metrics.sink()));
        let since = Instant::now();
        let ctx = ConsumerContext::new(
            self.id().into(),
            self.pipeline.clone(),
            self.gate.clone(),
            cancel.clone(),
            stats.clone(),
            counters.clone(),
        );
        let route_id = self.id().to_string();
        let health = ctx.health().clone();
        let reported = health.clone();
        let flushed = counters.clone();
        let (metrics, gate) = (self.metrics.clone(), self.gate.clone());
        let stopped = cancel.clone();
        let task = tokio::spawn(async move {
            // The flush ticker lives in the consumer's task, so it ends when the task does.
            let result = tokio::select! {
                biased;
                result = consumer.run(ctx) => result,
                never = flush_periodically(&flushed, &metrics, &gate, since) => match never {},
            };
            if let Err(error) = result {
                tracing::error!(route_id = %route_id, %error, "the route's consumer failed");
                reported.set_failing(format_args!("the consumer stopped: {error}"));
            }
            // A source that has finished (a timer's `repeat_count`) leaves a started route
            // whose last counts, and those of exchanges it handed to other tasks, still
            // have to reach the metrics: keep flushing until the route stops.
            tokio::select! {
                _ = stopped.cancelled() => {}
                never = flush_periodically(&flushed, &metrics, &gate, since) => match never {},
            }
        });
        self.consumer = Some(RunningConsumer {
            cancel,
            task,
            counters,
            health,
            stats: stats.clone(),
        });
        self.status = RouteStatus::Started;
        self.started_at = Some(since);
        self.metrics.started(true);
        let from = camel_api::redact_url(&self.definition.from.uri);
        tracing::info!(route_id = %self.id(), %from, "route started");
        for destination in &self.compiled.unordered_destinations {
            tracing::warn!(
                route_id = %self.id(),
                %from,
                %destination,
                "the route's source delivers in order but this destination does not keep order, so each group's order is lost on the way (an SQS standard queue: use a FIFO queue)"
            );
        }
        Ok(())
    }

    /// Starts a route, compiling it afresh first if it ran before (its lifecycle steps
    /// cannot be restarted).
    pub(crate) async fn restart(
        &mut self,
        registry: &super::Registry,
        stats: &Arc<ExchangeStats>,
    ) -> Result<(), RouteError> {
        if self.status == RouteStatus::Stopped && self.stale {
            self.compiled = match crate::compiler::compile_route(registry, &self.definition) {
                Ok(c) => c,
                Err(e) => {
                    self.start_error = Some(e.to_string().into());
                    return Err(e);
                }
            };
            self.stale = false;
        }
        self.start(stats).await
    }

    /// Stops intake, waits for in-flight exchanges until `deadline`, drains lifecycles.
    pub(crate) async fn stop(&mut self, deadline: Instant, reason: ShutdownReason) -> StopOutcome {
        self.stop_with(deadline, |_| reason).await
    }

    /// Like `stop`, with a shutdown reason chosen per lifecycle step.
    pub(crate) async fn stop_with(
        &mut self,
        deadline: Instant,
        reason: impl Fn(&str) -> ShutdownReason,
    ) -> StopOutcome {
        let mut outcome = StopOutcome::default();
        let Some(consumer) = self.consumer.take() else {
            return outcome;
        };
        consumer.cancel.cancel();
        self.gate.close();
        // Steps holding accepted exchanges for more input let them go (ADR 0173).
        for l in &self.compiled.assembly.lifecycles {
            l.intake_closed();
        }
        // Pending redeliveries end as the stop begins (ADR 0052): their exchanges fail
        // now instead of being cut off at the deadline. Shutting the handler down twice
        // is harmless.
        for l in &self.compiled.assembly.lifecycles {
            if l.name() == camel_eip::error_handler::LIFECYCLE_NAME {
                let _ = l.shutdown(ShutdownReason::RouteStop).await;
            }
        }
        if tokio::time::timeout_at(deadline, self.gate.drained())
            .await
            .is_err()
        {
            outcome.cut_off = self.gate.inflight();
        }
        // Exchanges cut off here are counted when they end: the last holder of the counters
        // (their context) flushes on drop.
        consumer.counters.flush();
        (outcome.errors, outcome.lost) =
            shutdown_lifecycles(&self.compiled.assembly.lifecycles, reason, deadline).await;
        record_lost(&self.metrics, &consumer.stats, outcome.lost);
        let mut task = consumer.task;
        if tokio::time::timeout_at(deadline, &mut task).await.is_err() {
            task.abort();
            // An aborted task drops its future on a worker a moment later, not here. Wait
            // for that, briefly, so what the consumer held (an HTTP path, a socket) is
            // released before the route may start again: a start racing the drop found
            // its path still taken.
            let _ = tokio::time::timeout(ABORTED_CONSUMER_DROP, task).await;
        }
        self.status = RouteStatus::Stopped;
        self.stale = true;
        self.started_at = None;
        self.metrics.started(false);
        if outcome.cut_off > 0 {
            tracing::warn!(route_id = %self.id(), cut_off = outcome.cut_off, "route stopped with exchanges still in flight");
        } else {
            tracing::info!(route_id = %self.id(), "route stopped");
        }
        outcome
    }

    pub(crate) fn suspend(&mut self) {
        if self.status == RouteStatus::Started {
            self.gate.pause();
            self.status = RouteStatus::Suspended;
        }
    }

    pub(crate) fn resume(&mut self) {
        if self.status == RouteStatus::Suspended {
            self.gate.resume();
            self.status = RouteStatus::Started;
        }
    }

    /// Replaces the running pipeline with `next` (same source endpoint). Stateless routes
    /// swap with one atomic store; routes with lifecycle steps pause intake, drain the old
    /// steps, hand their state over and start the new ones.
    pub(crate) async fn swap(
        &mut self,
        definition: RouteDefinition,
        next: CompiledRoute,
        timeout: Duration,
    ) -> Result<StopOutcome, RouteError> {
        let mut outcome = StopOutcome::default();
        let running = self.status != RouteStatus::Stopped;
        let stateless =
            self.compiled.assembly.lifecycles.is_empty() && next.assembly.lifecycles.is_empty();
        if running && stateless {
            self.pipeline
                .store(self.wrap(next.assembly.pipeline.clone()));
        } else if running {
            let deadline = Instant::now() + timeout;
            let was_suspended = self.status == RouteStatus::Suspended;
            self.gate.pause();
            if tokio::time::timeout_at(deadline, self.gate.drained())
                .await
                .is_err()
            {
                outcome.cut_off = self.gate.inflight();
            }
            let old = &self.compiled.assembly.lifecycles;
            (outcome.errors, outcome.lost) =
                shutdown_lifecycles(old, swap_reason(&next.assembly.lifecycles), deadline).await;
            if let Some(consumer) = &self.consumer {
                record_lost(&self.metrics, &consumer.stats, outcome.lost);
            }
            hand_over(old, &next.assembly.lifecycles);
            // If the new steps fail to start, the old ones are already drained: the route
            // stays paused and says so (nothing accepted is lost); the caller gets the error.
            if let Err(e) = start_lifecycles(&next.assembly.lifecycles, &next.id).await {
                self.status = RouteStatus::Suspended;
                return Err(e);
            }
            self.pipeline
                .store(self.wrap(next.assembly.pipeline.clone()));
            if !was_suspended {
                self.gate.resume();
            }
        }
        self.definition = definition;
        self.compiled = next;
        self.stale = false;
        tracing::info!(route_id = %self.id(), "route swapped");
        Ok(outcome)
    }
}

async fn start_lifecycles(
    lifecycles: &[Arc<dyn StepLifecycle>],
    route_id: &str,
) -> Result<(), RouteError> {
    for (i, l) in lifecycles.iter().enumerate() {
        if let Err(e) = l.start().await {
            let deadline = Instant::now() + Duration::from_secs(5);
            shutdown_lifecycles(&lifecycles[..i], |_| ShutdownReason::RouteStop, deadline).await;
            return Err(RouteError::new(RouteErrorKind::Lifecycle(e)).in_route(Some(route_id)));
        }
    }
    Ok(())
}

/// Moves the state of each drained old step to the new step of the same name.
pub(crate) fn hand_over(old: &[Arc<dyn StepLifecycle>], next: &[Arc<dyn StepLifecycle>]) {
    let mut carried: HashMap<String, camel_api::CarriedState> = old
        .iter()
        .filter_map(|l| l.take_state().map(|s| (l.name().to_string(), s)))
        .collect();
    for l in next {
        if let Some(state) = carried.remove(l.name()) {
            l.adopt_state(state);
        }
    }
}

/// The shutdown reason for each old step of a swap: `HotSwap` when the new pipeline has a
/// step of the same name to take its state over, `RouteStop` (drain everything through the
/// old continuation) when it has none — so no handed-over state is ever dropped.
pub(crate) fn swap_reason(next: &[Arc<dyn StepLifecycle>]) -> impl Fn(&str) -> ShutdownReason + '_ {
    move |name| {
        if next.iter().any(|l| l.name() == name) {
            ShutdownReason::HotSwap
        } else {
            ShutdownReason::RouteStop
        }
    }
}

/// Counts exchanges a lifecycle step lost after they were acknowledged as failed, in the
/// context's counts and in `camel_exchanges_failed_total{routeId}`.
fn record_lost(metrics: &RouteMetrics, stats: &ExchangeStats, lost: u64) {
    if lost > 0 {
        stats.record_lost(lost);
        metrics.lost(lost);
    }
}

/// Shuts `lifecycles` down in order, each bounded by `deadline`; returns the failures and
/// the number of acknowledged exchanges the steps reported lost.
pub(crate) async fn shutdown_lifecycles(
    lifecycles: &[Arc<dyn StepLifecycle>],
    reason_for: impl Fn(&str) -> ShutdownReason,
    deadline: Instant,
) -> (Vec<String>, u64) {
    // Each step bounds its own drain by `deadline` (and reports what it gave up on); a
    // step that does not is cut off later, as a last resort (dropping a drain that has
    // begun would drop what the step holds, uncounted).
    let last_resort = deadline.max(Instant::now() + LIFECYCLE_DRAIN_GRACE);
    let mut errors = Vec::new();
    let mut lost = 0;
    for l in lifecycles {
        let drain = l.shutdown_by(reason_for(l.name()), deadline);
        match tokio::time::timeout_at(last_resort, drain).await {
            Ok(Ok(drained)) => lost += drained.lost,
            Ok(Err(e)) => errors.push(format!("{}: {e}", l.name())),
            Err(_) => errors.push(format!(
                "{}: {}",
                l.name(),
                CamelError::Timeout("shutdown deadline passed".into())
            )),
        }
    }
    (errors, lost)
}
