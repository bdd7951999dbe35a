//! The actor: the only task that touches a policy's state.
//!
//! It reads accepted exchanges from the input channel, wakes at the policy's deadline,
//! and forwards what the policy releases to the post-driver, waiting while the
//! continuation's backlog is full (then it reads no input, the input channel fills and
//! callers wait). On stop it closes the input channel (callers still waiting for room are
//! refused, so they know their exchange was not accepted), takes what is already
//! buffered, and hands the policy, the releases not yet sent and the only post-driver
//! sender back to the lifecycle, which flushes, sends the rest and drops that sender.

use std::future::pending;
use std::sync::Arc;

use camel_api::Exchange;
use tokio::sync::{mpsc, oneshot};
use tokio::time::{sleep_until, Instant};
use tokio_util::sync::CancellationToken;
use tracing::warn;

use super::backlog::BacklogSender;
use super::error::ResequenceError;
use super::policy::{Release, ResequencePolicy};
use super::shared::Shared;

/// Exchanges taken from the input channel per wake-up: amortises the channel and the
/// clock read without letting one burst starve the timer.
const INTAKE_BATCH: usize = 256;

/// An exchange on its way to the policy, with its precomputed key.
pub(crate) struct Input<K> {
    pub(crate) exchange: Exchange,
    pub(crate) key: K,
    /// Present when the caller waits for the actor's verdict before its acknowledgement
    /// (`reject_old`): the actor answers after the policy took the exchange, or with the
    /// refusal instead. Absent, the exchange was acknowledged when it entered the channel.
    pub(crate) verdict: Option<oneshot::Sender<Result<(), ResequenceError>>>,
}

/// Hands one input to the policy, or refuses it when the policy says so and its caller
/// is waiting for a verdict. An exchange without a verdict was already acknowledged and
/// is always accepted.
fn take<P: ResequencePolicy>(
    policy: &mut P,
    input: Input<P::Key>,
    now: Instant,
    out: &mut Vec<Release>,
    shared: &Shared,
) {
    let Input {
        exchange,
        key,
        verdict,
    } = input;
    let Some(verdict) = verdict else {
        return policy.accept(exchange, key, now, out);
    };
    match policy.admit(&key) {
        Ok(()) => {
            policy.accept(exchange, key, now, out);
            // A caller that gave up waiting still had its exchange accepted: nothing to undo.
            let _ = verdict.send(Ok(()));
        }
        Err(refusal) => {
            shared.rejected(&refusal);
            let _ = verdict.send(Err(refusal));
        }
    }
}

/// What the actor returns when it stops: the policy, the post-driver sender it owned, and
/// the releases it had not sent yet (in order; they go before anything the flush adds).
pub(crate) struct ActorParts<P> {
    pub(crate) policy: P,
    pub(crate) post_tx: BacklogSender,
    pub(crate) unsent: Vec<Release>,
}

/// Runs until `stop` fires (or every intake handle is gone), then drains the input.
pub(crate) async fn run_actor<P: ResequencePolicy>(
    mut policy: P,
    mut input: mpsc::Receiver<Input<P::Key>>,
    post_tx: BacklogSender,
    stop: CancellationToken,
    first: Vec<Release>,
    shared: Arc<Shared>,
) -> ActorParts<P> {
    let mut out = first;
    let mut buf = Vec::with_capacity(INTAKE_BATCH);
    let mut driver_open = match forward(&post_tx, &mut out, &stop, &shared).await {
        Forwarded::Sent => true,
        Forwarded::Stopped => return drain_input(policy, input, post_tx, out, &shared).await,
        Forwarded::DriverGone => false,
    };
    let timer = sleep_until(Instant::now());
    tokio::pin!(timer);
    let mut armed: Option<Instant> = None;
    let mut intake_open = true;
    while driver_open {
        let due = policy.deadline();
        if due != armed {
            armed = due;
            if let Some(at) = due {
                timer.as_mut().reset(at);
            }
        }
        tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            // No more than the backlog has room for (at least one, to notice a closed
            // channel): what the actor holds between intake and backlog stays small, so
            // acknowledged-and-undelivered stays within the configured bounds.
            n = input.recv_many(&mut buf, post_tx.room().clamp(1, INTAKE_BATCH)), if intake_open => {
                // Zero means every intake handle is gone: keep serving the timer.
                intake_open = n > 0;
                let now = Instant::now();
                for item in buf.drain(..) {
                    take(&mut policy, item, now, &mut out, &shared);
                }
            }
            _ = async { if armed.is_some() { (&mut timer).await } else { pending().await } } => {
                armed = None;
                policy.on_deadline(Instant::now(), &mut out);
            }
        }
        shared.set_held(policy.held());
        match forward(&post_tx, &mut out, &stop, &shared).await {
            Forwarded::Sent => {}
            Forwarded::Stopped => break,
            Forwarded::DriverGone => driver_open = false,
        }
    }
    drain_input(policy, input, post_tx, out, &shared).await
}

/// After a stop: closes the input and takes what it still buffers into the policy.
async fn drain_input<P: ResequencePolicy>(
    mut policy: P,
    mut input: mpsc::Receiver<Input<P::Key>>,
    post_tx: BacklogSender,
    mut unsent: Vec<Release>,
    shared: &Shared,
) -> ActorParts<P> {
    input.close();
    // After `close` no new sender gets in, and `recv` still waits for one that already
    // holds a permit, so nothing acknowledged is left behind.
    while let Some(item) = input.recv().await {
        take(&mut policy, item, Instant::now(), &mut unsent, shared);
    }
    shared.set_held(policy.held());
    ActorParts {
        policy,
        post_tx,
        unsent,
    }
}

enum Forwarded {
    Sent,
    /// The stop came while waiting for room; what was not sent is still in `out`.
    Stopped,
    /// A broken invariant: the post-driver lives until the actor's sender is dropped.
    DriverGone,
}

/// Sends `out` to the post-driver as the backlog has room, or until `stop`.
async fn forward(
    post_tx: &BacklogSender,
    out: &mut Vec<Release>,
    stop: &CancellationToken,
    shared: &Shared,
) -> Forwarded {
    if out.is_empty() {
        return Forwarded::Sent;
    }
    tokio::select! {
        biased;
        sent = post_tx.send(out) => match sent {
            Ok(()) => Forwarded::Sent,
            Err(gone) => {
                warn!(route_id = %shared.route_id, lost = gone.0, "resequencer post-driver is gone");
                out.clear();
                Forwarded::DriverGone
            }
        },
        () = stop.cancelled() => Forwarded::Stopped,
    }
}
