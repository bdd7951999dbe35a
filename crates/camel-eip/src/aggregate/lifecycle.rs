//! Start, stop and hand-over of one aggregator: its [`StepLifecycle`].
//!
//! Start re-arms the timeouts of groups already in the repository (handed over, or left
//! by a process that stopped or crashed) and spawns the timer task (timeouts, interval,
//! recovery). Stop cancels the task, closes the gate (waiting for updates in progress),
//! then completes the open groups under `force_completion_on_stop` or keeps them. A hot
//! swap never completes: the step's own in-memory groups go to the replacement in an
//! [`AggregateHandover`]; a shared or database repository simply stays where it is.

use std::fmt;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use async_trait::async_trait;
use camel_api::{CamelError, CarriedState, Drained, Exchange, ShutdownReason, StepLifecycle};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;
use tokio::time::{timeout_at, Instant};
use tokio_util::sync::CancellationToken;
use tracing::{error, warn};

use super::completion::CompletedBy;
use super::service::Inner;

/// Longest wait for the timer task during a shutdown that names no deadline of its own
/// (a route stop or swap passes its `--shutdown-timeout` deadline instead).
const DRAIN_DEADLINE: Duration = Duration::from_secs(5);

/// The open groups one aggregator hands to its replacement on a hot swap.
#[derive(Debug, Default)]
pub struct AggregateHandover {
    groups: Vec<(String, Exchange)>,
}

impl AggregateHandover {
    /// Open groups carried over.
    pub fn groups(&self) -> usize {
        self.groups.len()
    }
}

impl Drop for AggregateHandover {
    fn drop(&mut self) {
        if !self.groups.is_empty() {
            error!(
                groups = self.groups.len(),
                "an aggregator's handed-over groups were never adopted; they are lost"
            );
        }
    }
}

enum Phase {
    Built,
    Running {
        stop: CancellationToken,
        task: JoinHandle<()>,
    },
    Stopped,
}

/// The [`StepLifecycle`] of an aggregator.
pub(crate) struct Lifecycle {
    inner: Arc<Inner>,
    phase: Mutex<Phase>,
    adopted: StdMutex<Option<AggregateHandover>>,
    handed: StdMutex<Option<AggregateHandover>>,
}

impl Lifecycle {
    pub(crate) fn new(inner: Arc<Inner>) -> Self {
        Lifecycle {
            inner,
            phase: Mutex::new(Phase::Built),
            adopted: StdMutex::new(None),
            handed: StdMutex::new(None),
        }
    }

    async fn adopt(&self) -> Result<(), CamelError> {
        let handover = self.adopted.lock().ok().and_then(|mut a| a.take());
        let Some(mut handover) = handover else {
            return Ok(());
        };
        for (key, exchange) in std::mem::take(&mut handover.groups) {
            if let Err(e) = self.inner.repository.put(&key, &exchange, None).await {
                error!(route_id = %self.inner.route_id, key = %key, error = %e, "aggregate: a handed-over group could not be stored");
            }
        }
        Ok(())
    }
}

async fn run_timers(inner: Arc<Inner>, stop: CancellationToken) {
    let far = Duration::from_secs(86_400 * 365);
    let mut interval = inner.options.completion_interval.map(|d| {
        let mut i = tokio::time::interval_at(Instant::now() + d, d);
        i.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        i
    });
    let mut recovery = inner.options.use_recovery.then(|| {
        let d = inner.options.recovery_interval;
        let mut i = tokio::time::interval(d);
        i.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        i
    });
    loop {
        let next = inner
            .deadlines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .next();
        let sleep_until = next.unwrap_or_else(|| Instant::now() + far);
        tokio::select! {
            biased;
            _ = stop.cancelled() => return,
            _ = inner.rearmed.notified() => continue,
            _ = tokio::time::sleep_until(sleep_until), if next.is_some() => {
                let due = inner
                    .deadlines
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take_due(Instant::now());
                complete_all(&inner, due, CompletedBy::Timeout).await;
            }
            _ = tick(&mut interval) => {
                match inner.repository.keys().await {
                    Ok(keys) => complete_all(&inner, keys, CompletedBy::Interval).await,
                    Err(e) => warn!(route_id = %inner.route_id, error = %e, "aggregate: could not list groups for the interval"),
                }
            }
            _ = tick(&mut recovery) => {
                if let Err(e) = inner.recover().await {
                    warn!(route_id = %inner.route_id, error = %e, "aggregate: recovery pass failed");
                }
            }
        }
    }
}

async fn tick(i: &mut Option<tokio::time::Interval>) {
    match i {
        Some(i) => {
            i.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// Completes the groups of `keys` by `by` and delivers them, one at a time.
async fn complete_all(inner: &Inner, keys: Vec<String>, by: CompletedBy) {
    for key in keys {
        let taken = {
            let _guard = if inner.options.optimistic_locking {
                None
            } else {
                Some(inner.lock.lock().await)
            };
            inner.take(&key, by).await
        };
        match taken {
            Ok(Some(c)) => inner.deliver(c).await,
            Ok(None) => {}
            Err(e) => {
                warn!(route_id = %inner.route_id, key = %key, completed_by = %by, error = %e, "aggregate: a group could not be completed")
            }
        }
    }
}

impl Lifecycle {
    /// Stops the timers, waiting for the one in progress until `deadline` (the route
    /// stop's own, when the controller gives one), then does what `reason` asks with the
    /// open groups.
    async fn shutdown_within(
        &self,
        reason: ShutdownReason,
        deadline: Instant,
    ) -> Result<(), CamelError> {
        let mut phase = self.phase.lock().await;
        if let Phase::Running { stop, mut task } = std::mem::replace(&mut *phase, Phase::Stopped) {
            stop.cancel();
            if timeout_at(deadline, &mut task).await.is_err() {
                task.abort();
                error!(route_id = %self.inner.route_id, "aggregate timer task missed its drain deadline");
            }
        }
        // Waits for updates in progress; later exchanges are refused.
        *self.inner.gate.write().await = false;
        let inner = &self.inner;
        match reason {
            ShutdownReason::RouteStop if inner.options.force_completion_on_stop => {
                let keys = inner.repository.keys().await?;
                complete_all(inner, keys, CompletedBy::Force).await;
            }
            ShutdownReason::RouteStop => {
                if let Some(memory) = &inner.own_memory {
                    let open = memory.open_groups();
                    if open > 0 {
                        warn!(route_id = %inner.route_id, step = %inner.step_name, open, "aggregate stopped with open groups in memory; they are dropped (set force_completion_on_stop or use a database repository)");
                    }
                }
            }
            ShutdownReason::HotSwap => {
                if let Some(memory) = &inner.own_memory {
                    let groups = memory.take_open();
                    if let Ok(mut slot) = self.handed.lock() {
                        *slot = Some(AggregateHandover { groups });
                    }
                }
            }
        }
        Ok(())
    }
}

#[async_trait]
impl StepLifecycle for Lifecycle {
    fn name(&self) -> &str {
        &self.inner.step_name
    }

    async fn start(&self) -> Result<(), CamelError> {
        let mut phase = self.phase.lock().await;
        match &*phase {
            Phase::Running { .. } => return Ok(()),
            Phase::Stopped => {
                return Err(CamelError::Stopping(
                    "a stopped aggregator cannot be restarted; build a new one".into(),
                ))
            }
            Phase::Built => {}
        }
        self.adopt().await?;
        self.inner.arm_existing().await?;
        let stop = CancellationToken::new();
        let task = tokio::spawn(run_timers(self.inner.clone(), stop.clone()));
        *phase = Phase::Running { stop, task };
        Ok(())
    }

    async fn shutdown(&self, reason: ShutdownReason) -> Result<(), CamelError> {
        self.shutdown_within(reason, Instant::now() + DRAIN_DEADLINE)
            .await
    }

    async fn shutdown_by(
        &self,
        reason: ShutdownReason,
        deadline: Instant,
    ) -> Result<Drained, CamelError> {
        self.shutdown_within(reason, deadline)
            .await
            .map(|()| Drained::default())
    }

    fn take_state(&self) -> Option<CarriedState> {
        let handover = self.handed.lock().ok()?.take()?;
        Some(Box::new(handover))
    }

    fn adopt_state(&self, state: CarriedState) {
        match state.downcast::<AggregateHandover>() {
            Ok(handover) => {
                if let Ok(mut slot) = self.adopted.lock() {
                    *slot = Some(*handover);
                }
            }
            Err(_) => {
                warn!(route_id = %self.inner.route_id, "ignoring carried state that is not an aggregator's")
            }
        }
    }
}

impl fmt::Debug for Lifecycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AggregateLifecycle")
            .field("route_id", &self.inner.route_id)
            .field("step", &self.inner.step_name)
            .finish_non_exhaustive()
    }
}

impl Drop for Lifecycle {
    fn drop(&mut self) {
        if let Phase::Running { stop, .. } = self.phase.get_mut() {
            stop.cancel();
        }
    }
}
