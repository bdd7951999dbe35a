//! SQLite: one process, WAL mode, `BEGIN IMMEDIATE` for multi-statement writes (a
//! deferred transaction can fail with SQLITE_BUSY when it upgrades from read to write,
//! even with a busy timeout), and ids that are never reused (`AUTOINCREMENT`).

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions, SqliteRow, SqliteSynchronous};
use sqlx::{Row, SqliteConnection, SqlitePool};

use super::schema::{self, COLUMNS};
use super::{Page, PartitionStore, Position, Positioned, PreparedRow, RawRow};
use crate::config::TableName;
use crate::error::Result;
use crate::message::StoredMessage;

/// How long a statement waits for another connection's lock on the file.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// WAL mode is set by [`wal`] once connected, not here: as a connect option it fails the
/// connection outright when two first connections to a new file open at once.
fn tune(options: SqliteConnectOptions) -> SqliteConnectOptions {
    options
        .create_if_missing(true)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(BUSY_TIMEOUT)
}

/// Puts the file in WAL mode (it stays so; on a file already in WAL mode this is a read).
/// The switch needs the file to itself, and SQLite does not wait for that as it waits for
/// a write lock: while another connection reads the new file (its own first connection,
/// setting up), the switch fails at once with SQLITE_BUSY ("database is locked"). So it
/// is retried, within the busy timeout.
async fn wal(conn: &mut SqliteConnection) -> std::result::Result<(), sqlx::Error> {
    let deadline = tokio::time::Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(2);
    loop {
        let set = sqlx::query_scalar::<_, String>("PRAGMA journal_mode = WAL")
            .fetch_one(&mut *conn)
            .await;
        match set {
            Ok(_) => return Ok(()),
            Err(sqlx::Error::Database(e))
                if is_busy(e.code().as_deref()) && tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            Err(e) => return Err(e),
        }
    }
}

/// SQLITE_BUSY, or one of its extended codes.
fn is_busy(code: Option<&str>) -> bool {
    code.and_then(|c| c.parse::<i32>().ok())
        .is_some_and(|c| c & 0xff == 5)
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
        .after_connect(|conn, _| Box::pin(wal(conn)))
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
            quiet: false,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The first connections to a new file, opened at once, all switch it to WAL mode:
    /// the switch needs the file to itself and fails at once ("database is locked", no
    /// busy wait) while another connection reads it, so it is retried. (With WAL as a
    /// connect option this failed within the first 20 rounds.)
    #[test]
    fn busy_codes() {
        assert!(is_busy(Some("5")));
        assert!(is_busy(Some("517"))); // SQLITE_BUSY_SNAPSHOT
        assert!(!is_busy(Some("6")));
        assert!(!is_busy(None));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn first_connections_to_a_new_file_open_together() {
        let dir = tempfile::tempdir().unwrap();
        for round in 0..60 {
            let pool = pool_for_path(&dir.path().join(format!("new-{round}.db"))).unwrap();
            let all = (0..4).map(|_| pool.acquire());
            for conn in futures::future::join_all(all).await {
                let mut conn = conn.unwrap_or_else(|e| panic!("round {round}: {e}"));
                let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
                    .fetch_one(&mut *conn)
                    .await
                    .unwrap();
                assert_eq!(mode, "wal");
            }
            pool.close().await;
        }
    }
}
