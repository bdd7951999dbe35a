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
use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};
use tokio_util::sync::CancellationToken;
use tracing::warn;

use super::policy::{Release, ResequencePolicy};
use super::shared::Shared;

/// Exchanges taken from the input channel per wake-up: amortises the channel and the
/// clock read without letting one burst starve the timer.
const INTAKE_BATCH: usize = 256;

/// An accepted exchange with its precomputed key.
pub(crate) type Input<K> = (Exchange, K);

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
                for (exchange, key) in buf.drain(..) {
                    policy.accept(exchange, key, now, &mut out);
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
    while let Some((exchange, key)) = input.recv().await {
        policy.accept(exchange, key, Instant::now(), &mut out);
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
