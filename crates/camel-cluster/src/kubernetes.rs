//! Leases as Kubernetes `coordination.k8s.io/v1` Lease objects, through the `kube`
//! client.
//!
//! - One Lease per namespace, named `{prefix}{namespace}` made a DNS name (lower case,
//!   `_` and `/` as `-`, and a short hash of the original when that changed anything,
//!   so `Orders` and `orders` stay apart).
//! - Every write is a `PUT` carrying the `resourceVersion` that was read (or a `POST`
//!   for a Lease that does not exist yet): the API server refuses it with 409 when
//!   anybody wrote in between, and a 409 means the attempt lost.
//! - The epoch is `leaseTransitions + 1`: every acquisition raises `leaseTransitions`,
//!   and a release only clears `holderIdentity`, so the counter never goes back (the
//!   Lease is never deleted, and the RBAC `camel export` writes has no `delete`).
//! - The API server does not expire Leases: a contender judges expiry itself, as
//!   client-go's leader election does, by its *own* clock: a Lease whose
//!   `resourceVersion` it has seen unchanged for `leaseDurationSeconds` is expired. So
//!   clocks need not agree, but a process that starts while an abandoned Lease exists
//!   waits one lease duration before taking it. `leaseDurationSeconds` is whole seconds
//!   (rounded up).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use k8s_openapi::api::coordination::v1::{Lease as KubeLease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, PostParams};
use tokio::time::Instant;

use crate::error::ClusterError;
use crate::store::{LeaderInfo, Lease, LeaseStore};

const BACKEND: &str = "kubernetes";

/// Where the Kubernetes client finds the API server.
#[derive(Clone, Debug, Default)]
pub struct KubernetesTarget {
    /// The API server's URL; alone, it is reached without credentials (`kubectl proxy`);
    /// with a kubeconfig, it overrides the file's server; empty: from the kubeconfig or
    /// the pod's service account.
    pub url: String,
    /// A kubeconfig file; none: `KUBECONFIG`, `~/.kube/config`, or in-cluster.
    pub kubeconfig: Option<String>,
    /// The Kubernetes namespace of the Leases; empty: the configuration's default
    /// (the pod's own namespace in a cluster).
    pub namespace: String,
    /// Prefix of the Lease names.
    pub prefix: String,
}

/// Leases in a Kubernetes API server.
pub struct KubernetesLeaseStore {
    api: Api<KubeLease>,
    prefix: String,
    /// Per Lease name: the `resourceVersion` last seen and when (local clock).
    seen: Mutex<HashMap<String, (String, Instant)>>,
}

impl std::fmt::Debug for KubernetesLeaseStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubernetesLeaseStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

fn failed(e: kube::Error) -> ClusterError {
    ClusterError::store(BACKEND, e)
}

/// True for the API server's 409 (a write lost a race, or the Lease exists already).
fn conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(status) if status.code == 409)
}

impl KubernetesLeaseStore {
    /// Builds the client for `target` (reads the kubeconfig or the service account;
    /// sends nothing yet).
    pub async fn connect(target: &KubernetesTarget) -> Result<Self, ClusterError> {
        let config = client_config(target).await?;
        let namespace = if target.namespace.is_empty() {
            config.default_namespace.clone()
        } else {
            target.namespace.clone()
        };
        // kube's TLS asks rustls for the process's provider, which rustls cannot pick by
        // itself when another crate of the build enables aws-lc-rs beside ring (the
        // AWS SDK does): name ring, unless the program installed one already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = kube::Client::try_from(config).map_err(failed)?;
        Ok(KubernetesLeaseStore {
            api: Api::namespaced(client, &namespace),
            prefix: target.prefix.clone(),
            seen: Mutex::default(),
        })
    }

    fn name(&self, namespace: &str) -> String {
        lease_name(&self.prefix, namespace)
    }

    async fn read(&self, name: &str) -> Result<Option<KubeLease>, ClusterError> {
        self.api.get_opt(name).await.map_err(failed)
    }

    /// Writes `lease` back under the `resourceVersion` it was read with; `Ok(false)`
    /// when somebody wrote in between (409).
    async fn write(&self, name: &str, lease: &KubeLease) -> Result<bool, ClusterError> {
        match self.api.replace(name, &PostParams::default(), lease).await {
            Ok(_) => Ok(true),
            Err(e) if conflict(&e) => Ok(false),
            Err(e) => Err(failed(e)),
        }
    }

    /// Whether the Lease, last changed as `version`, has been seen unchanged for
    /// `duration` by this process's clock.
    fn expired(&self, name: &str, version: &str, duration: Duration) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        match seen.get(name) {
            Some((v, at)) if v == version => now.duration_since(*at) >= duration,
            _ => {
                seen.insert(name.to_string(), (version.to_string(), now));
                false
            }
        }
    }
}

async fn client_config(target: &KubernetesTarget) -> Result<kube::Config, ClusterError> {
    let at = "camel.cluster.kubernetes.kubeconfig";
    let mut config = match &target.kubeconfig {
        Some(path) => {
            let file = kube::config::Kubeconfig::read_from(path)
                .map_err(|e| ClusterError::config(at, format!("{path}: {e}")))?;
            kube::Config::from_custom_kubeconfig(file, &Default::default())
                .await
                .map_err(|e| ClusterError::config(at, format!("{path}: {e}")))?
        }
        // A URL alone is an API server reached without credentials (`kubectl proxy`).
        None if !target.url.is_empty() => kube::Config::new(parse_url(&target.url)?),
        None => kube::Config::infer().await.map_err(|e| {
            ClusterError::config(
                "camel.cluster.backend",
                format!(
                    "no Kubernetes configuration (kubeconfig or in-cluster service account): {e}"
                ),
            )
        })?,
    };
    if !target.url.is_empty() {
        config.cluster_url = parse_url(&target.url)?;
    }
    Ok(config)
}

fn parse_url(url: &str) -> Result<http::Uri, ClusterError> {
    url.parse::<http::Uri>().map_err(|e| {
        ClusterError::config(
            "camel.cluster.url",
            format!("`{}` is not a URL: {e}", camel_api::redact_url(url)),
        )
    })
}

/// `prefix` + `namespace` as a DNS subdomain name (what a Lease may be called).
pub(crate) fn lease_name(prefix: &str, namespace: &str) -> String {
    let wanted = format!("{prefix}{namespace}");
    let mut name: String = wanted
        .chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' | '-' | '.' => c,
            'A'..='Z' => c.to_ascii_lowercase(),
            _ => '-',
        })
        .collect();
    if name != wanted {
        // A hash of the original keeps names that map alike apart.
        let hash = crate::partition::fnv1a(&wanted);
        name = format!("{name}-{:08x}", hash & 0xffff_ffff);
    }
    let name = name.trim_matches(|c| c == '-' || c == '.').to_string();
    if name.len() > 253 {
        name[name.len() - 253..].to_string()
    } else {
        name
    }
}

fn seconds(ttl: Duration) -> i32 {
    let whole = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
    i32::try_from(whole.max(1)).unwrap_or(i32::MAX)
}

fn now() -> MicroTime {
    MicroTime(Timestamp::now())
}

/// The holder named in `spec`, if any.
fn holder_of(spec: &LeaseSpec) -> Option<&str> {
    spec.holder_identity.as_deref().filter(|h| !h.is_empty())
}

/// The epoch of the acquisition `spec` records.
fn epoch_of(spec: &LeaseSpec) -> u64 {
    u64::try_from(spec.lease_transitions.unwrap_or(0).max(0)).unwrap_or(0) + 1
}

/// `spec` still holds `lease`.
fn holds(spec: &LeaseSpec, lease: &Lease) -> bool {
    holder_of(spec) == Some(lease.holder.as_str()) && epoch_of(spec) == lease.epoch
}

#[async_trait]
impl LeaseStore for KubernetesLeaseStore {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    async fn try_acquire(
        &self,
        namespace: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<Option<Lease>, ClusterError> {
        let name = self.name(namespace);
        let granted = |epoch: u64| {
            Some(Lease {
                namespace: namespace.to_string(),
                holder: holder.to_string(),
                epoch,
                token: 0,
            })
        };
        let Some(mut current) = self.read(&name).await? else {
            let fresh = KubeLease {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    ..Default::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(holder.to_string()),
                    lease_duration_seconds: Some(seconds(ttl)),
                    acquire_time: Some(now()),
                    renew_time: Some(now()),
                    lease_transitions: Some(0),
                    ..Default::default()
                }),
            };
            return match self.api.create(&PostParams::default(), &fresh).await {
                Ok(_) => Ok(granted(1)),
                Err(e) if conflict(&e) => Ok(None),
                Err(e) => Err(failed(e)),
            };
        };
        let spec = current.spec.take().unwrap_or_default();
        let version = current
            .metadata
            .resource_version
            .clone()
            .unwrap_or_default();
        let recorded = spec
            .lease_duration_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map(Duration::from_secs)
            .unwrap_or(ttl)
            .max(ttl);
        let free = match holder_of(&spec) {
            None => true,
            Some(h) if h == holder => true,
            Some(_) => self.expired(&name, &version, recorded),
        };
        if !free {
            return Ok(None);
        }
        let epoch = epoch_of(&spec) + 1;
        current.spec = Some(LeaseSpec {
            holder_identity: Some(holder.to_string()),
            lease_duration_seconds: Some(seconds(ttl)),
            acquire_time: Some(now()),
            renew_time: Some(now()),
            lease_transitions: Some(i32::try_from(epoch - 1).unwrap_or(i32::MAX)),
            ..spec
        });
        Ok(if self.write(&name, &current).await? {
            granted(epoch)
        } else {
            None
        })
    }

    async fn renew(&self, lease: &Lease, ttl: Duration) -> Result<Option<Lease>, ClusterError> {
        let name = self.name(&lease.namespace);
        let Some(mut current) = self.read(&name).await? else {
            return Ok(None);
        };
        let mut spec = current.spec.take().unwrap_or_default();
        if !holds(&spec, lease) {
            return Ok(None);
        }
        spec.renew_time = Some(now());
        spec.lease_duration_seconds = Some(seconds(ttl));
        current.spec = Some(spec);
        Ok(self.write(&name, &current).await?.then(|| lease.clone()))
    }

    async fn release(&self, lease: &Lease) -> Result<(), ClusterError> {
        let name = self.name(&lease.namespace);
        let Some(mut current) = self.read(&name).await? else {
            return Ok(());
        };
        let mut spec = current.spec.take().unwrap_or_default();
        if !holds(&spec, lease) {
            return Ok(());
        }
        // The transitions stay: the next holder's epoch is higher.
        spec.holder_identity = None;
        spec.renew_time = Some(now());
        current.spec = Some(spec);
        // A 409 means somebody else wrote: the Lease is not ours to give up any more.
        self.write(&name, &current).await.map(|_| ())
    }

    async fn leader(&self, namespace: &str) -> Result<Option<LeaderInfo>, ClusterError> {
        let Some(current) = self.read(&self.name(namespace)).await? else {
            return Ok(None);
        };
        let spec = current.spec.unwrap_or_default();
        let Some(holder) = holder_of(&spec) else {
            return Ok(None);
        };
        // For display only, so the wall clock will do: renewed within its duration.
        let duration = i64::from(spec.lease_duration_seconds.unwrap_or(0));
        let live = spec
            .renew_time
            .as_ref()
            .is_some_and(|t| Timestamp::now().as_second() - t.0.as_second() <= duration.max(1));
        Ok(live.then(|| LeaderInfo {
            holder: holder.to_string(),
            epoch: epoch_of(&spec),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_names_are_dns_names_and_stay_apart() {
        assert_eq!(lease_name("camel-", "orders"), "camel-orders");
        let upper = lease_name("camel-", "Orders");
        assert!(upper.starts_with("camel-orders-"), "{upper}");
        assert_ne!(upper, lease_name("camel-", "orders"));
        let part = lease_name("camel-", "orders/p3");
        assert!(part.starts_with("camel-orders-p3-"), "{part}");
        assert_ne!(part, lease_name("camel-", "orders-p3"));
        assert!(lease_name("", "_x_")
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric()));
    }

    #[test]
    fn durations_round_up_to_whole_seconds() {
        assert_eq!(seconds(Duration::from_millis(1500)), 2);
        assert_eq!(seconds(Duration::from_millis(200)), 1);
        assert_eq!(seconds(Duration::from_secs(15)), 15);
    }
}
