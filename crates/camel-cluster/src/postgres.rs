//! Leases as rows of a PostgreSQL table, `(namespace, holder, epoch, expires_at)`, changed
//! only by conditional statements that read the database's clock (`clock_timestamp()`).
//!
//! - Acquire: insert the row, or take it over when it has expired, adding one to its
//!   epoch — one statement, so two contenders cannot both win.
//! - Renew: push `expires_at` forward only where holder, epoch and an unexpired lease
//!   still match.
//! - Release: expire the row at once, keeping its epoch.
//! - Fence ([`check_fence`]): inside a writer's own transaction, lock the row in share
//!   mode and check the epoch is still current and unexpired. A takeover (an `UPDATE` of
//!   the row) waits for that transaction, so the write either commits before the new
//!   leader's epoch exists or is refused.
//!
//! The store's connections use `lock_timeout`, so an election never waits long behind a
//! writer paused inside a fenced transaction.

use std::time::Duration;

use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{PgConnection, Row};

use crate::error::ClusterError;
use crate::store::{LeaderInfo, Lease, LeaseStore};

/// The default lease table.
pub const DEFAULT_TABLE: &str = "camel_cluster_lease";

/// Leases in a PostgreSQL table.
#[derive(Clone, Debug)]
pub struct PostgresLeaseStore {
    pool: PgPool,
    table: String,
}

/// A failure of the fencing check.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FenceError {
    /// The epoch is no longer current: another process took over, or the lease expired.
    #[error("fenced: epoch {epoch} of `{namespace}` is no longer the current leadership")]
    Stale {
        /// The namespace.
        namespace: String,
        /// The epoch the write was made under.
        epoch: u64,
    },
    /// The check itself failed.
    #[error("fencing check failed: {0}")]
    Database(String),
}

/// Checks, inside the caller's transaction, that `epoch` still leads `namespace` in the
/// lease table `table` (default [`DEFAULT_TABLE`]). Holds a share lock on the lease row
/// until the transaction ends, so no takeover can commit between this check and the
/// caller's commit.
pub async fn check_fence(
    conn: &mut PgConnection,
    table: &str,
    namespace: &str,
    epoch: u64,
) -> Result<(), FenceError> {
    let table = quoted(table).map_err(|e| FenceError::Database(e.to_string()))?;
    let sql = format!(
        "SELECT 1 FROM {table} WHERE namespace = $1 AND epoch = $2 \
         AND expires_at > clock_timestamp() FOR SHARE"
    );
    let epoch_i = i64::try_from(epoch).map_err(|_| FenceError::Stale {
        namespace: namespace.to_string(),
        epoch,
    })?;
    let row = sqlx::query(&sql)
        .bind(namespace)
        .bind(epoch_i)
        .fetch_optional(&mut *conn)
        .await
        .map_err(|e| FenceError::Database(crate::error::redact_text(&e.to_string())))?;
    match row {
        Some(_) => Ok(()),
        None => Err(FenceError::Stale {
            namespace: namespace.to_string(),
            epoch,
        }),
    }
}

/// A table name as an SQL identifier: letters, digits and `_`, optionally one schema dot.
fn quoted(table: &str) -> Result<String, ClusterError> {
    let ok = |part: &str| {
        !part.is_empty()
            && part.len() <= 63
            && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !part.starts_with(|c: char| c.is_ascii_digit())
    };
    let parts: Vec<&str> = table.split('.').collect();
    if parts.len() > 2 || !parts.iter().all(|p| ok(p)) {
        return Err(ClusterError::config(
            "camel.cluster.postgres.table",
            format!("`{table}` is not a table name (letters, digits, `_`, one optional schema)"),
        ));
    }
    Ok(parts
        .iter()
        .map(|p| format!("\"{p}\""))
        .collect::<Vec<_>>()
        .join("."))
}

fn db(e: sqlx::Error) -> ClusterError {
    ClusterError::store("postgres", e)
}

impl PostgresLeaseStore {
    /// Connects to `url` and creates the lease table `table` if missing.
    pub async fn connect(url: &str, table: &str) -> Result<Self, ClusterError> {
        let options: PgConnectOptions = url.parse().map_err(|e| {
            ClusterError::config(
                "camel.cluster.url",
                crate::error::redact_text(&format!("{e}")),
            )
        })?;
        // A takeover waits at most this long behind a fenced writer's share lock; the
        // election then tries again.
        let options = options.options([("lock_timeout", "2s"), ("statement_timeout", "10s")]);
        let pool = PgPoolOptions::new()
            .max_connections(4)
            .acquire_timeout(Duration::from_secs(5))
            .connect_with(options)
            .await
            .map_err(db)?;
        Self::with_pool(pool, table).await
    }

    /// Uses `pool`, creating the lease table `table` if missing.
    pub async fn with_pool(pool: PgPool, table: &str) -> Result<Self, ClusterError> {
        let name = quoted(table)?;
        let mut conn = pool.acquire().await.map_err(db)?;
        // Two processes starting at once may both create: the loser's error is harmless
        // when the table is there afterwards.
        let create = format!(
            "CREATE TABLE IF NOT EXISTS {name} (namespace TEXT PRIMARY KEY, holder TEXT NOT NULL, \
             epoch BIGINT NOT NULL, expires_at TIMESTAMPTZ NOT NULL)"
        );
        if let Err(e) = sqlx::query(&create).execute(&mut *conn).await {
            let there: Option<(i32,)> =
                sqlx::query_as("SELECT 1 FROM pg_class WHERE oid = to_regclass($1)")
                    .bind(&name)
                    .fetch_optional(&mut *conn)
                    .await
                    .map_err(db)?;
            if there.is_none() {
                return Err(db(e));
            }
        }
        drop(conn);
        Ok(PostgresLeaseStore { pool, table: name })
    }

    /// The pool the store uses.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

#[async_trait]
impl LeaseStore for PostgresLeaseStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    async fn try_acquire(
        &self,
        namespace: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<Option<Lease>, ClusterError> {
        let t = &self.table;
        let sql = format!(
            "INSERT INTO {t} AS l (namespace, holder, epoch, expires_at) \
             VALUES ($1, $2, 1, clock_timestamp() + $3 * interval '1 millisecond') \
             ON CONFLICT (namespace) DO UPDATE SET holder = EXCLUDED.holder, \
               epoch = l.epoch + 1, expires_at = EXCLUDED.expires_at \
             WHERE l.expires_at <= clock_timestamp() \
             RETURNING epoch"
        );
        let row = sqlx::query(&sql)
            .bind(namespace)
            .bind(holder)
            .bind(millis(ttl) as f64)
            .fetch_optional(&self.pool)
            .await;
        let row = match row {
            Ok(row) => row,
            // Waiting behind a fenced writer's lock: somebody else still holds it.
            Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some("55P03") => {
                return Ok(None)
            }
            Err(e) => return Err(db(e)),
        };
        Ok(row.map(|r| Lease {
            namespace: namespace.to_string(),
            holder: holder.to_string(),
            epoch: r.get::<i64, _>(0) as u64,
            token: 0,
        }))
    }

    async fn renew(&self, lease: &Lease, ttl: Duration) -> Result<Option<Lease>, ClusterError> {
        let t = &self.table;
        let sql = format!(
            "UPDATE {t} SET expires_at = clock_timestamp() + $4 * interval '1 millisecond' \
             WHERE namespace = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp()"
        );
        let done = sqlx::query(&sql)
            .bind(&lease.namespace)
            .bind(&lease.holder)
            .bind(lease.epoch as i64)
            .bind(millis(ttl) as f64)
            .execute(&self.pool)
            .await
            .map_err(db)?;
        Ok((done.rows_affected() == 1).then(|| lease.clone()))
    }

    async fn release(&self, lease: &Lease) -> Result<(), ClusterError> {
        let t = &self.table;
        let sql = format!(
            "UPDATE {t} SET expires_at = '-infinity' \
             WHERE namespace = $1 AND holder = $2 AND epoch = $3"
        );
        sqlx::query(&sql)
            .bind(&lease.namespace)
            .bind(&lease.holder)
            .bind(lease.epoch as i64)
            .execute(&self.pool)
            .await
            .map_err(db)?;
        Ok(())
    }

    async fn leader(&self, namespace: &str) -> Result<Option<LeaderInfo>, ClusterError> {
        let t = &self.table;
        let sql = format!(
            "SELECT holder, epoch FROM {t} WHERE namespace = $1 AND expires_at > clock_timestamp()"
        );
        let row = sqlx::query(&sql)
            .bind(namespace)
            .fetch_optional(&self.pool)
            .await
            .map_err(db)?;
        Ok(row.map(|r| LeaderInfo {
            holder: r.get(0),
            epoch: r.get::<i64, _>(1) as u64,
        }))
    }
}
