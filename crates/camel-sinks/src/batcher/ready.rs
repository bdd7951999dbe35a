//! When a batch is ready: a pure decision over what could be sent now.
//!
//! Only *sendable* entries count: an entry whose group has a request in flight cannot be
//! in the next request, so counting it would make every newcomer of another group look
//! like the end of a full batch and leave alone (issue 18, item 7). The batcher keeps
//! one linger timer set to [`Readiness::deadline`]; this type holds no timer and reads
//! no clock, so it is tested with plain instants.

use std::time::Duration;

use tokio::time::Instant;

/// What is queued and could go into the next request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sendable {
    pub(crate) entries: usize,
    pub(crate) bytes: usize,
}

/// The batch limits and the linger clock of one batcher.
#[derive(Debug)]
pub(crate) struct Readiness {
    max_entries: usize,
    max_bytes: usize,
    linger: Duration,
    /// Since when the sendable entries have been waiting (the linger start); `None`
    /// while nothing is sendable.
    since: Option<Instant>,
}

impl Readiness {
    pub(crate) fn new(max_entries: usize, max_bytes: usize, linger: Duration) -> Self {
        Readiness {
            max_entries,
            max_bytes,
            linger,
            since: None,
        }
    }

    /// Entries became sendable that have been waiting since `waiting_since`: admitted
    /// now, or released by an answered request after waiting behind it (they do not
    /// linger a second time).
    pub(crate) fn became_sendable(&mut self, waiting_since: Instant) {
        self.since = Some(self.since.map_or(waiting_since, |s| s.min(waiting_since)));
    }

    /// A batch left at `now`; what is still sendable lingers from now.
    pub(crate) fn sent(&mut self, left: Sendable, now: Instant) {
        self.since = (left.entries > 0).then_some(now);
    }

    /// Forgets the linger start once nothing is sendable (entries swept away, or all
    /// blocked behind requests in flight).
    pub(crate) fn observe(&mut self, now_sendable: Sendable) {
        if now_sendable.entries == 0 {
            self.since = None;
        }
    }

    /// True when a request should be made now: a full batch is sendable, or sendable
    /// entries have lingered long enough, or the batcher is closing.
    pub(crate) fn is_ready(&self, sendable: Sendable, now: Instant, closing: bool) -> bool {
        if sendable.entries == 0 {
            return false;
        }
        closing
            || sendable.entries >= self.max_entries
            || sendable.bytes >= self.max_bytes
            || self.deadline().is_some_and(|d| now >= d)
    }

    /// When the linger of the sendable entries ends.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.since.map(|s| s + self.linger)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn load(entries: usize, bytes: usize) -> Sendable {
        Sendable { entries, bytes }
    }

    fn ten() -> Readiness {
        Readiness::new(10, 1000, 10 * MS)
    }

    #[test]
    fn nothing_sendable_is_never_ready() {
        let r = ten();
        let t = Instant::now();
        assert!(!r.is_ready(load(0, 0), t, true));
        assert_eq!(r.deadline(), None);
    }

    #[test]
    fn full_by_entries_or_bytes_is_ready_at_once() {
        let mut r = ten();
        let t = Instant::now();
        r.became_sendable(t);
        assert!(!r.is_ready(load(9, 999), t, false));
        assert!(r.is_ready(load(10, 10), t, false));
        assert!(r.is_ready(load(1, 1000), t, false));
    }

    #[test]
    fn a_short_batch_waits_for_its_linger() {
        let mut r = ten();
        let t = Instant::now();
        r.became_sendable(t);
        r.became_sendable(t + 5 * MS);
        assert_eq!(r.deadline(), Some(t + 10 * MS), "from the first entry");
        assert!(!r.is_ready(load(2, 2), t + 9 * MS, false));
        assert!(r.is_ready(load(2, 2), t + 10 * MS, false));
        assert!(r.is_ready(load(2, 2), t, true), "closing sends at once");
    }

    #[test]
    fn what_is_left_after_a_batch_lingers_from_then() {
        let mut r = ten();
        let t = Instant::now();
        r.became_sendable(t);
        r.sent(load(3, 3), t + 10 * MS);
        assert_eq!(r.deadline(), Some(t + 20 * MS));
        r.sent(load(0, 0), t + 20 * MS);
        assert_eq!(r.deadline(), None);
    }

    #[test]
    fn entries_released_after_waiting_do_not_linger_again() {
        let mut r = ten();
        let t = Instant::now();
        // Blocked since t behind their group's request; released at t + 50 ms.
        r.became_sendable(t);
        assert!(r.is_ready(load(1, 1), t + 50 * MS, false));
    }

    #[test]
    fn blocked_entries_do_not_keep_the_linger_running() {
        let mut r = ten();
        let t = Instant::now();
        r.became_sendable(t);
        // Everything queued is now behind a request in flight.
        r.observe(load(0, 0));
        assert_eq!(r.deadline(), None);
        // A newcomer of another group starts its own linger.
        r.became_sendable(t + 100 * MS);
        assert!(!r.is_ready(load(1, 1), t + 101 * MS, false));
        assert_eq!(r.deadline(), Some(t + 110 * MS));
    }
}
