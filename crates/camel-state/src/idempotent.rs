//! [`SqlIdempotentRepository`]: message ids in `camel_idempotent`.

use std::sync::Arc;

use async_trait::async_trait;
use camel_api::CamelError;
use camel_eip::idempotent::IdempotentRepository;

use crate::store::{db, now_ms, on_pool, Store};

/// Message ids of the idempotent consumer named `name`. `add` is one
/// `INSERT … ON CONFLICT DO NOTHING`: of two processes adding one id, one wins.
#[derive(Debug)]
pub struct SqlIdempotentRepository {
    store: Arc<Store>,
    name: String,
}

impl SqlIdempotentRepository {
    pub(crate) fn new(store: Arc<Store>, name: &str) -> Self {
        SqlIdempotentRepository {
            store,
            name: name.to_string(),
        }
    }
}

#[async_trait]
impl IdempotentRepository for SqlIdempotentRepository {
    async fn add(&self, id: &str) -> Result<bool, CamelError> {
        let ds = self.store.get().await?;
        let rows = on_pool!(ds, pool => sqlx::query(
            "INSERT INTO camel_idempotent (repository, message_id, created_at)
             VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        )
        .bind(&self.name)
        .bind(id)
        .bind(now_ms())
        .execute(pool)
        .await
        .map(|r| r.rows_affected())
        .map_err(db("adding a message id")))?;
        Ok(rows == 1)
    }

    async fn contains(&self, id: &str) -> Result<bool, CamelError> {
        let ds = self.store.get().await?;
        let row: Option<(i32,)> = on_pool!(ds, pool => sqlx::query_as(
            "SELECT 1 FROM camel_idempotent WHERE repository = $1 AND message_id = $2",
        )
        .bind(&self.name)
        .bind(id)
        .fetch_optional(pool)
        .await
        .map_err(db("looking up a message id")))?;
        Ok(row.is_some())
    }

    async fn remove(&self, id: &str) -> Result<(), CamelError> {
        let ds = self.store.get().await?;
        on_pool!(ds, pool => sqlx::query(
            "DELETE FROM camel_idempotent WHERE repository = $1 AND message_id = $2",
        )
        .bind(&self.name)
        .bind(id)
        .execute(pool)
        .await
        .map(|_| ())
        .map_err(db("removing a message id")))
    }
}
