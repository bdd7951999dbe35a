//! What a worker does while committed rows wait behind the visibility horizon (ADR 0032).
//!
//! On PostgreSQL a row is read only once every transaction that could still insert a row
//! before it has ended. Usually that is a few milliseconds; nothing wakes the worker when
//! it is over (an unrelated transaction's commit sends no notification), so the worker
//! reads again after a short delay that doubles up to the poll interval. A transaction
//! that stays open (a forgotten `BEGIN` in a console, a long report) holds every later
//! row back: the worker exports how long it has waited and warns, so such a stall is
//! never silent.

use std::time::Duration;

use tokio::time::Instant;

/// The first re-read delay after a page was held back.
const FIRST_RETRY: Duration = Duration::from_millis(2);

/// How long rows may wait before the worker warns (and again every this long).
pub(crate) const WARN_AFTER: Duration = Duration::from_secs(10);

/// The held-back state of one partition worker.
#[derive(Debug)]
pub(crate) struct HorizonWatch {
    max_retry: Duration,
    /// Since when rows wait, and behind which horizon; `None` while nothing waits.
    waiting: Option<Waiting>,
}

#[derive(Debug, Clone, Copy)]
struct Waiting {
    since: Instant,
    horizon: i64,
    retry: Duration,
    next_read: Instant,
    next_warning: Instant,
}

/// What the worker should do after reading a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Advice {
    /// Nothing to say.
    Quiet,
    /// Warn: rows have waited `waited` behind transaction `horizon`.
    Warn { horizon: i64, waited: Duration },
}

impl HorizonWatch {
    pub(crate) fn new(poll_interval: Duration) -> Self {
        HorizonWatch {
            max_retry: poll_interval.max(FIRST_RETRY),
            waiting: None,
        }
    }

    /// Records a page read at `now`: `held_back` with the horizon it was read at.
    pub(crate) fn on_page(&mut self, held_back: bool, horizon: i64, now: Instant) -> Advice {
        if !held_back {
            self.waiting = None;
            return Advice::Quiet;
        }
        let w = match self.waiting {
            Some(w) if w.horizon == horizon => Waiting {
                retry: (w.retry * 2).min(self.max_retry),
                ..w
            },
            // Nothing waited, or the transaction that held rows back ended and another
            // one holds them now (under a steady load of short transactions the horizon
            // moves all the time; only one that stays put is a stall).
            _ => Waiting {
                since: now,
                horizon,
                retry: FIRST_RETRY,
                next_read: now,
                next_warning: now + WARN_AFTER,
            },
        };
        let mut w = Waiting {
            next_read: now + w.retry,
            ..w
        };
        let advice = if now >= w.next_warning {
            w.next_warning = now + WARN_AFTER;
            Advice::Warn {
                horizon,
                waited: now - w.since,
            }
        } else {
            Advice::Quiet
        };
        self.waiting = Some(w);
        advice
    }

    /// True when the last page was held back at `horizon` too: the horizon has not moved
    /// between two reads.
    pub(crate) fn waiting_at(&self, horizon: i64) -> bool {
        self.waiting.is_some_and(|w| w.horizon == horizon)
    }

    /// When the worker should read again, while rows wait.
    pub(crate) fn next_read(&self) -> Option<Instant> {
        self.waiting.map(|w| w.next_read)
    }

    /// How long rows have waited at `now` (zero while nothing waits).
    pub(crate) fn waited(&self, now: Instant) -> Duration {
        self.waiting.map_or(Duration::ZERO, |w| now - w.since)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_double_up_to_the_poll_interval_and_reset_when_the_horizon_moves() {
        let t0 = Instant::now();
        let mut w = HorizonWatch::new(Duration::from_millis(10));
        assert_eq!(w.next_read(), None);
        w.on_page(true, 7, t0);
        assert_eq!(w.next_read(), Some(t0 + Duration::from_millis(2)));
        w.on_page(true, 7, t0);
        assert_eq!(w.next_read(), Some(t0 + Duration::from_millis(4)));
        for _ in 0..5 {
            w.on_page(true, 7, t0);
        }
        assert_eq!(w.next_read(), Some(t0 + Duration::from_millis(10)));
        w.on_page(true, 8, t0);
        assert_eq!(w.next_read(), Some(t0 + Duration::from_millis(2)));
        w.on_page(false, 9, t0);
        assert_eq!(w.next_read(), None);
        assert_eq!(w.waited(t0 + Duration::from_secs(1)), Duration::ZERO);
    }

    #[test]
    fn warns_after_the_limit_and_then_once_per_limit() {
        let t0 = Instant::now();
        let mut w = HorizonWatch::new(Duration::from_millis(500));
        assert_eq!(w.on_page(true, 7, t0), Advice::Quiet);
        let later = t0 + WARN_AFTER - Duration::from_millis(1);
        assert_eq!(w.on_page(true, 7, later), Advice::Quiet);
        let due = t0 + WARN_AFTER;
        assert_eq!(
            w.on_page(true, 7, due),
            Advice::Warn {
                horizon: 7,
                waited: WARN_AFTER
            }
        );
        assert_eq!(
            w.on_page(true, 7, due + Duration::from_secs(1)),
            Advice::Quiet
        );
        assert!(matches!(
            w.on_page(true, 7, due + WARN_AFTER),
            Advice::Warn { horizon: 7, waited } if waited == 2 * WARN_AFTER
        ));
        // Another transaction holds rows back now: its wait starts afresh.
        let moved = due + WARN_AFTER + Duration::from_secs(1);
        assert_eq!(w.on_page(true, 9, moved), Advice::Quiet);
        assert_eq!(
            w.waited(moved + Duration::from_secs(3)),
            Duration::from_secs(3)
        );
    }
}
