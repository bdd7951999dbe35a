//! [`SqlAggregationRepository`]: an aggregator's groups in `camel_aggregation`.
//!
//! Every write is conditional on the version read (ADR 0056): an `UPDATE … WHERE version =
//! $v` that touches no row, or an `INSERT … ON CONFLICT DO NOTHING` that inserts none, is a
//! [`RepositoryError::Conflict`], and the aggregator reads the group again. Two processes
//! on the same keys therefore never overwrite each other's update; on PostgreSQL the
//! second `UPDATE` waits for the first's row lock and then sees the new version.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use camel_api::{CamelError, Exchange};
use camel_eip::aggregate::{AggregationRepository, CompletedGroup, RepositoryError, StoredGroup};

use crate::codec::{decode, encode};
use crate::store::{db, now_ms, on_pool, Store};

/// Groups of the aggregator named `name`, in the database of its store.
#[derive(Debug)]
pub struct SqlAggregationRepository {
    store: Arc<Store>,
    name: String,
}

impl SqlAggregationRepository {
    pub(crate) fn new(store: Arc<Store>, name: &str) -> Self {
        SqlAggregationRepository {
            store,
            name: name.to_string(),
        }
    }
}

fn written(rows: u64) -> Result<(), RepositoryError> {
    if rows == 1 {
        Ok(())
    } else {
        Err(RepositoryError::Conflict)
    }
}

#[async_trait]
impl AggregationRepository for SqlAggregationRepository {
    async fn get(&self, key: &str) -> Result<Option<StoredGroup>, CamelError> {
        let ds = self.store.get().await?;
        let row: Option<(i64, String)> = on_pool!(ds, pool => sqlx::query_as(
            "SELECT version, exchange FROM camel_aggregation
             WHERE repository = $1 AND completion_id = '' AND correlation_key = $2",
        )
        .bind(&self.name)
        .bind(key)
        .fetch_optional(pool)
        .await
        .map_err(db("reading a group")))?;
        match row {
            None => Ok(None),
            Some((version, text)) => Ok(Some(StoredGroup {
                exchange: decode(&text)?,
                version: version as u64,
            })),
        }
    }

    async fn put(
        &self,
        key: &str,
        exchange: &Exchange,
        version: Option<u64>,
    ) -> Result<u64, RepositoryError> {
        let ds = self.store.get().await?;
        let text = encode(exchange);
        let now = now_ms();
        let rows = match version {
            None => on_pool!(ds, pool => sqlx::query(
                "INSERT INTO camel_aggregation
                     (repository, completion_id, correlation_key, version, exchange, updated_at)
                 VALUES ($1, '', $2, 1, $3, $4) ON CONFLICT DO NOTHING",
            )
            .bind(&self.name)
            .bind(key)
            .bind(&text)
            .bind(now)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
            .map_err(db("adding a group")))?,
            Some(v) => on_pool!(ds, pool => sqlx::query(
                "UPDATE camel_aggregation SET exchange = $1, version = version + 1, updated_at = $2
                 WHERE repository = $3 AND completion_id = '' AND correlation_key = $4
                   AND version = $5",
            )
            .bind(&text)
            .bind(now)
            .bind(&self.name)
            .bind(key)
            .bind(v as i64)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
            .map_err(db("updating a group")))?,
        };
        written(rows)?;
        Ok(version.map_or(1, |v| v + 1))
    }

    async fn complete(
        &self,
        key: &str,
        version: Option<u64>,
        completion_id: &str,
        exchange: &Exchange,
    ) -> Result<(), RepositoryError> {
        let ds = self.store.get().await?;
        let text = encode(exchange);
        let now = now_ms();
        let rows = match version {
            // A group completed by its first exchange: never written open.
            None => on_pool!(ds, pool => sqlx::query(
                "INSERT INTO camel_aggregation
                     (repository, completion_id, correlation_key, version, exchange, updated_at)
                 SELECT $1, $2, $3, 1, $4, $5
                 WHERE NOT EXISTS (SELECT 1 FROM camel_aggregation
                     WHERE repository = $1 AND completion_id = '' AND correlation_key = $3)",
            )
            .bind(&self.name)
            .bind(completion_id)
            .bind(key)
            .bind(&text)
            .bind(now)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
            .map_err(db("completing a group")))?,
            // One statement moves the row from open to completed.
            Some(v) => on_pool!(ds, pool => sqlx::query(
                "UPDATE camel_aggregation
                 SET completion_id = $1, exchange = $2, version = version + 1, updated_at = $3
                 WHERE repository = $4 AND completion_id = '' AND correlation_key = $5
                   AND version = $6",
            )
            .bind(completion_id)
            .bind(&text)
            .bind(now)
            .bind(&self.name)
            .bind(key)
            .bind(v as i64)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
            .map_err(db("completing a group")))?,
        };
        written(rows)
    }

    async fn confirm(&self, completion_id: &str) -> Result<(), CamelError> {
        let ds = self.store.get().await?;
        on_pool!(ds, pool => sqlx::query(
            "DELETE FROM camel_aggregation WHERE repository = $1 AND completion_id = $2",
        )
        .bind(&self.name)
        .bind(completion_id)
        .execute(pool)
        .await
        .map(|_| ())
        .map_err(db("confirming a group")))
    }

    async fn keys(&self) -> Result<Vec<String>, CamelError> {
        let ds = self.store.get().await?;
        let rows: Vec<(String,)> = on_pool!(ds, pool => sqlx::query_as(
            "SELECT correlation_key FROM camel_aggregation
             WHERE repository = $1 AND completion_id = ''",
        )
        .bind(&self.name)
        .fetch_all(pool)
        .await
        .map_err(db("listing groups")))?;
        Ok(rows.into_iter().map(|(k,)| k).collect())
    }

    async fn unconfirmed(&self, older_than: Duration) -> Result<Vec<CompletedGroup>, CamelError> {
        let ds = self.store.get().await?;
        let before = now_ms() - older_than.as_millis() as i64;
        let rows: Vec<(String, String, String, i32)> = on_pool!(ds, pool => sqlx::query_as(
            "SELECT completion_id, correlation_key, exchange, attempts FROM camel_aggregation
             WHERE repository = $1 AND completion_id <> '' AND updated_at <= $2",
        )
        .bind(&self.name)
        .bind(before)
        .fetch_all(pool)
        .await
        .map_err(db("listing completed groups")))?;
        rows.into_iter()
            .map(|(completion_id, key, text, attempts)| {
                Ok(CompletedGroup {
                    completion_id,
                    key,
                    exchange: decode(&text)?,
                    attempts: attempts.max(0) as u32,
                })
            })
            .collect()
    }

    async fn record_attempt(&self, completion_id: &str) -> Result<(), CamelError> {
        let ds = self.store.get().await?;
        // Moving updated_at also keeps another process's recovery off it for an interval.
        on_pool!(ds, pool => sqlx::query(
            "UPDATE camel_aggregation SET attempts = attempts + 1, updated_at = $1
             WHERE repository = $2 AND completion_id = $3",
        )
        .bind(now_ms())
        .bind(&self.name)
        .bind(completion_id)
        .execute(pool)
        .await
        .map(|_| ())
        .map_err(db("counting a recovery attempt")))
    }
}
