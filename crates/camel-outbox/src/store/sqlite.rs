//! SQLite: one process, WAL mode, `BEGIN IMMEDIATE` for multi-statement writes (a
//! deferred transaction can fail with SQLITE_BUSY when it upgrades from read to write,
//! even with a busy timeout), and ids that are never reused (`AUTOINCREMENT`).

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow, SqliteSynchronous,
};
use sqlx::{Row, SqliteConnection, SqlitePool};

use super::schema::{self, COLUMNS};
use super::{Page, PartitionStore, Position, Positioned, PreparedRow, RawRow};
use crate::config::TableName;
use crate::error::Result;
use crate::message::StoredMessage;

fn tune(options: SqliteConnectOptions) -> SqliteConnectOptions {
    options
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(10))
}

fn pool_with(options: SqliteConnectOptions) -> SqlitePool {
    // A file in a directory not made yet (`sqlite:camel-data/app.db` on a first run): made
    // here; a failure shows when the file is opened.
    if let Some(dir) = options
        .get_filename()
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
    {
        let _ = std::fs::create_dir_all(dir);
    }
    SqlitePoolOptions::new()
        .max_connections(4)
        .connect_lazy_with(tune(options))
}

pub(crate) fn pool(url: &str) -> Result<SqlitePool> {
    Ok(pool_with(SqliteConnectOptions::from_str(url)?))
}

pub(crate) fn pool_for_path(path: &Path) -> Result<SqlitePool> {
    Ok(pool_with(SqliteConnectOptions::new().filename(path)))
}

pub(crate) async fn migrate(pool: &SqlitePool, table: &TableName) -> Result<()> {
    let mut conn = pool.acquire().await?;
    let mut tx = sqlx::Connection::begin_with(&mut *conn, "BEGIN IMMEDIATE").await?;
    for ddl in schema::sqlite(table) {
        sqlx::query(&ddl).execute(&mut *tx).await?;
    }
    sqlx::query(&format!(
        "INSERT OR IGNORE INTO {} (key, value) VALUES ('schema_version', ?)",
        table.meta()
    ))
    .bind(schema::SCHEMA_VERSION)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

pub(crate) async fn meta(
    pool: &SqlitePool,
    table: &TableName,
    key: &str,
) -> Result<Option<String>> {
    Ok(
        sqlx::query_scalar(&format!("SELECT value FROM {} WHERE key = ?", table.meta()))
            .bind(key)
            .fetch_optional(pool)
            .await?,
    )
}

/// Adds one to the number stored under `key` (0 when missing) and returns it.
pub(crate) async fn bump_meta(pool: &SqlitePool, table: &TableName, key: &str) -> Result<i64> {
    Ok(sqlx::query_scalar(&format!(
        "INSERT INTO {} (key, value) VALUES (?1, '1')
         ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1
         RETURNING CAST(value AS INTEGER)",
        table.meta()
    ))
    .bind(key)
    .fetch_one(pool)
    .await?)
}

/// Rows per statement: six parameters a row stays well under SQLite's variable limit.
const ROWS_PER_STATEMENT: usize = 1000;

/// Inserts `rows` (one statement per thousand) and returns their ids in input order.
pub(crate) async fn insert(
    conn: &mut SqliteConnection,
    table: &TableName,
    rows: Vec<PreparedRow>,
) -> Result<Vec<i64>> {
    let mut ids = Vec::with_capacity(rows.len());
    for chunk in rows.chunks(ROWS_PER_STATEMENT) {
        let values = vec!["(?, ?, ?, ?, ?, ?)"; chunk.len()].join(", ");
        let sql = format!(
            "INSERT INTO {table} (partition_no, group_key, headers, payload, kind, created_at)
             VALUES {values} RETURNING id"
        );
        let mut q = sqlx::query_scalar::<_, i64>(&sql);
        for r in chunk {
            q = q
                .bind(r.partition)
                .bind(r.group_key.as_deref())
                .bind(r.headers.as_str())
                .bind(r.payload.as_slice())
                .bind(r.kind)
                .bind(r.created_at);
        }
        let mut got = q.fetch_all(&mut *conn).await?;
        got.sort_unstable();
        ids.extend(got);
    }
    Ok(ids)
}

/// The partition store on SQLite: the pool (one process owns every partition).
#[derive(Debug)]
pub(crate) struct SqlitePartition {
    pool: SqlitePool,
    table: TableName,
    partition: i64,
}

impl SqlitePartition {
    pub(crate) fn new(pool: SqlitePool, table: TableName, partition: u32) -> Self {
        SqlitePartition {
            pool,
            table,
            partition: i64::from(partition),
        }
    }
}

pub(crate) fn decode(rows: Vec<SqliteRow>) -> Result<Vec<StoredMessage>> {
    rows.into_iter()
        .map(|r| {
            RawRow {
                id: r.try_get("id")?,
                partition: r.try_get("partition_no")?,
                group_key: r.try_get("group_key")?,
                headers: r.try_get("headers")?,
                payload: r.try_get("payload")?,
                kind: r.try_get("kind")?,
                attempts: r.try_get("attempts")?,
                retry_at: r.try_get("retry_at")?,
                created_at: r.try_get("created_at")?,
            }
            .decode()
        })
        .collect()
}

#[async_trait]
impl PartitionStore for SqlitePartition {
    /// SQLite's one writer commits in id order, so the id alone is the position and
    /// nothing is ever held back.
    async fn scan(&mut self, after: Position, limit: u32, skip: &[String]) -> Result<Page> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM {} WHERE partition_no = ? AND id > ?
               AND (group_key IS NULL OR group_key NOT IN (SELECT value FROM json_each(?)))
             ORDER BY id LIMIT ?",
            self.table
        ))
        .bind(self.partition)
        .bind(after.id)
        .bind(serde_json::Value::from(skip.to_vec()).to_string())
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        let rows = decode(rows)?
            .into_iter()
            .map(|message| Positioned {
                at: Position {
                    order: 0,
                    id: message.id,
                },
                message,
            })
            .collect();
        Ok(Page {
            rows,
            held_back: false,
            horizon: 0,
        })
    }

    async fn scan_group(
        &mut self,
        group: Option<&str>,
        from: i64,
        up_to: Position,
        limit: u32,
    ) -> Result<Vec<StoredMessage>> {
        let filter = if group.is_some() {
            "AND group_key = ?"
        } else {
            ""
        };
        let sql = format!(
            "SELECT {COLUMNS} FROM {} WHERE partition_no = ? {filter} AND id >= ? AND id <= ?
             ORDER BY id LIMIT ?",
            self.table
        );
        let mut q = sqlx::query(&sql).bind(self.partition);
        if let Some(g) = group {
            q = q.bind(g);
        }
        let rows = q
            .bind(from)
            .bind(up_to.id)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        decode(rows)
    }

    async fn delete(&mut self, ids: &[i64]) -> Result<()> {
        let list = serde_json::Value::from(ids.to_vec()).to_string();
        sqlx::query(&format!(
            "DELETE FROM {} WHERE id IN (SELECT value FROM json_each(?))",
            self.table
        ))
        .bind(list)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn record_failure(&mut self, id: i64, attempts: u32, retry_at_ms: i64) -> Result<bool> {
        let done = sqlx::query(&format!(
            "UPDATE {} SET attempts = ?, retry_at = ? WHERE id = ?",
            self.table
        ))
        .bind(i64::from(attempts))
        .bind(retry_at_ms)
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn admin_epoch(&mut self) -> Result<i64> {
        Ok(meta(&self.pool, &self.table, super::ADMIN_EPOCH)
            .await?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }

    async fn bury(&mut self, id: i64, attempts: u32, error: &str) -> Result<bool> {
        let t = &self.table;
        let mut conn = self.pool.acquire().await?;
        let mut tx = sqlx::Connection::begin_with(&mut *conn, "BEGIN IMMEDIATE").await?;
        let moved = sqlx::query(&format!(
            "INSERT INTO {dead} (id, partition_no, group_key, headers, payload, kind, attempts,
                                 created_at, died_at, last_error)
             SELECT id, partition_no, group_key, headers, payload, kind, ?, created_at, ?, ?
             FROM {t} WHERE id = ?",
            dead = t.dead()
        ))
        .bind(i64::from(attempts))
        .bind(crate::message::now_ms())
        .bind(error)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        sqlx::query(&format!("DELETE FROM {t} WHERE id = ?"))
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(moved.rows_affected() == 1)
    }
}
