//! The bounded queue behind one `seda:NAME`, shared by its producers and consumers.
//!
//! A `VecDeque` under a std mutex (held only for a push or a pop, never across an
//! `.await`) plus two `Notify`s: `not_empty` wakes consumers, `not_full` wakes producers
//! blocked on a full queue. Popping happens inside a single poll, so dropping a `pop`
//! future (a consumer cancelled mid-wait) never loses an entry.

use std::collections::VecDeque;
use std::pin::pin;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use camel_api::{CamelError, Exchange};
use tokio::sync::{oneshot, Notify};

/// One queued exchange, with the channel to answer when the producer waits for the
/// result (InOut).
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) exchange: Exchange,
    pub(crate) reply: Option<oneshot::Sender<Result<Exchange, CamelError>>>,
}

/// A bounded multi-producer, multi-consumer queue.
#[derive(Debug)]
pub(crate) struct SedaQueue {
    capacity: usize,
    items: Mutex<VecDeque<Entry>>,
    not_empty: Notify,
    not_full: Notify,
}

impl SedaQueue {
    pub(crate) fn new(capacity: usize) -> Self {
        SedaQueue {
            capacity,
            items: Mutex::new(VecDeque::new()),
            not_empty: Notify::new(),
            not_full: Notify::new(),
        }
    }

    /// The bound given when the queue was created.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Entries waiting.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<Entry>> {
        self.items.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `entry` if there is room; hands it back when the queue is full.
    // The entry comes back by value so the caller can retry it; boxing it would cost an
    // allocation per push on the happy path.
    #[allow(clippy::result_large_err)]
    pub(crate) fn try_push(&self, entry: Entry) -> Result<(), Entry> {
        let mut items = self.lock();
        if items.len() >= self.capacity {
            return Err(entry);
        }
        items.push_back(entry);
        drop(items);
        self.not_empty.notify_one();
        Ok(())
    }

    /// Queues `entry`, waiting for room at most `limit` (forever when `None`); hands it
    /// back when the time is up.
    pub(crate) async fn push(&self, entry: Entry, limit: Option<Duration>) -> Result<(), Entry> {
        let mut pending = Some(entry);
        let wait = async {
            loop {
                let mut room = pin!(self.not_full.notified());
                room.as_mut().enable();
                if let Some(entry) = pending.take() {
                    match self.try_push(entry) {
                        Ok(()) => return,
                        Err(entry) => pending = Some(entry),
                    }
                }
                room.await;
            }
        };
        match limit {
            None => wait.await,
            Some(limit) => {
                // On timeout the entry is still in `pending`, handed back below.
                let _ = tokio::time::timeout(limit, wait).await;
            }
        }
        pending.map_or(Ok(()), Err)
    }

    /// Puts an entry back at the head (a consumer took it but its route was closing);
    /// the bound is not checked, so this never fails or waits.
    pub(crate) fn push_front(&self, entry: Entry) {
        self.lock().push_front(entry);
        self.not_empty.notify_one();
    }

    /// Takes the oldest entry, waiting for one. Cancel-safe.
    pub(crate) async fn pop(&self) -> Entry {
        loop {
            let mut arrival = pin!(self.not_empty.notified());
            arrival.as_mut().enable();
            // The guard lives in this block only, so the future stays `Send`.
            let taken = {
                let mut items = self.lock();
                items.pop_front().map(|entry| (entry, !items.is_empty()))
            };
            if let Some((entry, more)) = taken {
                self.not_full.notify_one();
                if more {
                    // Pass the wake-up on: another consumer may be idle.
                    self.not_empty.notify_one();
                }
                return entry;
            }
            arrival.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> Entry {
        Entry {
            exchange: Exchange::new(text),
            reply: None,
        }
    }

    fn text(e: &Entry) -> String {
        e.exchange
            .message
            .body
            .as_text()
            .unwrap_or_default()
            .into_owned()
    }

    #[tokio::test]
    async fn keeps_order_and_bound() {
        let q = SedaQueue::new(2);
        q.try_push(entry("a")).unwrap();
        q.try_push(entry("b")).unwrap();
        assert!(q.try_push(entry("c")).is_err());
        assert_eq!(text(&q.pop().await), "a");
        q.try_push(entry("c")).unwrap();
        assert_eq!(text(&q.pop().await), "b");
        assert_eq!(text(&q.pop().await), "c");
        assert_eq!(q.len(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn blocked_push_waits_for_room_or_gives_up() {
        let q = std::sync::Arc::new(SedaQueue::new(1));
        q.try_push(entry("a")).unwrap();
        let refused = q.push(entry("b"), Some(Duration::from_secs(1))).await;
        assert_eq!(text(&refused.unwrap_err()), "b");

        let q2 = q.clone();
        let pusher = tokio::spawn(async move { q2.push(entry("c"), None).await.is_ok() });
        tokio::task::yield_now().await;
        assert!(!pusher.is_finished());
        assert_eq!(text(&q.pop().await), "a");
        assert!(pusher.await.unwrap());
        assert_eq!(text(&q.pop().await), "c");
    }

    #[tokio::test]
    async fn a_dropped_pop_loses_nothing() {
        let q = SedaQueue::new(4);
        {
            let waiting = q.pop();
            tokio::pin!(waiting);
            assert!(futures_poll_once(waiting.as_mut()).await.is_none());
        }
        q.try_push(entry("x")).unwrap();
        q.push_front(entry("w"));
        assert_eq!(text(&q.pop().await), "w");
        assert_eq!(text(&q.pop().await), "x");
    }

    async fn futures_poll_once<F: std::future::Future + Unpin>(fut: F) -> Option<F::Output> {
        tokio::select! {
            biased;
            out = fut => Some(out),
            () = std::future::ready(()) => None,
        }
    }
}
