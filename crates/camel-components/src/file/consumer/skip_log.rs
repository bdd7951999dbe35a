//! Rate-limited warnings about skipped entries.
//!
//! A FIFO or a dangling link left in a folder polled twice a second would otherwise log
//! two lines a second for as long as it stays. Each entry is reported when first skipped
//! and again at most once per [`REPEAT_AFTER`] while it keeps being skipped.

use std::collections::HashMap;
use std::time::Duration;

use tokio::time::Instant;

/// How long a skipped entry stays quiet after its warning.
pub(super) const REPEAT_AFTER: Duration = Duration::from_secs(60);

/// When each skipped entry was last reported.
///
/// Invariant: holds only names skipped by the latest poll, so it never outgrows the
/// folder, and an entry that comes back after being fixed is reported afresh.
#[derive(Debug, Default)]
pub(super) struct SkipLog {
    reported: HashMap<String, Instant>,
}

impl SkipLog {
    /// Takes the names skipped by one poll; returns those to report now.
    pub(super) fn due<'a>(
        &mut self,
        skipped: impl IntoIterator<Item = &'a str>,
        now: Instant,
    ) -> Vec<&'a str> {
        let mut kept = HashMap::new();
        let mut due = Vec::new();
        for name in skipped {
            let last = match self.reported.get(name) {
                Some(at) if now.duration_since(*at) < REPEAT_AFTER => *at,
                _ => {
                    due.push(name);
                    now
                }
            };
            kept.insert(name.to_string(), last);
        }
        self.reported = kept;
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_entry_is_reported_once_per_interval_and_afresh_after_a_gap() {
        let mut log = SkipLog::default();
        let start = Instant::now();
        assert_eq!(log.due(["fifo", "link"], start), ["fifo", "link"]);
        assert!(log
            .due(["fifo", "link"], start + Duration::from_secs(1))
            .is_empty());
        assert!(log
            .due(["fifo"], start + REPEAT_AFTER - Duration::from_millis(1))
            .is_empty());
        // `link` was not skipped by the last poll: forgotten, so reported again.
        assert_eq!(
            log.due(["fifo", "link"], start + REPEAT_AFTER),
            ["fifo", "link"]
        );
        assert_eq!(log.reported.len(), 2);
        assert!(log.due([], start + REPEAT_AFTER).is_empty());
        assert!(log.reported.is_empty());
    }
}
