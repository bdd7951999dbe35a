//! The channel from the actor to the post-driver, bounded in exchanges, not in batches.
//!
//! A release can be one exchange or a whole burst (a batch, a gap filled), so a channel
//! bounded in messages bounds nothing useful: sixteen bursts of 256 are 4,096 exchanges
//! acknowledged and not yet delivered. Here the actor takes one permit per exchange
//! before it sends, and the post-driver gives each back once that exchange is done. With
//! the backlog full the actor waits, stops reading the input channel, the channel fills
//! and the route's callers wait: backpressure reaches the consumer.
//!
//! The drain at a stop sends what is left without permits ([`BacklogSender::send_all`]):
//! the intake is closed by then, so what is sent is bounded already, and the stop's
//! deadline (not the bound) decides how much of it is delivered.

use std::sync::Arc;

use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};

use super::policy::Release;

/// Releases in flight to the post-driver, with the permits they hold.
pub(crate) struct Batch {
    pub(crate) releases: Vec<Release>,
    /// One permit per release; `None` for the drain's final sends.
    pub(crate) permit: Option<OwnedSemaphorePermit>,
}

impl Batch {
    /// Gives back the permits of `n` releases that are done (the rest go back when the
    /// batch is dropped).
    pub(crate) fn release(&mut self, n: usize) {
        if let Some(permit) = &mut self.permit {
            drop(permit.split(n.min(permit.num_permits())));
        }
    }
}

/// The post-driver is gone (a broken invariant: it lives until the only sender is dropped).
#[derive(Debug)]
pub(crate) struct Gone(pub(crate) usize);

/// The actor's end; there is exactly one, so dropping it ends the post-driver.
pub(crate) struct BacklogSender {
    tx: mpsc::UnboundedSender<Batch>,
    room: Arc<Semaphore>,
    #[cfg_attr(not(test), allow(dead_code))]
    bound: usize,
    /// Room a waiting sender waits for before it sends again: a quarter of `bound`.
    wake_after: usize,
}

/// A backlog of at most `bound` exchanges (at least one).
pub(crate) fn backlog(bound: usize) -> (BacklogSender, mpsc::UnboundedReceiver<Batch>) {
    let bound = bound.clamp(1, Semaphore::MAX_PERMITS);
    let (tx, rx) = mpsc::unbounded_channel();
    let room = Arc::new(Semaphore::new(bound));
    let wake_after = (bound / 4).max(1);
    (
        BacklogSender {
            tx,
            room,
            bound,
            wake_after,
        },
        rx,
    )
}

impl BacklogSender {
    /// Sends `out` as room frees up. Waiting, it waits for a quarter of the bound (or all
    /// of `out`, if less) rather than for each exchange's room: the post-driver still has
    /// three quarters of a backlog to work on, and the actor is woken once per quarter
    /// instead of once per returned permit. It then takes whatever room there is.
    ///
    /// Cancel-safe: dropped while waiting for room, whatever was not sent stays in `out`,
    /// in order.
    pub(crate) async fn send(&self, out: &mut Vec<Release>) -> Result<(), Gone> {
        while !out.is_empty() {
            let first = out.len().min(self.wake_after);
            // `first` is at most `bound`, which fits a u32 (`Semaphore::MAX_PERMITS`).
            let Ok(mut permit) = self.room.clone().acquire_many_owned(first as u32).await else {
                // Never closed: the semaphore lives as long as this sender.
                return Err(Gone(out.len()));
            };
            let more = (out.len() - first).min(self.room.available_permits());
            if let Ok(extra) = self.room.clone().try_acquire_many_owned(more as u32) {
                permit.merge(extra);
            }
            let n = permit.num_permits();
            let releases = if n == out.len() {
                // The next wake-up's buffer starts at this one's size: bursts stay free of
                // regrowth, a trickle stays small.
                std::mem::replace(out, Vec::with_capacity(n))
            } else {
                out.drain(..n).collect()
            };
            let batch = Batch {
                releases,
                permit: Some(permit),
            };
            if let Err(e) = self.tx.send(batch) {
                return Err(Gone(e.0.releases.len() + out.len()));
            }
        }
        Ok(())
    }

    /// Sends `out` at once, without waiting for room: only for the drain, once nothing new
    /// can be accepted.
    pub(crate) fn send_all(&self, out: Vec<Release>) -> Result<(), Gone> {
        if out.is_empty() {
            return Ok(());
        }
        let batch = Batch {
            releases: out,
            permit: None,
        };
        self.tx.send(batch).map_err(|e| Gone(e.0.releases.len()))
    }

    /// Exchanges that can be sent now without waiting.
    pub(crate) fn room(&self) -> usize {
        self.room.available_permits()
    }

    /// Exchanges sent and not yet done.
    #[cfg(test)]
    pub(crate) fn in_backlog(&self) -> usize {
        self.bound - self.room.available_permits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use camel_api::Exchange;

    fn releases(n: usize) -> Vec<Release> {
        (0..n)
            .map(|_| Release::Deliver(Exchange::default()))
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_larger_than_the_bound_waits_for_room() {
        let (tx, mut rx) = backlog(4);
        let mut out = releases(10);
        {
            let send = tx.send(&mut out);
            tokio::pin!(send);
            // Four go at once; the fifth needs room.
            assert!(futures::poll!(&mut send).is_pending());
        }
        assert_eq!(out.len(), 6, "the unsent stay, in order");
        assert_eq!(tx.in_backlog(), 4);
        let mut first = rx.recv().await.unwrap();
        assert_eq!(first.releases.len(), 4);
        first.release(2);
        // Room for two: a batch of two goes, the other four wait.
        {
            let send = tx.send(&mut out);
            tokio::pin!(send);
            assert!(futures::poll!(&mut send).is_pending());
        }
        assert_eq!(out.len(), 4);
        let second = rx.recv().await.unwrap();
        assert_eq!(second.releases.len(), 2);
        assert_eq!(tx.in_backlog(), 4);
        drop(first);
        // The first batch's two unreleased permits came back with it.
        assert_eq!(tx.in_backlog(), 2);
        drop(second);
        assert_eq!(tx.in_backlog(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn the_drain_sends_everything_at_once() {
        let (tx, mut rx) = backlog(2);
        tx.send_all(releases(50)).unwrap();
        let batch = rx.recv().await.unwrap();
        assert_eq!(batch.releases.len(), 50);
        assert!(batch.permit.is_none());
        assert_eq!(tx.in_backlog(), 0);
    }
}
