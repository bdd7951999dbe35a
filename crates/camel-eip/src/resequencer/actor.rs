//! The actor: the only task that touches a policy's state.
//!
//! It reads accepted exchanges from the input channel, wakes at the policy's deadline,
//! and forwards what the policy releases to the post-driver. On stop it closes the input
//! channel (callers still waiting for room are refused, so they know their exchange was
//! not accepted), takes what is already buffered, and hands the policy and the only
//! post-driver sender back to the lifecycle, which flushes and then drops that sender.

use std::future::pending;
use std::sync::Arc;

use camel_api::Exchange;
use tokio::sync::{mpsc, oneshot};
use tokio::time::{sleep_until, Instant};
use tokio_util::sync::CancellationToken;
use tracing::warn;

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

/// What the actor returns when it stops: the policy and the post-driver sender it owned.
pub(crate) struct ActorParts<P> {
    pub(crate) policy: P,
    pub(crate) post_tx: mpsc::Sender<Vec<Release>>,
}

/// Runs until `stop` fires (or every intake handle is gone), then drains the input.
pub(crate) async fn run_actor<P: ResequencePolicy>(
    mut policy: P,
    mut input: mpsc::Receiver<Input<P::Key>>,
    post_tx: mpsc::Sender<Vec<Release>>,
    stop: CancellationToken,
    first: Vec<Release>,
    shared: Arc<Shared>,
) -> ActorParts<P> {
    let mut out = first;
    let mut buf = Vec::with_capacity(INTAKE_BATCH);
    let mut driver_open = forward(&post_tx, &mut out, &shared).await;
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
            n = input.recv_many(&mut buf, INTAKE_BATCH), if intake_open => {
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
        driver_open = forward(&post_tx, &mut out, &shared).await;
        shared.set_held(policy.held());
    }
    input.close();
    // After `close` no new sender gets in, and `recv` still waits for one that already
    // holds a permit, so nothing acknowledged is left behind.
    while let Some(item) = input.recv().await {
        take(&mut policy, item, Instant::now(), &mut out, &shared);
    }
    forward(&post_tx, &mut out, &shared).await;
    shared.set_held(policy.held());
    ActorParts { policy, post_tx }
}

/// Sends `out` to the post-driver; false when the post-driver is gone (a broken
/// invariant: it lives until the actor's sender is dropped).
pub(crate) async fn forward(
    post_tx: &mpsc::Sender<Vec<Release>>,
    out: &mut Vec<Release>,
    shared: &Shared,
) -> bool {
    if out.is_empty() {
        return true;
    }
    // The next wake-up's buffer starts at this one's size: bursts stay free of regrowth,
    // a trickle stays small.
    let size = out.len();
    let batch = std::mem::replace(out, Vec::with_capacity(size));
    if let Err(e) = post_tx.send(batch).await {
        warn!(route_id = %shared.route_id, lost = e.0.len(), "resequencer post-driver is gone");
        return false;
    }
    true
}
