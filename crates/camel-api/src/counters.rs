//! A route's exchange counts, kept per thread and handed on in batches (ADR 0047).
//!
//! Counting an exchange adds to the calling thread's cell; a cell that reaches
//! [`RouteCounters::FLUSH_EVERY`] exchanges, or counts a failure, is emptied into the
//! route's [`CountSink`] (camel-core's sink feeds the `metrics` registry). The owner of the
//! route flushes every cell when it likes (periodically, and when the route stops), and
//! dropping the counters flushes what is left. Each count is taken out of its cell by
//! exactly one atomic swap, so the totals a sink receives are exact once flushed.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::stripe::Striped;

/// Where a route's counts go: exchanges run (successfully or not) and failures among them.
///
/// Called from whichever thread flushes, with counts since the previous call.
pub trait CountSink: Send + Sync + fmt::Debug + 'static {
    /// Adds `exchanges` exchanges, `failures` of which failed.
    fn add(&self, exchanges: u64, failures: u64);
}

#[derive(Debug, Default)]
struct Pending {
    exchanges: AtomicU64,
    failures: AtomicU64,
}

/// Counts of the exchanges a route runs, batched per thread before they reach a
/// [`CountSink`].
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
/// use camel_api::{CountSink, RouteCounters};
///
/// #[derive(Debug, Clone, Default)]
/// struct Totals(Arc<AtomicU64>);
/// impl CountSink for Totals {
///     fn add(&self, exchanges: u64, _failures: u64) {
///         self.0.fetch_add(exchanges, Ordering::Relaxed);
///     }
/// }
///
/// let totals = Totals::default();
/// let counters = RouteCounters::new(totals.clone());
/// counters.record(true);
/// counters.record(true);
/// assert_eq!(totals.0.load(Ordering::Relaxed), 0); // still batched
/// counters.flush();
/// assert_eq!(totals.0.load(Ordering::Relaxed), 2);
/// ```
pub struct RouteCounters {
    cells: Striped<Pending>,
    sink: Option<Box<dyn CountSink>>,
}

impl fmt::Debug for RouteCounters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RouteCounters")
            .field("sink", &self.sink)
            .finish_non_exhaustive()
    }
}

impl Default for RouteCounters {
    /// Counters that count nothing (no sink): for tests and tools.
    fn default() -> Self {
        RouteCounters {
            cells: Striped::default(),
            sink: None,
        }
    }
}

impl RouteCounters {
    /// Exchanges a thread counts before it hands them to the sink.
    pub const FLUSH_EVERY: u64 = 256;

    /// Counters that hand their counts to `sink`.
    pub fn new(sink: impl CountSink) -> Self {
        RouteCounters {
            cells: Striped::default(),
            sink: Some(Box::new(sink)),
        }
    }

    /// Counts one finished exchange. A failure is handed on at once (with whatever this
    /// thread had batched), so an alert on failures does not wait for a batch to fill.
    #[inline]
    pub fn record(&self, ok: bool) {
        if self.sink.is_none() {
            return;
        }
        let cell = self.cells.mine();
        let batched = cell.exchanges.fetch_add(1, Ordering::Relaxed) + 1;
        if !ok {
            cell.failures.fetch_add(1, Ordering::Relaxed);
        }
        if !ok || batched >= Self::FLUSH_EVERY {
            self.flush_cell(cell);
        }
    }

    /// Hands every thread's counts to the sink.
    pub fn flush(&self) {
        let Some(sink) = &self.sink else { return };
        let (mut exchanges, mut failures) = (0, 0);
        for cell in self.cells.iter() {
            exchanges += cell.exchanges.swap(0, Ordering::Relaxed);
            failures += cell.failures.swap(0, Ordering::Relaxed);
        }
        if exchanges > 0 || failures > 0 {
            sink.add(exchanges, failures);
        }
    }

    fn flush_cell(&self, cell: &Pending) {
        if let Some(sink) = &self.sink {
            let exchanges = cell.exchanges.swap(0, Ordering::Relaxed);
            let failures = cell.failures.swap(0, Ordering::Relaxed);
            if exchanges > 0 || failures > 0 {
                sink.add(exchanges, failures);
            }
        }
    }
}

impl Drop for RouteCounters {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[derive(Debug, Default)]
    struct Totals {
        exchanges: AtomicU64,
        failures: AtomicU64,
        calls: AtomicU64,
    }

    impl CountSink for Arc<Totals> {
        fn add(&self, exchanges: u64, failures: u64) {
            self.exchanges.fetch_add(exchanges, Ordering::Relaxed);
            self.failures.fetch_add(failures, Ordering::Relaxed);
            self.calls.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn totals(t: &Totals) -> (u64, u64) {
        (
            t.exchanges.load(Ordering::Relaxed),
            t.failures.load(Ordering::Relaxed),
        )
    }

    #[test]
    fn a_full_batch_and_a_failure_are_handed_on_at_once() {
        let sink = Arc::new(Totals::default());
        let counters = RouteCounters::new(sink.clone());
        for _ in 0..RouteCounters::FLUSH_EVERY - 1 {
            counters.record(true);
        }
        assert_eq!(totals(&sink), (0, 0));
        counters.record(true);
        assert_eq!(totals(&sink), (RouteCounters::FLUSH_EVERY, 0));
        counters.record(true);
        counters.record(false);
        assert_eq!(totals(&sink), (RouteCounters::FLUSH_EVERY + 2, 1));
    }

    #[test]
    fn totals_are_exact_after_a_flush_whatever_the_threads() {
        let sink = Arc::new(Totals::default());
        let counters = Arc::new(RouteCounters::new(sink.clone()));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let counters = counters.clone();
                std::thread::spawn(move || {
                    for i in 0..1001 {
                        counters.record(!(t == 3 && i % 10 == 0));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        counters.flush();
        assert_eq!(totals(&sink), (8 * 1001, 101));
        // Far fewer hand-overs than exchanges: the point of batching.
        assert!(sink.calls.load(Ordering::Relaxed) < 8 * 1001 / 4);
    }

    #[test]
    fn dropping_the_counters_flushes_them() {
        let sink = Arc::new(Totals::default());
        let counters = RouteCounters::new(sink.clone());
        counters.record(true);
        drop(counters);
        assert_eq!(totals(&sink), (1, 0));
    }
}
