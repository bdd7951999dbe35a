//! Start, drain and hand-over of one resequencer: its [`StepLifecycle`].
//!
//! Shutdown follows the continuation-boundary ADR: stop the actor (it closes the input
//! channel and takes what is buffered), flush the policy through the post-driver, drop
//! the one post-driver sender, await the post-driver. One deadline bounds all of it: the
//! route's stop deadline (`--shutdown-timeout` of `camel run`), given to
//! [`StepLifecycle::shutdown_by`]. The continuation's backlog is bounded
//! (`continuation_backlog`), so what must be delivered at a stop is bounded too.
//!
//! What the deadline still cuts off is never dropped silently (ADR 0106): on a route stop
//! each acknowledged exchange not delivered is counted (`camel_resequencer_lost_total`,
//! [`Drained::lost`], which the route counts as failed) and named in one error line; on a
//! hot swap the releases not started are handed to the new resequencer, which delivers
//! them first. Nothing waits on a fixed timer, so an idle stop returns at once.

use std::fmt;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use async_trait::async_trait;
use camel_api::{CamelError, CarriedState, Drained, ExchangeId, ShutdownReason, StepLifecycle};
use tokio::sync::{mpsc, Mutex};
use tokio::task::JoinHandle;
use tokio::time::{timeout_at, Instant};
use tokio_util::sync::CancellationToken;
use tracing::{debug, error, warn};

use super::actor::{run_actor, ActorParts, Input};
use super::backlog::backlog;
use super::config::OnSwap;
use super::policy::{PolicyState, Release, ResequencePolicy};
use super::post_driver::{run_post_driver, Cut, Outlets, Undelivered};
use super::shared::{Shared, Stat};

/// The drain deadline of [`StepLifecycle::shutdown`], which has none of its own: the
/// context's default stop deadline. The route controller calls `shutdown_by` instead.
pub(crate) const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Most exchange ids one loss report names.
const MAX_NAMED_LOST: usize = 20;

/// What one resequencer hands to its replacement on a hot swap.
#[derive(Debug)]
pub struct ResequencerHandover {
    /// Mode and expressions of the old definition; equal signatures can adopt state.
    signature: String,
    /// Taken when adopted; still here on drop means the carried exchanges are lost.
    state: Option<PolicyState>,
    /// Released by the old policy, not yet delivered when the swap's deadline passed, in
    /// release order: the replacement delivers them before anything else.
    undelivered: Vec<Release>,
}

impl ResequencerHandover {
    /// Exchanges carried over: held ones (zero after a flush) and released ones the old
    /// continuation did not reach in time.
    pub fn held(&self) -> usize {
        self.state.as_ref().map_or(0, PolicyState::held) + self.undelivered.len()
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
        /// Cuts the post-driver off at the deadline.
        cut: Cut,
        actor: JoinHandle<ActorParts<P>>,
        driver: JoinHandle<Undelivered>,
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
    /// Bound of the post-driver's backlog, in exchanges.
    backlog: usize,
    adopted: StdMutex<Option<ResequencerHandover>>,
    handed: StdMutex<Option<ResequencerHandover>>,
}

/// How a lifecycle is made: everything but the policy and its input.
pub(crate) struct LifecycleParts {
    pub(crate) outlets: Outlets,
    pub(crate) shared: Arc<Shared>,
    pub(crate) on_swap: OnSwap,
    pub(crate) signature: String,
    pub(crate) backlog: usize,
}

impl<P: ResequencePolicy> Lifecycle<P> {
    pub(crate) fn new(
        policy: P,
        input: mpsc::Receiver<Input<P::Key>>,
        parts: LifecycleParts,
    ) -> Self {
        Lifecycle {
            phase: Mutex::new(Phase::Built { policy, input }),
            outlets: parts.outlets,
            shared: parts.shared,
            on_swap: parts.on_swap,
            signature: parts.signature,
            backlog: parts.backlog,
            adopted: StdMutex::new(None),
            handed: StdMutex::new(None),
        }
    }

    /// Spawns the actor and the post-driver, first adopting any handed-over state.
    fn spawn(&self, mut policy: P, input: mpsc::Receiver<Input<P::Key>>) -> Phase<P> {
        let mut first: Vec<Release> = Vec::new();
        let mut adopted = self.adopted.lock().ok().and_then(|mut a| a.take());
        if let Some(handover) = adopted.as_mut() {
            first.append(&mut handover.undelivered);
        }
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
        let (post_tx, post_rx) = backlog(self.backlog);
        let stop = CancellationToken::new();
        let cut = Cut::default();
        let driver = tokio::spawn(run_post_driver(
            post_rx,
            self.outlets.clone(),
            self.shared.clone(),
            cut.clone(),
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
            cut,
            actor,
            driver,
        }
    }

    async fn drain(
        &self,
        reason: ShutdownReason,
        running: Phase<P>,
        deadline: Instant,
    ) -> Result<Drained, CamelError> {
        let Phase::Running {
            stop,
            cut,
            mut actor,
            mut driver,
        } = running
        else {
            return Ok(Drained::default());
        };
        let started = Instant::now();
        stop.cancel();
        // The actor only moves exchanges it already has into the policy: it ends at once
        // unless a policy is broken.
        let parts = match timeout_at(deadline, &mut actor).await {
            Ok(Ok(parts)) => parts,
            Ok(Err(join)) => {
                cut.abandon();
                return Err(CamelError::processor(format!(
                    "resequencer actor failed: {join}"
                )));
            }
            Err(_) => {
                actor.abort();
                cut.abandon();
                let held = self.shared.stats.held();
                error!(route_id = %self.shared.route_id, held, "resequencer actor missed the stop deadline; its held exchanges are lost");
                self.shared.lost(held);
                return Err(CamelError::Timeout("resequencer actor drain".into()));
            }
        };
        let ActorParts {
            mut policy,
            post_tx,
            unsent: mut out,
        } = parts;
        let keep = reason == ShutdownReason::HotSwap && self.on_swap == OnSwap::Handoff;
        if !keep {
            policy.flush(&mut out);
        }
        let flushed = out.len();
        let mut lost = Lost::default();
        // The intake is closed: what is left is bounded, so it goes without waiting for room.
        if let Err(gone) = post_tx.send_all(out) {
            lost.count += gone.0 as u64;
        }
        let state = policy.export(keep);
        self.shared.set_held(0);
        // The only sender: dropping it is what lets the post-driver finish.
        drop(post_tx);
        let undelivered = match timeout_at(deadline, &mut driver).await {
            Ok(finished) => finished,
            Err(_) => {
                // What was not started comes back at once. A stop abandons the call in
                // progress; a swap lets it finish on the old continuation, unawaited.
                if reason == ShutdownReason::HotSwap {
                    cut.detach();
                } else {
                    cut.abandon();
                }
                (&mut driver).await
            }
        };
        let undelivered = match undelivered {
            Ok(undelivered) => undelivered,
            Err(join) => {
                return Err(CamelError::processor(format!(
                    "resequencer post-driver failed: {join}"
                )))
            }
        };
        let Undelivered {
            releases,
            interrupted,
        } = undelivered;
        if let Some(id) = interrupted {
            lost.name(id);
        }
        let carried = releases.len();
        if reason == ShutdownReason::HotSwap {
            if let Ok(mut slot) = self.handed.lock() {
                *slot = Some(ResequencerHandover {
                    signature: self.signature.clone(),
                    state: Some(state),
                    undelivered: releases,
                });
            }
        } else {
            for release in releases {
                self.give_up(release, &mut lost);
            }
        }
        lost.report(&self.shared, reason, carried);
        debug!(route_id = %self.shared.route_id, ?reason, flushed, lost = lost.count, elapsed_us = started.elapsed().as_micros() as u64, "resequencer drained");
        Ok(Drained::lost(lost.count))
    }

    /// A release the stop's deadline cut off: an acknowledged exchange is lost, one the
    /// policy had already dropped stays dropped.
    fn give_up(&self, release: Release, lost: &mut Lost) {
        match release {
            Release::Deliver(exchange) if exchange.is_stopped() => {
                self.shared.count(Stat::SkippedStopped, 1);
            }
            Release::Deliver(exchange) => lost.name(exchange.id),
            Release::Drop {
                exchange,
                reason,
                dead_letter,
            } => {
                self.shared.dropped(reason);
                if dead_letter {
                    // It was owed to the dead letter, and never reached it.
                    lost.name(exchange.id);
                }
            }
        }
    }
}

/// Acknowledged exchanges given up on at a deadline: counted, and the first few named.
#[derive(Default)]
struct Lost {
    count: u64,
    named: Vec<ExchangeId>,
}

impl Lost {
    fn name(&mut self, id: ExchangeId) {
        self.count += 1;
        if self.named.len() < MAX_NAMED_LOST {
            self.named.push(id);
        }
    }

    /// One error line for the whole loss, and the counters.
    fn report(&self, shared: &Shared, reason: ShutdownReason, handed_over: usize) {
        if reason == ShutdownReason::HotSwap && handed_over > 0 {
            warn!(route_id = %shared.route_id, handed_over, "the swap's deadline passed before the old continuation delivered everything: the rest goes first through the new one");
        }
        if self.count == 0 {
            return;
        }
        shared.lost(self.count);
        let ids: Vec<String> = self.named.iter().map(ToString::to_string).collect();
        let unnamed = self.count - self.named.len() as u64;
        error!(
            route_id = %shared.route_id,
            step = %shared.step_name,
            lost = self.count,
            exchange_ids = %ids.join(","),
            unnamed,
            ?reason,
            "the deadline passed before the resequencer's continuation took these acknowledged exchanges; they are lost (camel_resequencer_lost_total)"
        );
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
        let deadline = Instant::now() + DEFAULT_DRAIN_TIMEOUT;
        match self.shutdown_by(reason, deadline).await? {
            Drained { lost: 0, .. } => Ok(()),
            Drained { lost, .. } => Err(CamelError::Timeout(
                format!("resequencer drain: {lost} acknowledged exchange(s) lost at the deadline")
                    .into(),
            )),
        }
    }

    async fn shutdown_by(
        &self,
        reason: ShutdownReason,
        deadline: Instant,
    ) -> Result<Drained, CamelError> {
        let mut phase = self.phase.lock().await;
        let current = match std::mem::replace(&mut *phase, Phase::Stopped) {
            // Never started: exchanges may wait in the input channel; run to drain them.
            Phase::Built { policy, input } => self.spawn(policy, input),
            other => other,
        };
        self.drain(reason, current, deadline).await
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
