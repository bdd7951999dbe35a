//! Leases as Redis keys: `{prefix}{namespace}` holds `holder|epoch` with a millisecond
//! expiry, `{prefix}{namespace}:epoch` counts acquisitions.
//!
//! - Acquire: a script does `SET key … NX PX ttl` and, when that took, `INCR` of the
//!   epoch counter, then stores the epoch in the value — atomically, as Redis runs a
//!   script at once; a failed attempt costs no epoch.
//! - Renew: a script extends the expiry only while the value is still ours
//!   (compare-and-extend). Release: compare-and-delete.
//!
//! What this can promise: one holder at a time *as long as Redis itself does not lose
//! writes* — a single server without failover. With replicas and failover, an
//! acknowledged `SET` or `INCR` can be lost with the old primary, and two processes can
//! lead at once under the same or a lower epoch. Redis holds no data of ours to check an
//! epoch against, so the fencing of writes needs the PostgreSQL backend.

use std::time::Duration;

use async_trait::async_trait;
use redis::aio::ConnectionManager;
use redis::Script;

use crate::error::ClusterError;
use crate::store::{LeaderInfo, Lease, LeaseStore};

const ACQUIRE: &str = r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local epoch = redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[1], ARGV[1] .. '|' .. epoch, 'PX', ARGV[2])
  return epoch
end
return 0
";

const RENEW: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// Leases in Redis.
#[derive(Clone)]
pub struct RedisLeaseStore {
    conn: ConnectionManager,
    prefix: String,
}

impl std::fmt::Debug for RedisLeaseStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisLeaseStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

fn failed(e: redis::RedisError) -> ClusterError {
    ClusterError::store("redis", e)
}

impl RedisLeaseStore {
    /// Connects to `url` (`redis://127.0.0.1:6379/0`); keys start with `prefix`.
    pub async fn connect(url: &str, prefix: &str) -> Result<Self, ClusterError> {
        let client = redis::Client::open(url).map_err(|e| {
            ClusterError::config(
                "camel.cluster.url",
                crate::error::redact_text(&e.to_string()),
            )
        })?;
        let conn = ConnectionManager::new(client).await.map_err(failed)?;
        Ok(RedisLeaseStore {
            conn,
            prefix: prefix.to_string(),
        })
    }

    fn key(&self, namespace: &str) -> String {
        format!("{}{namespace}", self.prefix)
    }
}

fn value(lease: &Lease) -> String {
    format!("{}|{}", lease.holder, lease.epoch)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

#[async_trait]
impl LeaseStore for RedisLeaseStore {
    fn backend(&self) -> &'static str {
        "redis"
    }

    async fn try_acquire(
        &self,
        namespace: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<Option<Lease>, ClusterError> {
        let key = self.key(namespace);
        let epoch: u64 = Script::new(ACQUIRE)
            .key(&key)
            .key(format!("{key}:epoch"))
            .arg(holder)
            .arg(millis(ttl))
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(failed)?;
        Ok((epoch > 0).then(|| Lease {
            namespace: namespace.to_string(),
            holder: holder.to_string(),
            epoch,
            token: 0,
        }))
    }

    async fn renew(&self, lease: &Lease, ttl: Duration) -> Result<Option<Lease>, ClusterError> {
        let renewed: i64 = Script::new(RENEW)
            .key(self.key(&lease.namespace))
            .arg(value(lease))
            .arg(millis(ttl))
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(failed)?;
        Ok((renewed == 1).then(|| lease.clone()))
    }

    async fn release(&self, lease: &Lease) -> Result<(), ClusterError> {
        let _: i64 = Script::new(RELEASE)
            .key(self.key(&lease.namespace))
            .arg(value(lease))
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(failed)?;
        Ok(())
    }

    async fn leader(&self, namespace: &str) -> Result<Option<LeaderInfo>, ClusterError> {
        let held: Option<String> = redis::cmd("GET")
            .arg(self.key(namespace))
            .query_async(&mut self.conn.clone())
            .await
            .map_err(failed)?;
        Ok(held.and_then(|v| {
            let (holder, epoch) = v.rsplit_once('|')?;
            Some(LeaderInfo {
                holder: holder.to_string(),
                epoch: epoch.parse().ok()?,
            })
        }))
    }
}
