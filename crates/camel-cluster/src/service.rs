//! One election per namespace, shared by every leader-only route of the process.
//!
//! The first route of a namespace to start joins it (starting the election); the last to
//! stop leaves it (stopping the election, which releases the lease). The store is
//! connected on first use, so `camel validate` never touches it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{watch, OnceCell};

use crate::config::{Backend, ClusterSettings};
use crate::election::{ElectionConfig, LeaderElection, Leadership};
use crate::error::ClusterError;
use crate::store::{LeaderInfo, LeaseStore};

/// The name under which the CLI registers the service as a context resource.
pub const CLUSTER_RESOURCE: &str = "camel.cluster";

/// Elections of this process, by namespace.
pub struct ClusterService {
    settings: ClusterSettings,
    store: OnceCell<Arc<dyn LeaseStore>>,
    joined: Mutex<HashMap<String, Joined>>,
}

struct Joined {
    election: Arc<LeaderElection>,
    members: usize,
}

impl std::fmt::Debug for ClusterService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterService")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// What `/health` and the admin API show of one namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamespaceStatus {
    /// The namespace.
    pub namespace: String,
    /// True while this process leads it.
    pub leader: bool,
    /// The epoch while leading.
    pub epoch: Option<u64>,
}

/// A route's share in a namespace's election; [`Membership::leave`] when done.
#[derive(Debug)]
pub struct Membership {
    service: Arc<ClusterService>,
    namespace: String,
    state: watch::Receiver<Leadership>,
}

impl Membership {
    /// Changes of this process's leadership in the namespace.
    pub fn watch(&self) -> watch::Receiver<Leadership> {
        self.state.clone()
    }

    /// Leaves the namespace; the last member stops the election and releases the lease.
    pub async fn leave(self) {
        let last = {
            let mut joined = self.service.lock();
            match joined.get_mut(&self.namespace) {
                Some(j) if j.members > 1 => {
                    j.members -= 1;
                    None
                }
                Some(_) => joined.remove(&self.namespace).map(|j| j.election),
                None => None,
            }
        };
        if let Some(election) = last {
            match Arc::try_unwrap(election) {
                Ok(election) => election.stop().await,
                // Cannot happen (only the table holds it); dropping cancels the task.
                Err(shared) => drop(shared),
            }
        }
    }
}

impl ClusterService {
    /// A service that connects to the store of `settings` on first use.
    pub fn new(settings: ClusterSettings) -> Arc<Self> {
        Arc::new(ClusterService {
            settings,
            store: OnceCell::new(),
            joined: Mutex::default(),
        })
    }

    /// A service on a store already connected.
    pub fn with_store(settings: ClusterSettings, store: Arc<dyn LeaseStore>) -> Arc<Self> {
        Arc::new(ClusterService {
            settings,
            store: OnceCell::new_with(Some(store)),
            joined: Mutex::default(),
        })
    }

    /// The settings.
    pub fn settings(&self) -> &ClusterSettings {
        &self.settings
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Joined>> {
        self.joined.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The store, connected on first call.
    pub async fn store(&self) -> Result<Arc<dyn LeaseStore>, ClusterError> {
        self.store
            .get_or_try_init(|| connect(&self.settings))
            .await
            .cloned()
    }

    /// Joins the election of `namespace`, starting it if this is its first member.
    pub async fn join(self: &Arc<Self>, namespace: &str) -> Result<Membership, ClusterError> {
        let store = self.store().await?;
        let mut joined = self.lock();
        let entry = joined.entry(namespace.to_string()).or_insert_with(|| {
            let config = ElectionConfig {
                namespace: namespace.to_string(),
                holder: self.settings.holder.clone(),
                lease_duration: self.settings.lease_duration,
                renew_interval: self.settings.renew_interval,
                retry_interval: self.settings.retry_interval,
            };
            Joined {
                election: Arc::new(LeaderElection::start(store, config)),
                members: 0,
            }
        });
        entry.members += 1;
        Ok(Membership {
            service: self.clone(),
            namespace: namespace.to_string(),
            state: entry.election.subscribe(),
        })
    }

    /// This process's standing in every namespace it takes part in, by name.
    pub fn status(&self) -> Vec<NamespaceStatus> {
        let mut out: Vec<NamespaceStatus> = self
            .lock()
            .iter()
            .map(|(ns, j)| {
                let now = j.election.current();
                NamespaceStatus {
                    namespace: ns.clone(),
                    leader: now.is_leader_now(),
                    epoch: now.epoch(),
                }
            })
            .collect();
        out.sort_by(|a, b| a.namespace.cmp(&b.namespace));
        out
    }

    /// Who leads `namespace`, as the store says.
    pub async fn leader(&self, namespace: &str) -> Result<Option<LeaderInfo>, ClusterError> {
        self.store().await?.leader(namespace).await
    }
}

async fn connect(settings: &ClusterSettings) -> Result<Arc<dyn LeaseStore>, ClusterError> {
    match settings.backend {
        Backend::Postgres => {
            #[cfg(feature = "postgres")]
            {
                let store =
                    crate::postgres::PostgresLeaseStore::connect(&settings.url, &settings.table)
                        .await?;
                Ok(Arc::new(store))
            }
            #[cfg(not(feature = "postgres"))]
            Err(missing("postgres"))
        }
        Backend::Redis => {
            #[cfg(feature = "redis")]
            {
                let store =
                    crate::redis::RedisLeaseStore::connect(&settings.url, &settings.prefix).await?;
                Ok(Arc::new(store))
            }
            #[cfg(not(feature = "redis"))]
            Err(missing("redis"))
        }
        Backend::Kubernetes => {
            #[cfg(feature = "kubernetes")]
            {
                let target = crate::kubernetes::KubernetesTarget {
                    url: settings.url.clone(),
                    kubeconfig: settings.kubeconfig.clone(),
                    namespace: settings.kube_namespace.clone(),
                    prefix: settings.lease_prefix.clone(),
                };
                let store = crate::kubernetes::KubernetesLeaseStore::connect(&target).await?;
                Ok(Arc::new(store))
            }
            #[cfg(not(feature = "kubernetes"))]
            Err(missing("kubernetes"))
        }
        Backend::Nats => {
            #[cfg(feature = "nats")]
            {
                let store = crate::nats::NatsLeaseStore::connect(
                    &settings.url,
                    &settings.bucket,
                    settings.lease_duration,
                )
                .await?;
                Ok(Arc::new(store))
            }
            #[cfg(not(feature = "nats"))]
            Err(missing("nats"))
        }
    }
}

#[cfg(not(all(
    feature = "postgres",
    feature = "redis",
    feature = "nats",
    feature = "kubernetes"
)))]
fn missing(feature: &str) -> ClusterError {
    ClusterError::config(
        "camel.cluster.backend",
        format!(
            "this build has no {feature} backend (Cargo feature `{feature}` of camel-rs-cluster)"
        ),
    )
}
