//! How many failure warnings a consumer may log.
//!
//! A poison message, or a queue full of them, fails over and over; one WARN per failure
//! would let whoever publishes such messages fill the log. A consumer gets
//! [`PER_WINDOW`] warnings per [`WINDOW`]; the rest are counted, and the next warning
//! that may be logged says how many were left out.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// Length of one budget window.
pub(crate) const WINDOW: Duration = Duration::from_secs(10);
/// Warnings a consumer may log per window.
pub(crate) const PER_WINDOW: u32 = 10;

/// The budget of one consumer, shared by its delivery tasks.
#[derive(Debug)]
pub(crate) struct LogBudget {
    window: Mutex<Window>,
}

impl LogBudget {
    pub(crate) fn new() -> Self {
        LogBudget {
            window: Mutex::new(Window::default()),
        }
    }

    /// `Some(left_out)` when a warning may be logged now (`left_out`: how many were not
    /// logged since the last one that was), `None` when it must be left out.
    pub(crate) fn admit(&self) -> Option<u64> {
        let now = Instant::now();
        // A poisoned lock only means another task panicked mid-update of two counters.
        let mut window = self.window.lock().unwrap_or_else(|p| p.into_inner());
        window.admit(now, WINDOW, PER_WINDOW)
    }
}

/// The pure decision: counts per window, no clock of its own.
#[derive(Debug, Default)]
struct Window {
    started: Option<Instant>,
    used: u32,
    left_out: u64,
}

impl Window {
    fn admit(&mut self, now: Instant, length: Duration, per_window: u32) -> Option<u64> {
        let expired = self
            .started
            .is_none_or(|started| now.saturating_duration_since(started) >= length);
        if expired {
            self.started = Some(now);
            self.used = 0;
        }
        if self.used < per_window {
            self.used += 1;
            Some(std::mem::take(&mut self.left_out))
        } else {
            self.left_out += 1;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_cut_to_the_budget_and_the_left_out_are_counted() {
        let start = Instant::now();
        let mut w = Window::default();
        let length = Duration::from_secs(10);
        let admitted = (0..1000)
            .filter(|i| {
                w.admit(start + Duration::from_millis(*i), length, 10)
                    .is_some()
            })
            .count();
        assert_eq!(admitted, 10, "one window, ten warnings");
        // The next window's first warning reports the 990 left out.
        assert_eq!(w.admit(start + length, length, 10), Some(990));
        assert_eq!(w.admit(start + length, length, 10), Some(0));
    }

    #[test]
    fn a_quiet_consumer_logs_every_warning() {
        let start = Instant::now();
        let mut w = Window::default();
        for i in 0..50 {
            let at = start + Duration::from_secs(2 * i);
            assert_eq!(w.admit(at, Duration::from_secs(10), 10), Some(0));
        }
    }
}
