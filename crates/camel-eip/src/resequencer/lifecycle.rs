//! Start, drain and hand-over of one resequencer: its [`StepLifecycle`].
//!
//! Shutdown follows the continuation-boundary ADR: stop the actor (it closes the input
//! channel and takes what is buffered), await it within a deadline, flush the policy
//! through the post-driver, drop the one post-driver sender, await the post-driver within
//! a deadline. Nothing waits on a fixed timer, so an idle stop returns at once.

use std::fmt;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use async_trait::async_trait;
use camel_api::{CamelError, CarriedState, ShutdownReason, StepLifecycle};
use tokio::sync::{mpsc, Mutex};
use tokio::task::JoinHandle;
use tokio::time::{timeout, Instant};
use tokio_util::sync::CancellationToken;
use tracing::{debug, error, warn};

use super::actor::{forward, run_actor, ActorParts, Input};
use super::config::OnSwap;
use super::policy::{PolicyState, Release, ResequencePolicy};
use super::post_driver::{run_post_driver, Outlets};
use super::shared::Shared;

/// Longest wait for the actor, and then for the post-driver, during a shutdown.
pub(crate) const DRAIN_DEADLINE: Duration = Duration::from_secs(5);

/// Released batches in flight between the actor and the post-driver.
pub(crate) const POST_CHANNEL_BATCHES: usize = 16;

/// What one resequencer hands to its replacement on a hot swap.
#[derive(Debug)]
pub struct ResequencerHandover {
    /// Mode and expressions of the old definition; equal signatures can adopt state.
    signature: String,
    /// Taken when adopted; still here on drop means the carried exchanges are lost.
    state: Option<PolicyState>,
}

impl ResequencerHandover {
    /// Held exchanges carried over (zero after a flush).
    pub fn held(&self) -> usize {
        self.state.as_ref().map_or(0, PolicyState::held)
    }
}

impl Drop for ResequencerHandover {
    fn drop(&mut self) {
        let held = self.held();
        if held > 0 {
            error!(
                held,
                "a resequencer's handed-over exchanges were never adopted; they are lost"
            );
        }
    }
}

enum Phase<P: ResequencePolicy> {
    Built {
        policy: P,
        input: mpsc::Receiver<Input<P::Key>>,
    },
    Running {
        stop: CancellationToken,
        actor: JoinHandle<ActorParts<P>>,
        driver: JoinHandle<()>,
    },
    Stopped,
}

/// The [`StepLifecycle`] of a resequencer with policy `P`.
pub(crate) struct Lifecycle<P: ResequencePolicy> {
    phase: Mutex<Phase<P>>,
    outlets: Outlets,
    pub(crate) shared: Arc<Shared>,
    on_swap: OnSwap,
    signature: String,
    adopted: StdMutex<Option<ResequencerHandover>>,
    handed: StdMutex<Option<ResequencerHandover>>,
}

impl<P: ResequencePolicy> Lifecycle<P> {
    pub(crate) fn new(
        policy: P,
        input: mpsc::Receiver<Input<P::Key>>,
        outlets: Outlets,
        shared: Arc<Shared>,
        on_swap: OnSwap,
        signature: String,
    ) -> Self {
        Lifecycle {
            phase: Mutex::new(Phase::Built { policy, input }),
            outlets,
            shared,
            on_swap,
            signature,
            adopted: StdMutex::new(None),
            handed: StdMutex::new(None),
        }
    }

    /// Spawns the actor and the post-driver, first adopting any handed-over state.
    fn spawn(&self, mut policy: P, input: mpsc::Receiver<Input<P::Key>>) -> Phase<P> {
        let mut first: Vec<Release> = Vec::new();
        let mut adopted = self.adopted.lock().ok().and_then(|mut a| a.take());
        if let Some((handover, state)) = adopted
            .as_mut()
            .and_then(|h| h.state.take().map(|state| (&*h, state)))
        {
            if handover.signature == self.signature {
                policy.import(state, Instant::now(), &mut first);
            } else {
                let carried = state.into_exchanges();
                warn!(route_id = %self.shared.route_id, carried = carried.len(), "resequencer mode or expressions changed: numbering restarts, and carried exchanges go first through the new continuation");
                first.extend(carried.into_iter().map(Release::Deliver));
            }
        }
        let (post_tx, post_rx) = mpsc::channel(POST_CHANNEL_BATCHES);
        let stop = CancellationToken::new();
        let driver = tokio::spawn(run_post_driver(
            post_rx,
            self.outlets.clone(),
            self.shared.clone(),
        ));
        let actor = tokio::spawn(run_actor(
            policy,
            input,
            post_tx,
            stop.clone(),
            first,
            self.shared.clone(),
        ));
        Phase::Running {
            stop,
            actor,
            driver,
        }
    }

    async fn drain(&self, reason: ShutdownReason, running: Phase<P>) -> Result<(), CamelError> {
        let Phase::Running {
            stop,
            mut actor,
            mut driver,
        } = running
        else {
            return Ok(());
        };
        let started = Instant::now();
        stop.cancel();
        let parts = match timeout(DRAIN_DEADLINE, &mut actor).await {
            Ok(Ok(parts)) => parts,
            Ok(Err(join)) => {
                driver.abort();
                return Err(CamelError::processor(format!(
                    "resequencer actor failed: {join}"
                )));
            }
            Err(_) => {
                actor.abort();
                driver.abort();
                error!(route_id = %self.shared.route_id, "resequencer actor missed its drain deadline; held exchanges are lost");
                return Err(CamelError::Timeout("resequencer actor drain".into()));
            }
        };
        let ActorParts {
            mut policy,
            post_tx,
        } = parts;
        let keep = reason == ShutdownReason::HotSwap && self.on_swap == OnSwap::Handoff;
        let mut out = Vec::new();
        if !keep {
            policy.flush(&mut out);
        }
        let flushed = out.len();
        // Bounded too: a stuck continuation must not hang the stop.
        let sent = timeout(DRAIN_DEADLINE, forward(&post_tx, &mut out, &self.shared)).await;
        let state = policy.export(keep);
        self.shared.set_held(0);
        if reason == ShutdownReason::HotSwap {
            if let Ok(mut slot) = self.handed.lock() {
                *slot = Some(ResequencerHandover {
                    signature: self.signature.clone(),
                    state: Some(state),
                });
            }
        }
        // The only sender: dropping it is what lets the post-driver finish.
        drop(post_tx);
        if sent.is_err() || timeout(DRAIN_DEADLINE, &mut driver).await.is_err() {
            driver.abort();
            error!(route_id = %self.shared.route_id, "resequencer post-driver missed its drain deadline");
            return Err(CamelError::Timeout("resequencer post-driver drain".into()));
        }
        debug!(route_id = %self.shared.route_id, ?reason, flushed, elapsed_us = started.elapsed().as_micros() as u64, "resequencer drained");
        Ok(())
    }
}

#[async_trait]
impl<P: ResequencePolicy> StepLifecycle for Lifecycle<P> {
    fn name(&self) -> &str {
        &self.shared.step_name
    }

    async fn start(&self) -> Result<(), CamelError> {
        let mut phase = self.phase.lock().await;
        match std::mem::replace(&mut *phase, Phase::Stopped) {
            Phase::Built { policy, input } => {
                *phase = self.spawn(policy, input);
                Ok(())
            }
            running @ Phase::Running { .. } => {
                *phase = running;
                Ok(())
            }
            Phase::Stopped => Err(CamelError::Stopping(
                "a stopped resequencer cannot be restarted; build a new one".into(),
            )),
        }
    }

    async fn shutdown(&self, reason: ShutdownReason) -> Result<(), CamelError> {
        let mut phase = self.phase.lock().await;
        let current = match std::mem::replace(&mut *phase, Phase::Stopped) {
            // Never started: exchanges may wait in the input channel; run to drain them.
            Phase::Built { policy, input } => self.spawn(policy, input),
            other => other,
        };
        self.drain(reason, current).await
    }

    fn take_state(&self) -> Option<CarriedState> {
        let handover = self.handed.lock().ok()?.take()?;
        Some(Box::new(handover))
    }

    fn adopt_state(&self, state: CarriedState) {
        match state.downcast::<ResequencerHandover>() {
            Ok(handover) => {
                if let Ok(mut slot) = self.adopted.lock() {
                    *slot = Some(*handover);
                }
            }
            Err(_) => {
                warn!(route_id = %self.shared.route_id, "ignoring carried state that is not a resequencer's")
            }
        }
    }
}

impl<P: ResequencePolicy> fmt::Debug for Lifecycle<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResequencerLifecycle")
            .field("route_id", &self.shared.route_id)
            .field("step", &self.shared.step_name)
            .field("on_swap", &self.on_swap)
            .finish_non_exhaustive()
    }
}

impl<P: ResequencePolicy> Drop for Lifecycle<P> {
    fn drop(&mut self) {
        // Dropped without a shutdown: stop the tasks rather than leave them serving a
        // route that no longer exists. (An unadopted hand-over reports itself on drop.)
        if let Phase::Running { stop, .. } = self.phase.get_mut() {
            stop.cancel();
        }
    }
}
