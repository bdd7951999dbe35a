//! `readLock=changed`: a file is taken only once its size and modification time stayed
//! the same for `readLockCheckInterval`, seen by successive polls.
//!
//! A pure record of what each poll listed; the consumer asks [`ChangedLock::ready`] for
//! every candidate. A file that changed, or is seen for the first time, starts its wait
//! over; a file no longer listed is forgotten, so the record is as large as the folder's
//! listing at most.

use std::collections::HashMap;
use std::time::Duration;

use tokio::time::Instant;

#[derive(Debug)]
struct Seen {
    size: u64,
    modified: Option<i64>,
    since: Instant,
    poll: u64,
}

/// What the consumer saw of each file, poll after poll.
#[derive(Debug)]
pub(crate) struct ChangedLock {
    interval: Duration,
    min_length: u64,
    seen: HashMap<String, Seen>,
    poll: u64,
}

impl ChangedLock {
    pub(crate) fn new(interval: Duration, min_length: u64) -> Self {
        ChangedLock {
            interval,
            min_length,
            seen: HashMap::new(),
            poll: 0,
        }
    }

    /// Starts a poll: files not seen by the previous one are forgotten.
    pub(crate) fn begin_poll(&mut self) {
        let last = self.poll;
        self.seen.retain(|_, s| s.poll == last);
        self.poll += 1;
    }

    /// Whether the file at `path`, listed now with `size` and `modified`, may be taken.
    pub(crate) fn ready(
        &mut self,
        path: &str,
        size: u64,
        modified: Option<i64>,
        now: Instant,
    ) -> bool {
        let poll = self.poll;
        match self.seen.get_mut(path) {
            Some(s) if s.size == size && s.modified == modified => {
                s.poll = poll;
                now.duration_since(s.since) >= self.interval && size >= self.min_length
            }
            _ => {
                self.seen.insert(
                    path.to_string(),
                    Seen {
                        size,
                        modified,
                        since: now,
                        poll,
                    },
                );
                false
            }
        }
    }

    /// The file was taken: its record goes.
    pub(crate) fn forget(&mut self, path: &str) {
        self.seen.remove(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_ready_once_unchanged_for_the_interval() {
        let t0 = Instant::now();
        let mut lock = ChangedLock::new(Duration::from_secs(1), 1);
        lock.begin_poll();
        assert!(!lock.ready("a", 10, Some(1), t0), "first sight waits");
        lock.begin_poll();
        assert!(
            !lock.ready("a", 20, Some(2), t0 + Duration::from_millis(1500)),
            "grew: waits again"
        );
        lock.begin_poll();
        assert!(!lock.ready("a", 20, Some(2), t0 + Duration::from_millis(2000)));
        lock.begin_poll();
        assert!(lock.ready("a", 20, Some(2), t0 + Duration::from_millis(2600)));
    }

    #[test]
    fn an_empty_file_waits_for_the_minimum_length() {
        let t0 = Instant::now();
        let mut lock = ChangedLock::new(Duration::ZERO, 1);
        lock.begin_poll();
        assert!(!lock.ready("a", 0, None, t0));
        lock.begin_poll();
        assert!(!lock.ready("a", 0, None, t0 + Duration::from_secs(5)));
    }

    #[test]
    fn a_file_gone_from_a_listing_is_forgotten() {
        let t0 = Instant::now();
        let mut lock = ChangedLock::new(Duration::from_secs(1), 1);
        lock.begin_poll();
        lock.ready("a", 1, None, t0);
        lock.begin_poll();
        lock.begin_poll();
        assert!(lock.seen.is_empty());
    }
}
