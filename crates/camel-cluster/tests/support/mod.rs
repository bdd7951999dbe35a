//! The contract every lease store must keep, run against each real backend: two
//! contenders (each on its own connection, as two processes would be), one wins; a holder
//! that stops renewing loses the lease, hears so before the other wins, and the other
//! wins with a higher epoch; a clean stop hands over without waiting for expiry.

#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use camel_cluster::{
    ClusterError, ElectionConfig, LeaderElection, LeaderInfo, Leadership, Lease, LeaseStore,
};
use tokio::sync::watch;
use tokio::time::Instant;

/// A store that can be cut off, as a paused or partitioned process would be.
#[derive(Debug)]
pub struct Severable {
    inner: Arc<dyn LeaseStore>,
    cut: AtomicBool,
}

impl Severable {
    pub fn new(inner: Arc<dyn LeaseStore>) -> Arc<Self> {
        Arc::new(Severable {
            inner,
            cut: AtomicBool::new(false),
        })
    }
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
    }
    fn check(&self) -> Result<(), ClusterError> {
        if self.cut.load(Ordering::SeqCst) {
            // Any store error will do: the election treats them alike.
            return Err(ClusterError::Config {
                at: "test".into(),
                message: "cut off".into(),
            });
        }
        Ok(())
    }
}

#[async_trait]
impl LeaseStore for Severable {
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }
    async fn try_acquire(
        &self,
        namespace: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<Option<Lease>, ClusterError> {
        self.check()?;
        self.inner.try_acquire(namespace, holder, ttl).await
    }
    async fn renew(&self, lease: &Lease, ttl: Duration) -> Result<Option<Lease>, ClusterError> {
        self.check()?;
        self.inner.renew(lease, ttl).await
    }
    async fn release(&self, lease: &Lease) -> Result<(), ClusterError> {
        self.check()?;
        self.inner.release(lease).await
    }
    async fn leader(&self, namespace: &str) -> Result<Option<LeaderInfo>, ClusterError> {
        self.inner.leader(namespace).await
    }
}

pub fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{}-{nanos}", std::process::id())
}

pub const LEASE: Duration = Duration::from_millis(1500);

pub fn config(namespace: &str, holder: &str) -> ElectionConfig {
    ElectionConfig {
        namespace: namespace.into(),
        holder: holder.into(),
        lease_duration: LEASE,
        renew_interval: Duration::from_millis(300),
        retry_interval: Duration::from_millis(100),
    }
}

/// Waits (up to `limit`) until `rx` says leader; returns the epoch and when it was seen.
pub async fn leads_within(
    rx: &mut watch::Receiver<Leadership>,
    limit: Duration,
) -> Option<(u64, Instant)> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(e) = rx.borrow_and_update().epoch() {
            return Some((e, Instant::now()));
        }
        if tokio::time::timeout_at(deadline, rx.changed())
            .await
            .is_err()
        {
            return None;
        }
    }
}

/// Waits (up to `limit`) until `rx` says follower; returns when it was seen.
pub async fn follows_within(
    rx: &mut watch::Receiver<Leadership>,
    limit: Duration,
) -> Option<Instant> {
    let deadline = Instant::now() + limit;
    loop {
        if rx.borrow_and_update().epoch().is_none() {
            return Some(Instant::now());
        }
        if tokio::time::timeout_at(deadline, rx.changed())
            .await
            .is_err()
        {
            return None;
        }
    }
}

/// Whichever of two elections leads first: (leader, other).
async fn first_leader(
    a: LeaderElection,
    b: LeaderElection,
) -> (LeaderElection, LeaderElection, u64) {
    let (mut ra, mut rb) = (a.subscribe(), b.subscribe());
    let deadline = Duration::from_secs(5);
    tokio::select! {
        Some((e, _)) = leads_within(&mut ra, deadline) => (a, b, e),
        Some((e, _)) = leads_within(&mut rb, deadline) => (b, a, e),
        else => panic!("nobody led within 5 s"),
    }
}

/// Two contenders: exactly one leads, for a while, and the store names it.
pub async fn one_of_two_wins(a: Arc<dyn LeaseStore>, b: Arc<dyn LeaseStore>) {
    let ns = unique("one-wins");
    let ea = LeaderElection::start(a.clone(), config(&ns, "holder-a"));
    let eb = LeaderElection::start(b, config(&ns, "holder-b"));
    let (leader, other, epoch) = first_leader(ea, eb).await;
    // Over two lease durations, the leader keeps it (renewals work) and the other never leads.
    let until = Instant::now() + LEASE * 2;
    while Instant::now() < until {
        assert_eq!(
            leader.current().epoch(),
            Some(epoch),
            "the leader kept its lease"
        );
        assert_eq!(other.current().epoch(), None, "two leaders at once");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let named = a
        .leader(&ns)
        .await
        .unwrap()
        .expect("the store names a leader");
    assert_eq!(named.holder, leader.config().holder);
    assert_eq!(named.epoch, epoch);
    other.stop().await;
    leader.stop().await;
}

/// The holder is cut off from the store: it hears of the loss no later than the other
/// takes over, and the other's epoch is higher.
pub async fn cut_off_holder_loses_and_the_other_takes_over(
    a: Arc<dyn LeaseStore>,
    b: Arc<dyn LeaseStore>,
) {
    let ns = unique("takeover");
    let (sa, sb) = (Severable::new(a), Severable::new(b));
    let ea = LeaderElection::start(sa.clone(), config(&ns, "holder-a"));
    let mut ra = ea.subscribe();
    let (first_epoch, _) = leads_within(&mut ra, Duration::from_secs(5))
        .await
        .expect("a leads alone");
    let eb = LeaderElection::start(sb, config(&ns, "holder-b"));
    let mut rb = eb.subscribe();
    // B stays a follower while A renews.
    assert!(
        leads_within(&mut rb, LEASE).await.is_none(),
        "b took a held lease"
    );
    let cut_at = Instant::now();
    sa.cut();
    let lost_at = follows_within(&mut ra, LEASE * 2)
        .await
        .expect("a hears of its loss");
    let (second_epoch, won_at) = leads_within(&mut rb, LEASE * 4)
        .await
        .expect("b takes over once a's lease expired");
    assert!(
        second_epoch > first_epoch,
        "epochs grow: {first_epoch} then {second_epoch}"
    );
    assert!(lost_at <= won_at, "a believed it led after b won");
    assert!(lost_at - cut_at <= LEASE + Duration::from_millis(100));
    eb.stop().await;
    drop(ea);
}

/// A clean stop releases: the other leads well before the lease would have expired.
pub async fn stop_hands_over_at_once(a: Arc<dyn LeaseStore>, b: Arc<dyn LeaseStore>) {
    let ns = unique("release");
    let ea = LeaderElection::start(a, config(&ns, "holder-a"));
    let mut ra = ea.subscribe();
    let (first, _) = leads_within(&mut ra, Duration::from_secs(5))
        .await
        .expect("a leads");
    let eb = LeaderElection::start(b.clone(), config(&ns, "holder-b"));
    let mut rb = eb.subscribe();
    assert!(leads_within(&mut rb, Duration::from_millis(400))
        .await
        .is_none());
    let stopped = Instant::now();
    ea.stop().await;
    let (second, won) = leads_within(&mut rb, LEASE * 3).await.expect("b leads");
    assert!(second > first);
    assert!(
        won - stopped < LEASE,
        "b waited {:?}: the lease was not released",
        won - stopped
    );
    eb.stop().await;
    assert!(b.leader(&ns).await.unwrap().is_none(), "b released too");
}
