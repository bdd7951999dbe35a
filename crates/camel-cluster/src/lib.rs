//! Leader election with fencing epochs, on stores users already run, and leader-only
//! routes.
//!
//! A [`LeaderElection`] contends for a namespace in a [`LeaseStore`] — a PostgreSQL row,
//! a Redis key, a NATS JetStream KV entry or a Kubernetes Lease — renews the lease while it holds it, and
//! says who it is through a watch channel: [`Leadership::Leader`] with the fencing epoch
//! of this acquisition (strictly greater than every earlier one), then
//! [`Leadership::Follower`] when the lease is lost or given up.
//!
//! ```no_run
//! # async fn demo() -> Result<(), camel_cluster::ClusterError> {
//! use std::sync::Arc;
//! use camel_cluster::{ElectionConfig, LeaderElection, PostgresLeaseStore};
//!
//! let store = PostgresLeaseStore::connect("postgres://127.0.0.1/app", "camel_cluster_lease").await?;
//! let election = LeaderElection::start(Arc::new(store), ElectionConfig::new("orders", "node-1"));
//! let mut leadership = election.subscribe();
//! while leadership.changed().await.is_ok() {
//!     println!("now {:?}", *leadership.borrow());
//! }
//! election.stop().await; // releases the lease
//! # Ok(()) }
//! ```
//!
//! Routes use it through `master:NAMESPACE:ENDPOINT` ([`MasterComponent`]) or the route
//! option `route_policy: {leader: NAMESPACE}`; see `docs/cluster.md` for the guarantees
//! each backend gives and what fencing covers.

// Without any backend (camel-components uses the partition hash alone), the store
// helpers have no caller.
#![cfg_attr(
    not(any(
        feature = "postgres",
        feature = "redis",
        feature = "nats",
        feature = "kubernetes"
    )),
    allow(dead_code)
)]

mod config;
mod election;
mod error;
mod master;
mod partition;
mod service;
mod store;

#[cfg(feature = "kubernetes")]
mod kubernetes;
#[cfg(feature = "nats")]
mod nats;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "redis")]
mod redis;

pub use config::{default_holder, in_kubernetes_pod, Backend, ClusterSettings};
pub use election::{
    ElectionConfig, LeaderElection, Leadership, EPOCH_GAUGE, LEADER_GAUGE, LOST_COUNTER,
};
pub use error::ClusterError;
pub use master::{
    check_namespace, fencing_token, MasterComponent, EPOCH_PROPERTY, NAMESPACE_PROPERTY, UNFENCED,
};
pub use partition::{partition_of, partition_options, MAX_PARTITIONS};
pub use service::{ClusterService, Membership, NamespaceStatus, CLUSTER_RESOURCE};
pub use store::{LeaderInfo, Lease, LeaseStore};

#[cfg(feature = "kubernetes")]
pub use kubernetes::{KubernetesLeaseStore, KubernetesTarget};
#[cfg(feature = "nats")]
pub use nats::NatsLeaseStore;
#[cfg(feature = "postgres")]
pub use postgres::{check_fence, FenceError, PostgresLeaseStore, DEFAULT_TABLE};
#[cfg(feature = "redis")]
pub use redis::RedisLeaseStore;

/// The default lease table, also without the `postgres` feature (settings name it).
#[cfg(not(feature = "postgres"))]
pub const DEFAULT_TABLE: &str = "camel_cluster_lease";
