//! The contract every backend fulfils: a lease on a namespace, held by one holder at a
//! time, with an epoch that grows with every acquisition.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;

use crate::error::ClusterError;

/// A lease this process holds: the namespace, our holder id and the fencing epoch the
/// store gave this acquisition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// What is led (`orders`).
    pub namespace: String,
    /// Who holds it (this process's id).
    pub holder: String,
    /// The fencing epoch: strictly greater than that of every earlier acquisition of the
    /// namespace in the same store.
    pub epoch: u64,
    /// Backend-specific proof of ownership for the next renewal (the KV revision of the
    /// last write on NATS; unused elsewhere).
    pub token: u64,
}

/// Who leads a namespace, as the store says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderInfo {
    /// The holder id.
    pub holder: String,
    /// The epoch of its acquisition.
    pub epoch: u64,
}

/// A store of leases: a PostgreSQL row, a Redis key, a NATS KV entry.
///
/// Every time is measured by the store's own clock (the database's `clock_timestamp()`,
/// Redis's and JetStream's expiry), never by the caller's: two processes whose clocks
/// disagree still agree on who holds a lease.
#[async_trait]
pub trait LeaseStore: Send + Sync + fmt::Debug + 'static {
    /// The backend's name, for logs and health (`postgres`).
    fn backend(&self) -> &'static str;

    /// Takes the lease of `namespace` for `holder` for `ttl` if nobody holds it (or the
    /// holder's lease expired). `Ok(None)`: somebody else holds it.
    async fn try_acquire(
        &self,
        namespace: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<Option<Lease>, ClusterError>;

    /// Extends `lease` by `ttl` from now if it is still ours. `Ok(None)`: it was lost
    /// (expired and possibly taken). The returned lease replaces the old one.
    async fn renew(&self, lease: &Lease, ttl: Duration) -> Result<Option<Lease>, ClusterError>;

    /// Gives the lease up if it is still ours, so that another contender need not wait
    /// for it to expire. The epoch is kept: the next acquisition gets a greater one.
    async fn release(&self, lease: &Lease) -> Result<(), ClusterError>;

    /// The holder of an unexpired lease on `namespace`, if any.
    async fn leader(&self, namespace: &str) -> Result<Option<LeaderInfo>, ClusterError>;
}
