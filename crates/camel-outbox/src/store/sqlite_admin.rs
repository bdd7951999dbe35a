//! SQLite statements of the admin operations.

use sqlx::SqlitePool;

use crate::admin::DeadSelection;
use crate::config::TableName;
use crate::error::Result;

/// (pending, in backoff, oldest created_at, dead).
pub(crate) async fn counts(
    pool: &SqlitePool,
    table: &TableName,
    now: i64,
) -> Result<(u64, u64, Option<i64>, u64)> {
    let (pending, backoff, oldest): (i64, Option<i64>, Option<i64>) = sqlx::query_as(&format!(
        "SELECT count(*), sum(CASE WHEN retry_at > ? THEN 1 ELSE 0 END), min(created_at) FROM {table}"
    ))
    .bind(now)
    .fetch_one(pool)
    .await?;
    let dead: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM {}", table.dead()))
        .fetch_one(pool)
        .await?;
    Ok((
        pending as u64,
        backoff.unwrap_or(0) as u64,
        oldest,
        dead as u64,
    ))
}

pub(crate) async fn discard(pool: &SqlitePool, table: &TableName, id: i64) -> Result<bool> {
    let mut conn = pool.acquire().await?;
    let mut tx = sqlx::Connection::begin_with(&mut *conn, "BEGIN IMMEDIATE").await?;
    let a = sqlx::query(&format!("DELETE FROM {table} WHERE id = ?"))
        .bind(id)
        .execute(&mut *tx)
        .await?;
    let b = sqlx::query(&format!("DELETE FROM {} WHERE id = ?", table.dead()))
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(a.rows_affected() + b.rows_affected() > 0)
}

pub(crate) async fn retry_dead(
    pool: &SqlitePool,
    table: &TableName,
    selection: &DeadSelection,
    place: impl Fn(i64, Option<&str>) -> i32,
) -> Result<u64> {
    let dead = table.dead();
    let mut conn = pool.acquire().await?;
    let mut tx = sqlx::Connection::begin_with(&mut *conn, "BEGIN IMMEDIATE").await?;
    let rows: Vec<(i64, Option<String>)> =
        sqlx::query_as(&format!("SELECT id, group_key FROM {dead} ORDER BY id"))
            .fetch_all(&mut *tx)
            .await?;
    let mut moved = 0;
    for (id, group) in rows {
        if let DeadSelection::Ids(ids) = selection {
            if !ids.contains(&id) {
                continue;
            }
        }
        let done = sqlx::query(&format!(
            "INSERT INTO {table} (id, partition_no, group_key, headers, payload, kind, attempts,
                                  retry_at, created_at)
             SELECT id, ?, group_key, headers, payload, kind, 0, NULL, created_at
             FROM {dead} WHERE id = ?"
        ))
        .bind(place(id, group.as_deref()))
        .bind(id)
        .execute(&mut *tx)
        .await?;
        sqlx::query(&format!("DELETE FROM {dead} WHERE id = ?"))
            .bind(id)
            .execute(&mut *tx)
            .await?;
        moved += done.rows_affected();
    }
    tx.commit().await?;
    Ok(moved)
}

/// Records `configured` as the outbox's partition count, or checks that it is the stored
/// one. A different stored count is replaced only when no relay of another process holds
/// the outbox's relay lock and nothing is pending (one write transaction: SQLite has one
/// writer at a time). See ADR 0033.
pub(crate) async fn settle_partitions(
    pool: &SqlitePool,
    table: &TableName,
    outbox: &str,
    configured: u32,
) -> Result<()> {
    let meta = table.meta();
    let mut conn = pool.acquire().await?;
    let mut tx = sqlx::Connection::begin_with(&mut *conn, "BEGIN IMMEDIATE").await?;
    let stored: Option<String> = sqlx::query_scalar(&format!(
        "SELECT value FROM {meta} WHERE key = 'partitions'"
    ))
    .fetch_optional(&mut *tx)
    .await?;
    if let Some(stored) = stored {
        let stored = crate::store::parse_partitions(&stored)?;
        if stored == configured {
            return Ok(());
        }
        let file = pool.connect_options().get_filename().to_path_buf();
        let relay_running = crate::store::relay_lock::held_elsewhere(&file, table)?;
        let pending: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM {table}"))
            .fetch_one(&mut *tx)
            .await?;
        crate::store::refuse_change(outbox, stored, configured, relay_running, pending)?;
    }
    sqlx::query(&format!(
        "INSERT INTO {meta} (key, value) VALUES ('partitions', ?1)
         ON CONFLICT (key) DO UPDATE SET value = ?1"
    ))
    .bind(configured.to_string())
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}
