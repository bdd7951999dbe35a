//! The election driver: one task per namespace that tries to take the lease, renews it
//! while held, and says so through a watch channel.
//!
//! Invariants:
//! - `Leadership::Leader { until }` is never later than the store's own expiry of the
//!   lease: `until` is measured from the moment the request was *sent* (the store starts
//!   its clock later), so this process stops believing it leads before anyone else can
//!   take over — as long as the two clocks run at about the same rate.
//! - A renewal that has not succeeded by `until` is a loss, whatever the reason (store
//!   unreachable, process paused): the watch says `Follower` before anything else runs.
//! - On stop the lease is released (best effort, bounded by the renew interval), so a
//!   successor need not wait for it to expire.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::store::LeaseStore;

/// Metric: 1 while this process leads the namespace, else 0 (label `namespace`).
pub const LEADER_GAUGE: &str = "camel_cluster_leader";
/// Metric: the fencing epoch of this process's current or last leadership (label `namespace`).
pub const EPOCH_GAUGE: &str = "camel_cluster_epoch";
/// Metric: leaderships this process lost without giving them up (label `namespace`).
pub const LOST_COUNTER: &str = "camel_cluster_leadership_lost_total";

/// The timing of one election.
#[derive(Clone, Debug)]
pub struct ElectionConfig {
    /// What is led.
    pub namespace: String,
    /// This process's id in the store; unique per process.
    pub holder: String,
    /// How long a lease lasts without renewal (default 15 s).
    pub lease_duration: Duration,
    /// How often the holder renews (default 5 s; must be well under the lease).
    pub renew_interval: Duration,
    /// How often a follower tries to take the lease (default: the renew interval).
    pub retry_interval: Duration,
}

impl ElectionConfig {
    /// An election on `namespace` for `holder` with the default timing.
    pub fn new(namespace: impl Into<String>, holder: impl Into<String>) -> Self {
        ElectionConfig {
            namespace: namespace.into(),
            holder: holder.into(),
            lease_duration: Duration::from_secs(15),
            renew_interval: Duration::from_secs(5),
            retry_interval: Duration::from_secs(5),
        }
    }
}

/// What this process is in one namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leadership {
    /// Another process leads, or nobody does yet.
    Follower,
    /// This process leads under `epoch`, at least until `until` (local monotonic clock).
    Leader {
        /// The fencing epoch of this acquisition.
        epoch: u64,
        /// When the lease runs out unless renewed.
        until: Instant,
    },
}

impl Leadership {
    /// The epoch, while leading.
    pub fn epoch(&self) -> Option<u64> {
        match self {
            Leadership::Leader { epoch, .. } => Some(*epoch),
            Leadership::Follower => None,
        }
    }

    /// True while leading and the lease has not run out by the local clock.
    pub fn is_leader_now(&self) -> bool {
        matches!(self, Leadership::Leader { until, .. } if Instant::now() < *until)
    }
}

/// A running election. Dropping it cancels the task without releasing the lease (it then
/// expires); call [`LeaderElection::stop`] to release it.
#[derive(Debug)]
pub struct LeaderElection {
    state: watch::Receiver<Leadership>,
    cancel: CancellationToken,
    task: JoinHandle<()>,
    config: ElectionConfig,
}

impl LeaderElection {
    /// Starts contending for `config.namespace` in `store`.
    pub fn start(store: Arc<dyn LeaseStore>, config: ElectionConfig) -> Self {
        let (tx, rx) = watch::channel(Leadership::Follower);
        let cancel = CancellationToken::new();
        let task = tokio::spawn(run(store, config.clone(), tx, cancel.clone()));
        LeaderElection {
            state: rx,
            cancel,
            task,
            config,
        }
    }

    /// A receiver that sees every change of leadership (a loss is a change to `Follower`).
    pub fn subscribe(&self) -> watch::Receiver<Leadership> {
        self.state.clone()
    }

    /// What this process is now.
    pub fn current(&self) -> Leadership {
        *self.state.borrow()
    }

    /// The election's configuration.
    pub fn config(&self) -> &ElectionConfig {
        &self.config
    }

    /// Stops contending, releasing the lease if held.
    pub async fn stop(mut self) {
        self.cancel.cancel();
        let _ = (&mut self.task).await;
    }
}

impl Drop for LeaderElection {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

async fn run(
    store: Arc<dyn LeaseStore>,
    config: ElectionConfig,
    state: watch::Sender<Leadership>,
    cancel: CancellationToken,
) {
    let ns = config.namespace.as_str();
    let ttl = config.lease_duration;
    // A request that takes longer than this is abandoned (a lock wait, a dead connection).
    let request_limit = config.renew_interval.max(Duration::from_millis(100));
    metrics::gauge!(LEADER_GAUGE, "namespace" => ns.to_string()).set(0.0);
    loop {
        // Follower: try until the lease is ours.
        let (mut lease, mut until) = loop {
            let sent = Instant::now();
            tokio::select! {
                _ = cancel.cancelled() => return,
                tried = tokio::time::timeout(request_limit, store.try_acquire(ns, &config.holder, ttl)) => {
                    match tried {
                        Ok(Ok(Some(lease))) => break (lease, sent + ttl),
                        Ok(Ok(None)) => {}
                        Ok(Err(e)) => tracing::warn!(namespace = ns, backend = store.backend(), error = %e, "cannot reach the lease store"),
                        Err(_) => tracing::warn!(namespace = ns, backend = store.backend(), "the lease store did not answer in time"),
                    }
                }
            }
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tokio::time::sleep(config.retry_interval) => {}
            }
        };
        tracing::info!(namespace = ns, holder = %config.holder, epoch = lease.epoch, backend = store.backend(), "leadership acquired");
        metrics::gauge!(LEADER_GAUGE, "namespace" => ns.to_string()).set(1.0);
        metrics::gauge!(EPOCH_GAUGE, "namespace" => ns.to_string()).set(lease.epoch as f64);
        state.send_replace(Leadership::Leader {
            epoch: lease.epoch,
            until,
        });
        // Leader: renew every `renew_interval`; the lease is lost at `until` at the latest.
        let mut next = Instant::now() + config.renew_interval;
        let released = loop {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => break true,
                _ = tokio::time::sleep_until(until) => break false,
                _ = tokio::time::sleep_until(next) => {}
            }
            // A process that was paused wakes with both timers due: the loss wins.
            if Instant::now() >= until {
                break false;
            }
            let sent = Instant::now();
            match tokio::time::timeout_at(until, store.renew(&lease, ttl)).await {
                Ok(Ok(Some(renewed))) => {
                    lease = renewed;
                    until = sent + ttl;
                    next = sent + config.renew_interval;
                    state.send_replace(Leadership::Leader {
                        epoch: lease.epoch,
                        until,
                    });
                }
                Ok(Ok(None)) => break false,
                Ok(Err(e)) => {
                    tracing::warn!(namespace = ns, backend = store.backend(), error = %e, "lease renewal failed; retrying");
                    next =
                        Instant::now() + (config.renew_interval / 4).max(Duration::from_millis(50));
                }
                Err(_) => break false,
            }
        };
        state.send_replace(Leadership::Follower);
        metrics::gauge!(LEADER_GAUGE, "namespace" => ns.to_string()).set(0.0);
        if released {
            if let Ok(Err(e)) = tokio::time::timeout(request_limit, store.release(&lease)).await {
                tracing::warn!(namespace = ns, error = %e, "could not release the lease; it will expire");
            }
            tracing::info!(namespace = ns, epoch = lease.epoch, "leadership released");
            return;
        }
        metrics::counter!(LOST_COUNTER, "namespace" => ns.to_string()).increment(1);
        tracing::warn!(namespace = ns, epoch = lease.epoch, "leadership lost");
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(config.retry_interval) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ClusterError;
    use crate::store::{LeaderInfo, Lease};
    use async_trait::async_trait;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Grants every acquisition; renewals succeed until `hang` is set, then never answer.
    #[derive(Debug, Default)]
    struct Hanging {
        hang: AtomicBool,
    }

    #[async_trait]
    impl LeaseStore for Hanging {
        fn backend(&self) -> &'static str {
            "memory"
        }
        async fn try_acquire(
            &self,
            namespace: &str,
            holder: &str,
            _ttl: Duration,
        ) -> Result<Option<Lease>, ClusterError> {
            Ok(Some(Lease {
                namespace: namespace.into(),
                holder: holder.into(),
                epoch: 7,
                token: 0,
            }))
        }
        async fn renew(
            &self,
            lease: &Lease,
            _ttl: Duration,
        ) -> Result<Option<Lease>, ClusterError> {
            if self.hang.load(Ordering::SeqCst) {
                std::future::pending::<()>().await;
            }
            Ok(Some(lease.clone()))
        }
        async fn release(&self, _lease: &Lease) -> Result<(), ClusterError> {
            Ok(())
        }
        async fn leader(&self, _namespace: &str) -> Result<Option<LeaderInfo>, ClusterError> {
            Ok(None)
        }
    }

    fn config() -> ElectionConfig {
        ElectionConfig {
            namespace: "ns".into(),
            holder: "me".into(),
            lease_duration: Duration::from_secs(3),
            renew_interval: Duration::from_secs(1),
            retry_interval: Duration::from_secs(1),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_store_that_stops_answering_is_a_loss_at_the_local_deadline_not_later() {
        let store = Arc::new(Hanging::default());
        let election = LeaderElection::start(store.clone(), config());
        let mut rx = election.subscribe();
        rx.changed().await.unwrap();
        let Leadership::Leader { epoch, until } = *rx.borrow_and_update() else {
            panic!("leads")
        };
        assert_eq!(epoch, 7);
        // Renewals keep the lease while the store answers.
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(election.current().is_leader_now());
        let last = match election.current() {
            Leadership::Leader { until: u, .. } => u,
            Leadership::Follower => panic!("still leads"),
        };
        assert!(last > until, "renewals moved the deadline");
        store.hang.store(true, Ordering::SeqCst);
        // Loss is announced by the deadline of the last renewal, whatever the store does.
        let lost = loop {
            rx.changed().await.unwrap();
            if rx.borrow_and_update().epoch().is_none() {
                break Instant::now();
            }
        };
        assert!(lost <= last, "loss at {lost:?} after the deadline {last:?}");
        election.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn leadership_is_not_believed_past_its_deadline() {
        let until = Instant::now() + Duration::from_millis(10);
        let l = Leadership::Leader { epoch: 1, until };
        assert!(l.is_leader_now());
        tokio::time::advance(Duration::from_millis(10)).await;
        assert!(!l.is_leader_now());
        assert_eq!(l.epoch(), Some(1));
        assert!(!Leadership::Follower.is_leader_now());
    }
}
