//! Leases as entries of a NATS JetStream key-value bucket whose `max_age` is the lease
//! duration: an entry not rewritten within it is removed by the server.
//!
//! - Acquire: `create` the namespace's key (succeeds only when it is absent, deleted or
//!   expired; revision-checked, so one contender wins). The epoch is the revision of
//!   that write: the bucket's stream sequence, which only grows.
//! - Renew: `update` with the revision of our last write; any write by another process
//!   in between makes it fail.
//! - Release: delete with our last revision.
//!
//! The bucket's `max_age` is fixed when it is created; a bucket that exists with another
//! one is refused rather than silently used with a different lease.

use std::time::Duration;

use async_nats::jetstream::kv::{Config, Operation, Store};
use async_trait::async_trait;

use crate::error::ClusterError;
use crate::store::{LeaderInfo, Lease, LeaseStore};

/// Leases in a JetStream KV bucket.
#[derive(Clone)]
pub struct NatsLeaseStore {
    kv: Store,
    bucket: String,
}

impl std::fmt::Debug for NatsLeaseStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsLeaseStore")
            .field("bucket", &self.bucket)
            .finish_non_exhaustive()
    }
}

fn failed(e: impl std::fmt::Display) -> ClusterError {
    ClusterError::store("nats", e)
}

impl NatsLeaseStore {
    /// Connects to `url` and opens (or creates) `bucket` with `max_age = lease_duration`.
    pub async fn connect(
        url: &str,
        bucket: &str,
        lease_duration: Duration,
    ) -> Result<Self, ClusterError> {
        let client = async_nats::connect(url).await.map_err(failed)?;
        let js = async_nats::jetstream::new(client);
        let kv = match js.get_key_value(bucket).await {
            Ok(kv) => {
                let info = kv.status().await.map_err(failed)?;
                let age = info.max_age();
                if age != lease_duration {
                    return Err(ClusterError::config(
                        "camel.cluster.lease-duration",
                        format!(
                            "the NATS bucket `{bucket}` expires entries after {age:?}, not the lease duration {lease_duration:?}; use another bucket (camel.cluster.nats.bucket) or the same duration"
                        ),
                    ));
                }
                kv
            }
            Err(_) => js
                .create_key_value(Config {
                    bucket: bucket.to_string(),
                    history: 1,
                    max_age: lease_duration,
                    ..Default::default()
                })
                .await
                .map_err(failed)?,
        };
        Ok(NatsLeaseStore {
            kv,
            bucket: bucket.to_string(),
        })
    }
}

#[async_trait]
impl LeaseStore for NatsLeaseStore {
    fn backend(&self) -> &'static str {
        "nats"
    }

    async fn try_acquire(
        &self,
        namespace: &str,
        holder: &str,
        _ttl: Duration,
    ) -> Result<Option<Lease>, ClusterError> {
        // The epoch is the revision of this very write, so the value can only say who.
        match self.kv.create(namespace, holder.to_string().into()).await {
            Ok(revision) => Ok(Some(Lease {
                namespace: namespace.to_string(),
                holder: holder.to_string(),
                epoch: revision,
                token: revision,
            })),
            Err(e) if e.kind() == async_nats::jetstream::kv::CreateErrorKind::AlreadyExists => {
                Ok(None)
            }
            // A concurrent create won the race on a deleted key.
            Err(e) if e.kind() == async_nats::jetstream::kv::CreateErrorKind::Publish => Ok(None),
            Err(e) => Err(failed(e)),
        }
    }

    async fn renew(&self, lease: &Lease, _ttl: Duration) -> Result<Option<Lease>, ClusterError> {
        let value = format!("{}|{}", lease.holder, lease.epoch);
        match self
            .kv
            .update(&lease.namespace, value.into(), lease.token)
            .await
        {
            Ok(revision) => Ok(Some(Lease {
                token: revision,
                ..lease.clone()
            })),
            Err(e) if e.kind() == async_nats::jetstream::kv::UpdateErrorKind::WrongLastRevision => {
                Ok(None)
            }
            Err(e) => Err(failed(e)),
        }
    }

    async fn release(&self, lease: &Lease) -> Result<(), ClusterError> {
        self.kv
            .delete_expect_revision(&lease.namespace, Some(lease.token))
            .await
            .map_err(failed)
    }

    async fn leader(&self, namespace: &str) -> Result<Option<LeaderInfo>, ClusterError> {
        let entry = self.kv.entry(namespace).await.map_err(failed)?;
        Ok(entry.and_then(|e| {
            if e.operation != Operation::Put {
                return None;
            }
            let text = String::from_utf8_lossy(&e.value).to_string();
            // The first write holds the holder alone; renewals add `|epoch`.
            match text.rsplit_once('|') {
                Some((holder, epoch)) => Some(LeaderInfo {
                    holder: holder.to_string(),
                    epoch: epoch.parse().ok()?,
                }),
                None => Some(LeaderInfo {
                    holder: text,
                    epoch: e.revision,
                }),
            }
        }))
    }
}
