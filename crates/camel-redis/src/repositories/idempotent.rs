//! [`RedisIdempotentRepository`]: an idempotent consumer's message ids in a Redis set.

use std::sync::Arc;

use async_trait::async_trait;
use camel_api::CamelError;
use camel_eip::idempotent::IdempotentRepository;
use redis::AsyncCommands;

use super::store::RedisStore;
use crate::connection::failed;

/// The ids of the processor named `name`, in the set `camel:idempotent:{name}` (Camel's
/// `RedisIdempotentRepository` keeps one set per processor name too). `add` is one
/// `SADD`: of two processes adding one id, one gets `false`.
#[derive(Debug, Clone)]
pub struct RedisIdempotentRepository {
    store: Arc<RedisStore>,
    set: String,
}

impl RedisIdempotentRepository {
    /// The repository of `name` on `store`.
    pub fn new(store: Arc<RedisStore>, name: &str) -> Self {
        RedisIdempotentRepository {
            store,
            set: format!("camel:idempotent:{name}"),
        }
    }

    /// The Redis key of the set.
    pub fn key(&self) -> &str {
        &self.set
    }
}

#[async_trait]
impl IdempotentRepository for RedisIdempotentRepository {
    async fn add(&self, id: &str) -> Result<bool, CamelError> {
        let mut c = self.store.connection().await?;
        let added: i64 = c.sadd(&self.set, id).await.map_err(|e| failed("SADD", e))?;
        Ok(added == 1)
    }

    async fn contains(&self, id: &str) -> Result<bool, CamelError> {
        let mut c = self.store.connection().await?;
        c.sismember(&self.set, id)
            .await
            .map_err(|e| failed("SISMEMBER", e))
    }

    async fn remove(&self, id: &str) -> Result<(), CamelError> {
        let mut c = self.store.connection().await?;
        let _: i64 = c.srem(&self.set, id).await.map_err(|e| failed("SREM", e))?;
        Ok(())
    }
}
