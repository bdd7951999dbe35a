//! [`RedisAggregationRepository`]: an aggregator's groups in Redis hashes.
//!
//! Under the prefix `camel:aggregation:{NAME}` (the braces make one Redis Cluster hash
//! slot, so the scripts may touch every key): `:open` (correlation key → stored
//! exchange) and `:version` (correlation key → version) hold the open groups;
//! `:done`, `:done_key`, `:done_at` and `:done_attempts` (completion id → exchange,
//! correlation key, last change in ms, recovery attempts) the completed ones until
//! confirmed. Writes are Lua scripts that compare the version first, so a write against
//! a version someone else replaced is a [`RepositoryError::Conflict`] and the aggregator
//! reads the group again: two processes on the same keys never overwrite each other.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use camel_api::{CamelError, Exchange};
use camel_eip::aggregate::{AggregationRepository, CompletedGroup, RepositoryError, StoredGroup};
use camel_state::codec::{decode, encode};
use redis::AsyncCommands;

use super::store::RedisStore;
use crate::connection::failed;

/// The start of both writes: stop with 0 (a conflict) unless the open group ARGV[1] is
/// at version ARGV[2] ('' = the group must not exist); `current` is its version.
const CHECK_VERSION: &str = r"
local current = redis.call('HGET', KEYS[2], ARGV[1])
if ARGV[2] == '' then
  if current then return 0 end
elseif current ~= ARGV[2] then
  return 0
end
";

/// After [`CHECK_VERSION`], writes the open group ARGV[1] with the exchange ARGV[3];
/// returns the new version.
const PUT: &str = r"
local version = (tonumber(current) or 0) + 1
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], version)
return version
";

/// After [`CHECK_VERSION`], moves the open group ARGV[1] to the completed ones under
/// ARGV[3] with the exchange ARGV[4] at time ARGV[5]; returns 1.
const COMPLETE: &str = r"
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
redis.call('HSET', KEYS[4], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[5], ARGV[3], ARGV[5])
return 1
";

/// A write script: the version check, then `body`.
fn checked(body: &str) -> redis::Script {
    redis::Script::new(&format!("{CHECK_VERSION}{body}"))
}

/// The groups of the aggregator named `name`, on `store`.
#[derive(Debug, Clone)]
pub struct RedisAggregationRepository {
    store: Arc<RedisStore>,
    prefix: String,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl RedisAggregationRepository {
    /// The repository of `name` on `store`.
    pub fn new(store: Arc<RedisStore>, name: &str) -> Self {
        RedisAggregationRepository {
            store,
            prefix: format!("camel:aggregation:{{{name}}}"),
        }
    }

    fn key(&self, part: &str) -> String {
        format!("{}:{part}", self.prefix)
    }

    /// The Redis keys of this repository (for inspection and cleanup).
    pub fn redis_keys(&self) -> Vec<String> {
        [
            "open",
            "version",
            "done",
            "done_key",
            "done_at",
            "done_attempts",
        ]
        .iter()
        .map(|p| self.key(p))
        .collect()
    }
}

#[async_trait]
impl AggregationRepository for RedisAggregationRepository {
    async fn get(&self, key: &str) -> Result<Option<StoredGroup>, CamelError> {
        let mut c = self.store.connection().await?;
        let (text, version): (Option<String>, Option<u64>) = redis::pipe()
            .hget(self.key("open"), key)
            .hget(self.key("version"), key)
            .query_async(&mut c)
            .await
            .map_err(|e| failed("HGET", e))?;
        match (text, version) {
            (Some(text), Some(version)) => Ok(Some(StoredGroup {
                exchange: decode(&text)?,
                version,
            })),
            _ => Ok(None),
        }
    }

    async fn put(
        &self,
        key: &str,
        exchange: &Exchange,
        version: Option<u64>,
    ) -> Result<u64, RepositoryError> {
        let mut c = self.store.connection().await?;
        let written: u64 = checked(PUT)
            .key(self.key("open"))
            .key(self.key("version"))
            .arg(key)
            .arg(version.map(|v| v.to_string()).unwrap_or_default())
            .arg(encode(exchange))
            .invoke_async(&mut c)
            .await
            .map_err(|e| failed("EVALSHA (put a group)", e))?;
        match written {
            0 => Err(RepositoryError::Conflict),
            v => Ok(v),
        }
    }

    async fn complete(
        &self,
        key: &str,
        version: Option<u64>,
        completion_id: &str,
        exchange: &Exchange,
    ) -> Result<(), RepositoryError> {
        let mut c = self.store.connection().await?;
        let moved: i64 = checked(COMPLETE)
            .key(self.key("open"))
            .key(self.key("version"))
            .key(self.key("done"))
            .key(self.key("done_key"))
            .key(self.key("done_at"))
            .arg(key)
            .arg(version.map(|v| v.to_string()).unwrap_or_default())
            .arg(completion_id)
            .arg(encode(exchange))
            .arg(now_ms())
            .invoke_async(&mut c)
            .await
            .map_err(|e| failed("EVALSHA (complete a group)", e))?;
        if moved == 1 {
            Ok(())
        } else {
            Err(RepositoryError::Conflict)
        }
    }

    async fn confirm(&self, completion_id: &str) -> Result<(), CamelError> {
        let mut c = self.store.connection().await?;
        let mut pipe = redis::pipe();
        pipe.atomic();
        for part in ["done", "done_key", "done_at", "done_attempts"] {
            pipe.hdel(self.key(part), completion_id).ignore();
        }
        pipe.query_async::<()>(&mut c)
            .await
            .map_err(|e| failed("HDEL (confirm a group)", e))
    }

    async fn keys(&self) -> Result<Vec<String>, CamelError> {
        let mut c = self.store.connection().await?;
        c.hkeys(self.key("open"))
            .await
            .map_err(|e| failed("HKEYS", e))
    }

    async fn unconfirmed(&self, older_than: Duration) -> Result<Vec<CompletedGroup>, CamelError> {
        let mut c = self.store.connection().await?;
        let before = now_ms() - i64::try_from(older_than.as_millis()).unwrap_or(i64::MAX);
        let times: Vec<(String, i64)> = c
            .hgetall(self.key("done_at"))
            .await
            .map_err(|e| failed("HGETALL", e))?;
        let mut groups = Vec::new();
        for (completion_id, at) in times {
            if at > before {
                continue;
            }
            let (text, key, attempts): (Option<String>, Option<String>, Option<u32>) =
                redis::pipe()
                    .hget(self.key("done"), &completion_id)
                    .hget(self.key("done_key"), &completion_id)
                    .hget(self.key("done_attempts"), &completion_id)
                    .query_async(&mut c)
                    .await
                    .map_err(|e| failed("HGET", e))?;
            // Confirmed between the two reads: nothing to recover.
            let (Some(text), Some(key)) = (text, key) else {
                continue;
            };
            groups.push(CompletedGroup {
                completion_id,
                key,
                exchange: decode(&text)?,
                attempts: attempts.unwrap_or(0),
            });
        }
        Ok(groups)
    }

    async fn record_attempt(&self, completion_id: &str) -> Result<(), CamelError> {
        let mut c = self.store.connection().await?;
        // Moving the time also keeps another process's recovery off it for an interval.
        redis::pipe()
            .atomic()
            .hincr(self.key("done_attempts"), completion_id, 1)
            .ignore()
            .hset(self.key("done_at"), completion_id, now_ms())
            .ignore()
            .query_async::<()>(&mut c)
            .await
            .map_err(|e| failed("HINCRBY", e))
    }
}
