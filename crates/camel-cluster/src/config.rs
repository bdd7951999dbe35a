//! The cluster settings of a process, read from application properties.
//!
//! | Property | Meaning | Default |
//! |---|---|---|
//! | `camel.cluster.backend` | `postgres`, `redis` or `nats` | none: leader-only routes refused |
//! | `camel.cluster.url` | the store's URL | none |
//! | `camel.cluster.lease-duration` | how long a lease lasts unrenewed | `15s` |
//! | `camel.cluster.renew-interval` | how often the leader renews | a third of the lease |
//! | `camel.cluster.retry-interval` | how often a follower tries to take the lease | the renew interval |
//! | `camel.cluster.holder-id` | this process's name in the store | `HOSTNAME-PID-RANDOM` |
//! | `camel.cluster.postgres.table` | the lease table | `camel_cluster_lease` |
//! | `camel.cluster.redis.prefix` | the prefix of the lease keys | `camel:cluster:` |
//! | `camel.cluster.nats.bucket` | the JetStream KV bucket | `camel_cluster` |
//! | `camel.cluster.kubernetes.namespace` | the Kubernetes namespace of the Leases | the configuration's (the pod's) |
//! | `camel.cluster.kubernetes.kubeconfig` | a kubeconfig file | `KUBECONFIG`, `~/.kube/config`, or in-cluster |
//! | `camel.cluster.kubernetes.lease-prefix` | prefix of the Lease names | `camel-` |
//!
//! Camel's camelCase spellings (`camel.cluster.leaseDuration`) are accepted too.

use std::time::Duration;

use crate::error::ClusterError;

/// Which store holds the leases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// A PostgreSQL table (fencing of `sql:` writes possible).
    Postgres,
    /// Redis keys.
    Redis,
    /// A NATS JetStream key-value bucket.
    Nats,
    /// Kubernetes `coordination.k8s.io/v1` Leases (Cargo feature `kubernetes`).
    Kubernetes,
}

impl Backend {
    /// Its name in `camel.cluster.backend`.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Postgres => "postgres",
            Backend::Redis => "redis",
            Backend::Nats => "nats",
            Backend::Kubernetes => "kubernetes",
        }
    }
}

/// Everything the cluster service needs to know.
#[derive(Clone)]
pub struct ClusterSettings {
    /// The store.
    pub backend: Backend,
    /// The store's URL (may hold credentials: never logged as is).
    pub url: String,
    /// How long a lease lasts unrenewed.
    pub lease_duration: Duration,
    /// How often the leader renews.
    pub renew_interval: Duration,
    /// How often a follower tries.
    pub retry_interval: Duration,
    /// This process's id in the store.
    pub holder: String,
    /// PostgreSQL: the lease table.
    pub table: String,
    /// Redis: the key prefix.
    pub prefix: String,
    /// NATS: the bucket.
    pub bucket: String,
    /// Kubernetes: the namespace of the Leases (empty: the configuration's).
    pub kube_namespace: String,
    /// Kubernetes: a kubeconfig file (none: the usual search, then in-cluster).
    pub kubeconfig: Option<String>,
    /// Kubernetes: the prefix of the Lease names.
    pub lease_prefix: String,
}

impl std::fmt::Debug for ClusterSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterSettings")
            .field("backend", &self.backend)
            .field("url", &camel_api::redact_url(&self.url))
            .field("lease_duration", &self.lease_duration)
            .field("renew_interval", &self.renew_interval)
            .field("holder", &self.holder)
            .finish_non_exhaustive()
    }
}

/// A default holder id: host name, process id and a random part, so two processes on one
/// host (or a restarted one) never share an id.
/// True in a Kubernetes pod that can reach its API server with its service account:
/// `KUBERNETES_SERVICE_HOST` set and the account's token mounted. Always false without
/// the `kubernetes` feature.
pub fn in_kubernetes_pod() -> bool {
    cfg!(feature = "kubernetes")
        && std::env::var_os("KUBERNETES_SERVICE_HOST").is_some_and(|h| !h.is_empty())
        && std::path::Path::new("/var/run/secrets/kubernetes.io/serviceaccount/token").is_file()
}

pub fn default_holder() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "camel".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{host}-{}-{:08x}", std::process::id(), nanos)
}

impl ClusterSettings {
    /// Settings with the defaults for `backend` at `url`.
    pub fn new(backend: Backend, url: impl Into<String>) -> Self {
        let lease = Duration::from_secs(15);
        ClusterSettings {
            backend,
            url: url.into(),
            lease_duration: lease,
            renew_interval: lease / 3,
            retry_interval: lease / 3,
            holder: default_holder(),
            table: crate::DEFAULT_TABLE.to_string(),
            prefix: "camel:cluster:".into(),
            bucket: "camel_cluster".into(),
            kube_namespace: String::new(),
            kubeconfig: None,
            lease_prefix: "camel-".into(),
        }
    }

    /// Reads `camel.cluster.*` through `get`; `Ok(None)` when no backend is named, except
    /// in a Kubernetes pod, where Kubernetes Leases are the default backend (as Camel K
    /// gives its integrations a Kubernetes cluster service without configuration).
    pub fn from_properties(
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, ClusterError> {
        Self::from_properties_in(get, in_kubernetes_pod())
    }

    /// [`from_properties`](Self::from_properties) as it reads in a pod (`in_pod`) or
    /// outside one: `camel export --kubernetes` checks routes for the pod they go to.
    pub fn from_properties_in(
        get: impl Fn(&str) -> Option<String>,
        in_pod: bool,
    ) -> Result<Option<Self>, ClusterError> {
        // `camel.cluster.lease-duration`, or Camel's `camel.cluster.leaseDuration`.
        let read = |kebab: &str| -> Option<String> {
            let key = format!("camel.cluster.{kebab}");
            get(&key)
                .or_else(|| get(&camel_case(&key)))
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let Some(backend) = read("backend").or_else(|| in_pod.then(|| "kubernetes".into())) else {
            return Ok(None);
        };
        let backend = match backend.to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" | "jdbc" => Backend::Postgres,
            "redis" => Backend::Redis,
            "nats" => Backend::Nats,
            "kubernetes" => Backend::Kubernetes,
            other => {
                return Err(ClusterError::config(
                    "camel.cluster.backend",
                    format!("`{other}` is not a backend: postgres, redis, nats or kubernetes"),
                ))
            }
        };
        // In a pod the Lease API needs no URL (the service account says where it is).
        let url = read("url").or_else(|| (backend == Backend::Kubernetes).then(String::new));
        let Some(url) = url else {
            return Err(ClusterError::config(
                "camel.cluster.url",
                format!(
                    "camel.cluster.backend={} needs the store's URL",
                    backend.as_str()
                ),
            ));
        };
        let mut s = ClusterSettings::new(backend, url);
        let duration = |name: &str| -> Result<Option<Duration>, ClusterError> {
            match read(name) {
                None => Ok(None),
                Some(text) => parse_duration(&text)
                    .filter(|d| !d.is_zero())
                    .map(Some)
                    .ok_or_else(|| {
                        ClusterError::config(
                            format!("camel.cluster.{name}"),
                            format!("`{text}` is not a duration (`15s`, `500ms`, or milliseconds)"),
                        )
                    }),
            }
        };
        if let Some(d) = duration("lease-duration")? {
            s.lease_duration = d;
            s.renew_interval = d / 3;
            s.retry_interval = d / 3;
        }
        if let Some(d) = duration("renew-interval")? {
            s.renew_interval = d;
            s.retry_interval = d;
        }
        if let Some(d) = duration("retry-interval")? {
            s.retry_interval = d;
        }
        if s.renew_interval >= s.lease_duration {
            return Err(ClusterError::config(
                "camel.cluster.renew-interval",
                format!(
                    "the renew interval ({:?}) must be shorter than the lease ({:?})",
                    s.renew_interval, s.lease_duration
                ),
            ));
        }
        if let Some(h) = read("holder-id") {
            s.holder = h;
        }
        if let Some(t) = read("postgres.table") {
            s.table = t;
        }
        if let Some(p) = read("redis.prefix") {
            s.prefix = p;
        }
        if let Some(b) = read("nats.bucket") {
            s.bucket = b;
        }
        if let Some(n) = read("kubernetes.namespace") {
            s.kube_namespace = n;
        }
        s.kubeconfig = read("kubernetes.kubeconfig");
        if let Some(p) = read("kubernetes.lease-prefix") {
            s.lease_prefix = p;
        }
        Ok(Some(s))
    }
}

/// `15s`, `500ms`, `1m`, or a number of milliseconds (Camel's habit).
fn parse_duration(text: &str) -> Option<Duration> {
    if let Ok(ms) = text.parse::<u64>() {
        return Some(Duration::from_millis(ms));
    }
    camel_api::parse_duration(text)
}

fn camel_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '-' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn read(pairs: &[(&str, &str)]) -> Result<Option<ClusterSettings>, ClusterError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ClusterSettings::from_properties(|k| map.get(k).cloned())
    }

    #[test]
    fn no_backend_means_no_cluster() {
        assert!(ClusterSettings::from_properties_in(|_| None, false)
            .unwrap()
            .is_none());
    }

    #[test]
    fn in_a_pod_kubernetes_leases_are_the_default() {
        let s = ClusterSettings::from_properties_in(|_| None, true)
            .unwrap()
            .unwrap();
        assert_eq!(s.backend, Backend::Kubernetes);
        assert_eq!(
            s.url, "",
            "the service account says where the API server is"
        );
        // A backend named still wins.
        let named = |k: &str| match k {
            "camel.cluster.backend" => Some("redis".to_string()),
            "camel.cluster.url" => Some("redis://127.0.0.1:6379".to_string()),
            _ => None,
        };
        let s = ClusterSettings::from_properties_in(named, true)
            .unwrap()
            .unwrap();
        assert_eq!(s.backend, Backend::Redis);
    }

    #[test]
    fn reads_kebab_and_camel_case_spellings() {
        let s = read(&[
            ("camel.cluster.backend", "redis"),
            ("camel.cluster.url", "redis://127.0.0.1:6379"),
            ("camel.cluster.leaseDuration", "3s"),
            ("camel.cluster.renew-interval", "500"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(s.backend, Backend::Redis);
        assert_eq!(s.lease_duration, Duration::from_secs(3));
        assert_eq!(s.renew_interval, Duration::from_millis(500));
        assert_eq!(s.retry_interval, Duration::from_millis(500));
    }

    #[test]
    fn refuses_a_renewal_as_long_as_the_lease_and_an_unknown_backend() {
        let e = read(&[
            ("camel.cluster.backend", "nats"),
            ("camel.cluster.url", "nats://127.0.0.1:4222"),
            ("camel.cluster.lease-duration", "2s"),
            ("camel.cluster.renew-interval", "2s"),
        ])
        .err()
        .unwrap();
        assert!(
            e.to_string().contains("camel.cluster.renew-interval"),
            "{e}"
        );
        let e = read(&[
            ("camel.cluster.backend", "zookeeper"),
            ("camel.cluster.url", "x"),
        ])
        .err()
        .unwrap();
        assert!(e.to_string().contains("postgres, redis, nats"), "{e}");
        let k = read(&[("camel.cluster.backend", "kubernetes")])
            .unwrap()
            .unwrap();
        assert_eq!(k.backend, Backend::Kubernetes);
        assert_eq!(k.lease_prefix, "camel-");
        let k = read(&[
            ("camel.cluster.backend", "kubernetes"),
            ("camel.cluster.kubernetes.namespace", "prod"),
            ("camel.cluster.kubernetes.leasePrefix", "app-"),
            ("camel.cluster.kubernetes.kubeconfig", "/etc/kube/config"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(k.kube_namespace, "prod");
        assert_eq!(k.lease_prefix, "app-");
        assert_eq!(k.kubeconfig.as_deref(), Some("/etc/kube/config"));
    }

    #[test]
    fn debug_hides_the_urls_password() {
        let s = ClusterSettings::new(Backend::Postgres, "postgres://u:secret@127.0.0.1/db");
        assert!(!format!("{s:?}").contains("secret"));
    }
}
