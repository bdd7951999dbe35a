//! What the intake, the actor and the post-driver of one resequencer share: counters a
//! test or an admin page can read, metric handles, and the InOut warning rate limit.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use metrics::{Counter, Gauge};
use tokio::time::Instant;

use super::error::ResequenceError;
use super::policy::DropReason;

/// The InOut warning is logged at most once per this interval per route.
pub(crate) const INOUT_WARN_INTERVAL: Duration = Duration::from_secs(30);

/// Live counters of one resequencer instance.
#[derive(Debug, Default)]
pub struct ResequencerStats {
    accepted: AtomicU64,
    delivered: AtomicU64,
    failed: AtomicU64,
    skipped_stopped: AtomicU64,
    dropped: AtomicU64,
    dead_lettered: AtomicU64,
    rejected_old: AtomicU64,
    held: AtomicU64,
    lost: AtomicU64,
    inout_warnings_logged: AtomicU64,
}

macro_rules! getters {
    ($($(#[$doc:meta])* $name:ident),*) => {
        impl ResequencerStats {
            $($(#[$doc])* pub fn $name(&self) -> u64 { self.$name.load(Ordering::Relaxed) })*
        }
    };
}

getters!(
    /// Exchanges that entered the input channel (were acknowledged).
    accepted,
    /// Exchanges the continuation completed successfully.
    delivered,
    /// Exchanges the continuation failed.
    failed,
    /// Exchanges skipped by the post-driver because they were stopped.
    skipped_stopped,
    /// Exchanges released as dropped (any reason), dead-lettered or not.
    dropped,
    /// Exchanges the dead-letter processor took successfully.
    dead_lettered,
    /// Calls refused with `RejectedOld` under `reject_old` (never accepted, so not
    /// counted as dropped).
    rejected_old,
    /// Exchanges held by the policy right now.
    held,
    /// Acknowledged exchanges given up on because a stop (or a swap) reached its deadline
    /// before the continuation could take them.
    lost,
    /// InOut warnings actually logged (after rate limiting).
    inout_warnings_logged
);

/// State shared by the parts of one resequencer.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) route_id: Arc<str>,
    pub(crate) step_name: Arc<str>,
    pub(crate) stats: Arc<ResequencerStats>,
    pub(crate) held_gauge: Gauge,
    pub(crate) inout_warnings: Counter,
    pub(crate) post_ack_failures: Counter,
    pub(crate) rejected_old: Counter,
    pub(crate) lost: Counter,
}

/// When each route last logged the InOut warning. Keyed by route rather than held per
/// instance, so a hot swap (a new instance) does not reset the rate limit. Touched only
/// for request-reply exchanges.
static LAST_INOUT_WARN: LazyLock<Mutex<HashMap<Arc<str>, Instant>>> = LazyLock::new(Mutex::default);

impl Shared {
    pub(crate) fn new(route_id: &str, step_name: &str) -> Self {
        let route = route_id.to_string();
        Shared {
            route_id: route_id.into(),
            step_name: step_name.into(),
            stats: Arc::default(),
            held_gauge: metrics::gauge!("camel_resequencer_held", "routeId" => route.clone(), "route" => route.clone()),
            inout_warnings: metrics::counter!(
                "camel_resequencer_inout_warnings_total",
                "routeId" => route.clone(), "route" => route.clone()
            ),
            post_ack_failures: metrics::counter!(
                "camel_resequencer_post_ack_failures_total",
                "routeId" => route.clone(), "route" => route.clone()
            ),
            rejected_old: metrics::counter!(
                "camel_resequencer_rejected_total",
                "routeId" => route.clone(), "route" => route.clone(),
                "reason" => "old"
            ),
            lost: metrics::counter!("camel_resequencer_lost_total", "routeId" => route.clone(), "route" => route),
        }
    }

    pub(crate) fn count(&self, counter: Stat, n: u64) {
        let s = &self.stats;
        let cell = match counter {
            Stat::Accepted => &s.accepted,
            Stat::Delivered => &s.delivered,
            Stat::Failed => &s.failed,
            Stat::SkippedStopped => &s.skipped_stopped,
            Stat::DeadLettered => &s.dead_lettered,
        };
        cell.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn set_held(&self, held: usize) {
        self.stats.held.store(held as u64, Ordering::Relaxed);
        self.held_gauge.set(held as f64);
    }

    pub(crate) fn dropped(&self, reason: DropReason) {
        self.stats.dropped.fetch_add(1, Ordering::Relaxed);
        metrics::counter!(
            "camel_resequencer_dropped_total",
            "routeId" => self.route_id.to_string(),
            "route" => self.route_id.to_string(),
            "reason" => reason.as_str()
        )
        .increment(1);
    }

    /// Counts acknowledged exchanges given up on at a deadline.
    pub(crate) fn lost(&self, n: u64) {
        self.stats.lost.fetch_add(n, Ordering::Relaxed);
        self.lost.increment(n);
    }

    /// Counts a call the actor refused.
    pub(crate) fn rejected(&self, refusal: &ResequenceError) {
        if matches!(refusal, ResequenceError::RejectedOld { .. }) {
            self.stats.rejected_old.fetch_add(1, Ordering::Relaxed);
            self.rejected_old.increment(1);
        }
    }

    /// Whether an InOut warning may be logged now (at most once per interval per route,
    /// across hot swaps of that route); counts it.
    pub(crate) fn inout_warning_due(&self, now: Instant) -> bool {
        let Ok(mut last) = LAST_INOUT_WARN.lock() else {
            return false;
        };
        let previous = last.get(&self.route_id);
        if previous.is_some_and(|t| now.saturating_duration_since(*t) < INOUT_WARN_INTERVAL) {
            return false;
        }
        last.insert(self.route_id.clone(), now);
        self.stats
            .inout_warnings_logged
            .fetch_add(1, Ordering::Relaxed);
        true
    }
}

/// The plain counters of [`ResequencerStats`] (drops and held have their own paths).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Stat {
    Accepted,
    Delivered,
    Failed,
    SkippedStopped,
    DeadLettered,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn inout_warning_is_rate_limited_per_interval() {
        let shared = Shared::new("rate-limit-unit-test", "resequence");
        let mut logged = 0;
        // One InOut exchange every second for two minutes.
        for _ in 0..120 {
            if shared.inout_warning_due(Instant::now()) {
                logged += 1;
            }
            tokio::time::advance(Duration::from_secs(1)).await;
        }
        assert_eq!(logged, 4, "once per 30 s over 120 s");
        assert_eq!(shared.stats.inout_warnings_logged(), 4);
        // At 120 s the next warning is due; a swapped-in instance of the same route then
        // shares the limit.
        assert!(shared.inout_warning_due(Instant::now()));
        let replacement = Shared::new("rate-limit-unit-test", "resequence");
        assert!(!replacement.inout_warning_due(Instant::now()));
        assert!(Shared::new("another-route", "resequence").inout_warning_due(Instant::now()));
    }
}
