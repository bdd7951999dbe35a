//! The pure parts of completion: why a group completed, the per-group inactivity
//! deadlines, and the closed keys.
//!
//! Invariants: a key has at most one deadline (`by_key` and `queue` hold the same pairs);
//! the closed-key set never holds more than its bound.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::fmt;

use tokio::time::Instant;

/// Why a group completed: the value of `CamelAggregatedCompletedBy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletedBy {
    /// `completion_size` (or its expression) reached.
    Size,
    /// `completion_timeout` after the group's last exchange.
    Timeout,
    /// `completion_interval` ticked.
    Interval,
    /// `completion_predicate` held.
    Predicate,
    /// A batch consumer's batch was complete.
    Consumer,
    /// The route stopped with `force_completion_on_stop`.
    Force,
    /// Another correlation group started (`completion_on_new_correlation_group`).
    NewCorrelationGroup,
}

impl CompletedBy {
    /// Camel's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            CompletedBy::Size => "size",
            CompletedBy::Timeout => "timeout",
            CompletedBy::Interval => "interval",
            CompletedBy::Predicate => "predicate",
            CompletedBy::Consumer => "consumer",
            CompletedBy::Force => "force",
            CompletedBy::NewCorrelationGroup => "new",
        }
    }
}

impl fmt::Display for CompletedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One inactivity deadline per open group.
#[derive(Debug, Default)]
pub(crate) struct Deadlines {
    by_key: HashMap<String, Instant>,
    queue: BTreeSet<(Instant, String)>,
}

impl Deadlines {
    /// (Re-)arms `key` to fire at `at`.
    pub(crate) fn arm(&mut self, key: &str, at: Instant) {
        if let Some(old) = self.by_key.insert(key.to_string(), at) {
            self.queue.remove(&(old, key.to_string()));
        }
        self.queue.insert((at, key.to_string()));
    }

    /// Forgets `key`'s deadline.
    pub(crate) fn disarm(&mut self, key: &str) {
        if let Some(old) = self.by_key.remove(key) {
            self.queue.remove(&(old, key.to_string()));
        }
    }

    /// The earliest deadline.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.queue.first().map(|(at, _)| *at)
    }

    /// Takes the keys due at `now`.
    pub(crate) fn take_due(&mut self, now: Instant) -> Vec<String> {
        let mut due = Vec::new();
        while let Some((at, _)) = self.queue.first() {
            if *at > now {
                break;
            }
            if let Some((_, key)) = self.queue.pop_first() {
                self.by_key.remove(&key);
                due.push(key);
            }
        }
        due
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.by_key.len()
    }
}

/// Keys whose group completed, refused afterwards (`close_correlation_key_on_completion`).
/// The oldest closed key is forgotten first once `bound` is reached (0: no bound).
#[derive(Debug, Default)]
pub(crate) struct ClosedKeys {
    bound: usize,
    set: HashSet<String>,
    order: VecDeque<String>,
}

impl ClosedKeys {
    pub(crate) fn new(bound: usize) -> Self {
        ClosedKeys {
            bound,
            ..Default::default()
        }
    }

    pub(crate) fn close(&mut self, key: &str) {
        if !self.set.insert(key.to_string()) {
            return;
        }
        self.order.push_back(key.to_string());
        if self.bound > 0 && self.order.len() > self.bound {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
    }

    pub(crate) fn contains(&self, key: &str) -> bool {
        self.set.contains(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn rearming_moves_the_deadline() {
        let t0 = Instant::now();
        let mut d = Deadlines::default();
        d.arm("a", t0 + Duration::from_secs(1));
        d.arm("b", t0 + Duration::from_secs(2));
        d.arm("a", t0 + Duration::from_secs(3));
        assert_eq!(d.next(), Some(t0 + Duration::from_secs(2)));
        assert_eq!(d.take_due(t0 + Duration::from_secs(2)), ["b"]);
        assert!(d.take_due(t0 + Duration::from_secs(2)).is_empty());
        d.disarm("a");
        assert_eq!(d.len(), 0);
        assert_eq!(d.next(), None);
    }

    #[test]
    fn closed_keys_are_bounded() {
        let mut c = ClosedKeys::new(2);
        for k in ["a", "b", "c"] {
            c.close(k);
        }
        assert!(!c.contains("a"));
        assert!(c.contains("b") && c.contains("c"));
    }
}
