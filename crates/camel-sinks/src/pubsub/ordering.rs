//! One ordering key at a time, and in order across a failure.
//!
//! Each key has a lock, so its messages never run at the same time in this process,
//! whichever pull loop got them. After a message of a key fails, the key keeps a
//! *pending order*: the failed message, then every later message of the key this
//! process has handed back unrun, in the order first seen. Until that list is worked
//! off, a pull's messages of the key run only as far as they were delivered in that
//! order — the failed message first; the others go back to Pub/Sub in the list's order
//! (joining its end if new).
//!
//! The list is needed because the emulator does not redeliver a key in publish order:
//! it appends handed-back messages to the key's queue in the order they were handed
//! back, behind the key's messages not yet delivered. After `k-3` fails (with `k-4` from
//! the same pull) it delivers `k-5, k-6`, then `k-7…k-9, k-3, k-4`. And like Pub/Sub it
//! redelivers, with a handed-back message, every message of the key delivered after it,
//! acknowledged or not. So the consumer neither runs `k-3` out of such a pull (it would
//! come back after `k-9`) nor hands the pull back as delivered (the emulator would offer
//! the same order forever, what the first version did): it hands back everything in the
//! list's order, and the emulator then delivers `k-3…k-9` as they must run.
//!
//! The list holds message ids only, for messages of the key handed back within the
//! last `give_up_after`: when the head has not come back for that long (acknowledged
//! elsewhere, or dead-lettered), the key's order is given up and its messages run as
//! delivered.
//!
//! ```text
//! let keys = OrderingKeys::new(Duration::from_secs(60));
//! let lock = keys.lock("k");
//! let _held = lock.lock().await;
//! let (run, hand_back) = keys.plan("k", pulled, |m| m.id.clone());
//! ```

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

/// The ids a key must run in, and when it last made progress.
#[derive(Debug)]
struct Pending {
    order: VecDeque<String>,
    since: Instant,
}

/// The locks and pending orders of the ordering keys of one consumer.
#[derive(Debug)]
pub(crate) struct OrderingKeys {
    /// An entry lives while some run holds or waits for the key's lock, so this map
    /// holds at most one entry per message in flight.
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    pending: Mutex<HashMap<String, Pending>>,
    give_up_after: Duration,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl OrderingKeys {
    pub(crate) fn new(give_up_after: Duration) -> Self {
        OrderingKeys {
            locks: Mutex::default(),
            pending: Mutex::default(),
            give_up_after,
        }
    }

    /// The lock of `key`; hand it back through [`OrderingKeys::release`].
    pub(crate) fn lock(&self, key: &str) -> Arc<tokio::sync::Mutex<()>> {
        lock(&self.locks)
            .entry(key.to_string())
            .or_default()
            .clone()
    }

    /// Forgets `key`'s lock once no run holds or waits for it.
    pub(crate) fn release(&self, key: &str, held: Arc<tokio::sync::Mutex<()>>) {
        let mut locks = lock(&self.locks);
        drop(held);
        if locks.get(key).is_some_and(|l| Arc::strong_count(l) == 1) {
            locks.remove(key);
        }
    }

    /// Splits a pull's messages of `key` (in the order delivered) into those to run now,
    /// in this order, and those to hand back unrun. Call it holding the key's lock.
    pub(crate) fn plan<M>(
        &self,
        key: &str,
        mut messages: Vec<M>,
        id: impl Fn(&M) -> &str,
    ) -> (Vec<M>, Vec<M>) {
        let mut pending = lock(&self.pending);
        let Some(p) = pending.get_mut(key) else {
            return (messages, Vec::new());
        };
        if p.since.elapsed() >= self.give_up_after {
            tracing::warn!(ordering_key = key, waiting_for = ?p.order.front(),
                "a failed message of the ordering key did not come back; its order is given up");
            pending.remove(key);
            return (messages, Vec::new());
        }
        // Only a delivered prefix that follows the pending order runs: acknowledging a
        // message delivered after one handed back would not stick, as Pub/Sub
        // redelivers a handed-back message with everything delivered after it.
        let matched = messages
            .iter()
            .zip(&p.order)
            .take_while(|(m, wanted)| id(m) == wanted.as_str())
            .count();
        let mut rest = messages.split_off(matched);
        if matched == p.order.len() {
            // The whole list ran or runs now: what follows it is new and may run too.
            messages.append(&mut rest);
            return (messages, Vec::new());
        }
        for m in &rest {
            if !p.order.iter().any(|known| known == id(m)) {
                p.order.push_back(id(m).to_string());
            }
        }
        // Handed back in the pending order, which the emulator then delivers them in.
        let at = |m: &M| p.order.iter().position(|known| known == id(m));
        rest.sort_by_key(|m| at(m));
        (messages, rest)
    }

    /// `message_id` of `key` succeeded.
    pub(crate) fn done(&self, key: &str, message_id: &str) {
        let mut pending = lock(&self.pending);
        if let Some(p) = pending.get_mut(key) {
            if p.order.front().is_some_and(|head| head == message_id) {
                p.order.pop_front();
                p.since = Instant::now();
            }
            if p.order.is_empty() {
                pending.remove(key);
            }
        }
    }

    /// The first of `unrun` (ids of `key`, in the order planned) failed: they go back,
    /// and the key waits for them in this order.
    pub(crate) fn failed(&self, key: &str, unrun: impl IntoIterator<Item = String>) {
        let mut pending = lock(&self.pending);
        let p = pending.entry(key.to_string()).or_insert_with(|| Pending {
            order: VecDeque::new(),
            since: Instant::now(),
        });
        p.since = Instant::now();
        for id in unrun {
            if !p.order.contains(&id) {
                p.order.push_back(id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn plan(keys: &OrderingKeys, got: &[&str]) -> (Vec<String>, Vec<String>) {
        keys.plan("k", ids(got), |m| m.as_str())
    }

    #[test]
    fn without_a_failure_everything_runs_as_delivered() {
        let keys = OrderingKeys::new(Duration::from_secs(60));
        assert_eq!(plan(&keys, &["1", "2"]), (ids(&["1", "2"]), vec![]));
    }

    #[test]
    fn after_a_failure_the_key_runs_only_in_its_order() {
        let keys = OrderingKeys::new(Duration::from_secs(60));
        // 3 failed with 4 behind it in the same pull.
        keys.failed("k", ids(&["3", "4"]));
        // The emulator offers the key's later messages first: back, remembered after 4.
        assert_eq!(plan(&keys, &["5", "6"]), (vec![], ids(&["5", "6"])));
        // Then the rest with the handed-back ones behind: all back, in the key's order.
        assert_eq!(
            plan(&keys, &["7", "8", "3", "4"]),
            (vec![], ids(&["3", "4", "7", "8"]))
        );
        // Delivered in order up to a gap: the prefix runs, the rest goes back in order.
        assert_eq!(
            plan(&keys, &["3", "4", "7", "5"]),
            (ids(&["3", "4"]), ids(&["5", "7"]))
        );
        keys.done("k", "3");
        keys.done("k", "4");
        // The whole list delivered in order, and a new one behind it: all run.
        assert_eq!(
            plan(&keys, &["5", "6", "7", "8", "9"]),
            (ids(&["5", "6", "7", "8", "9"]), vec![])
        );
        for id in ["5", "6", "7", "8"] {
            keys.done("k", id);
        }
        assert_eq!(plan(&keys, &["10"]), (ids(&["10"]), vec![]));
    }

    #[test]
    fn a_second_failure_keeps_the_rest_of_the_order() {
        let keys = OrderingKeys::new(Duration::from_secs(60));
        keys.failed("k", ids(&["3", "4", "5"]));
        assert_eq!(plan(&keys, &["3", "4"]), (ids(&["3", "4"]), vec![]));
        keys.done("k", "3");
        keys.failed("k", ids(&["4"]));
        assert_eq!(plan(&keys, &["5"]), (vec![], ids(&["5"])));
        assert_eq!(
            plan(&keys, &["4", "5", "6"]),
            (ids(&["4", "5", "6"]), vec![])
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_head_that_never_comes_back_is_given_up() {
        let keys = OrderingKeys::new(Duration::from_secs(60));
        keys.failed("k", ids(&["3"]));
        assert_eq!(plan(&keys, &["4"]), (vec![], ids(&["4"])));
        tokio::time::advance(Duration::from_secs(61)).await;
        assert_eq!(plan(&keys, &["4"]), (ids(&["4"]), vec![]));
    }
}
