//! PostgreSQL statements of the admin operations.

use sqlx::PgPool;

use crate::admin::DeadSelection;
use crate::config::TableName;
use crate::error::Result;

/// (pending, in backoff, oldest created_at, dead).
pub(crate) async fn counts(
    pool: &PgPool,
    table: &TableName,
    now: i64,
) -> Result<(u64, u64, Option<i64>, u64)> {
    let (pending, backoff, oldest): (i64, i64, Option<i64>) = sqlx::query_as(&format!(
        "SELECT count(*), count(*) FILTER (WHERE retry_at > $1), min(created_at) FROM {table}"
    ))
    .bind(now)
    .fetch_one(pool)
    .await?;
    let dead: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM {}", table.dead()))
        .fetch_one(pool)
        .await?;
    Ok((pending as u64, backoff as u64, oldest, dead as u64))
}

pub(crate) async fn discard(pool: &PgPool, table: &TableName, id: i64) -> Result<bool> {
    let mut tx = pool.begin().await?;
    let a = sqlx::query(&format!("DELETE FROM {table} WHERE id = $1"))
        .bind(id)
        .execute(&mut *tx)
        .await?;
    let b = sqlx::query(&format!("DELETE FROM {} WHERE id = $1", table.dead()))
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(a.rows_affected() + b.rows_affected() > 0)
}

pub(crate) async fn retry_dead(
    pool: &PgPool,
    table: &TableName,
    selection: &DeadSelection,
    place: impl Fn(i64, Option<&str>) -> i32,
) -> Result<u64> {
    let dead = table.dead();
    let mut tx = pool.begin().await?;
    let rows: Vec<(i64, Option<String>)> = match selection {
        DeadSelection::All => {
            sqlx::query_as(&format!(
                "SELECT id, group_key FROM {dead} ORDER BY id FOR UPDATE"
            ))
            .fetch_all(&mut *tx)
            .await?
        }
        DeadSelection::Ids(ids) => {
            sqlx::query_as(&format!(
                "SELECT id, group_key FROM {dead} WHERE id = ANY($1) ORDER BY id FOR UPDATE"
            ))
            .bind(ids)
            .fetch_all(&mut *tx)
            .await?
        }
    };
    let ids: Vec<i64> = rows.iter().map(|r| r.0).collect();
    let parts: Vec<i32> = rows.iter().map(|r| place(r.0, r.1.as_deref())).collect();
    // Order key 0, as on SQLite: a revived row sits below every worker's reading
    // position, where the re-read that the admin change triggers (every held group from
    // its first row, and a sweep of the rest) finds it, rather than far ahead of the
    // position, where the scans skip it for as long as its group is held.
    let moved = sqlx::query(&format!(
        "INSERT INTO {table} (id, partition_no, group_key, headers, payload, kind, attempts,
                              retry_at, created_at, tx_order)
         SELECT d.id, u.p, d.group_key, d.headers, d.payload, d.kind, 0, NULL, d.created_at, 0
         FROM {dead} d JOIN unnest($1::bigint[], $2::int[]) AS u(id, p) ON d.id = u.id"
    ))
    .bind(&ids)
    .bind(parts)
    .execute(&mut *tx)
    .await?;
    sqlx::query(&format!("DELETE FROM {dead} WHERE id = ANY($1)"))
        .bind(&ids)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(moved.rows_affected())
}

/// Records `configured` as the outbox's partition count, or checks that it is the stored
/// one. A different stored count is replaced only when no relay holds any partition (the
/// partition locks are taken for the transaction: a running worker keeps them, so its
/// count cannot change under it) and nothing is pending. See ADR 0033.
pub(crate) async fn settle_partitions(
    pool: &PgPool,
    table: &TableName,
    outbox: &str,
    configured: u32,
) -> Result<()> {
    let meta = table.meta();
    let mut tx = pool.begin().await?;
    let inserted: Option<String> = sqlx::query_scalar(&format!(
        "INSERT INTO {meta} (key, value) VALUES ('partitions', $1)
         ON CONFLICT (key) DO NOTHING RETURNING value"
    ))
    .bind(configured.to_string())
    .fetch_optional(&mut *tx)
    .await?;
    if inserted.is_some() {
        tx.commit().await?;
        return Ok(());
    }
    // Changers of one outbox queue up on its row.
    let stored: String = sqlx::query_scalar(&format!(
        "SELECT value FROM {meta} WHERE key = 'partitions' FOR UPDATE"
    ))
    .fetch_one(&mut *tx)
    .await?;
    let stored = crate::store::parse_partitions(&stored)?;
    if stored == configured {
        return Ok(());
    }
    let (table_key, _) = crate::store::postgres::partition_lock(table, 0);
    let free: bool = sqlx::query_scalar(
        "SELECT coalesce(bool_and(pg_try_advisory_xact_lock($1, p)), true)
         FROM generate_series(0, $2 - 1) AS p",
    )
    .bind(table_key)
    .bind(stored.max(configured) as i32)
    .fetch_one(&mut *tx)
    .await?;
    let pending: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM {table}"))
        .fetch_one(&mut *tx)
        .await?;
    crate::store::refuse_change(outbox, stored, configured, !free, pending)?;
    sqlx::query(&format!(
        "UPDATE {meta} SET value = $1 WHERE key = 'partitions'"
    ))
    .bind(configured.to_string())
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// The database sessions holding partition locks of `table` (see
/// `postgres::partition_lock`): (partition, "pid N, application, client address").
/// Read from `pg_locks`, so it shows every process's owners, not only this one's.
pub(crate) async fn lock_holders(pool: &PgPool, table: &TableName) -> Result<Vec<(u32, String)>> {
    let (key, _) = crate::store::postgres::partition_lock(table, 0);
    // A two-key advisory lock keeps the first key in `classid` and the second in
    // `objid` (both oid, so unsigned), with `objsubid` 2.
    let rows: Vec<(i64, i32, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT l.objid::text::bigint, l.pid, a.application_name, host(a.client_addr) \
         FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid \
         WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND l.granted \
           AND l.classid::text::bigint = $1 ORDER BY 1",
    )
    .bind(i64::from(key as u32))
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(partition, pid, app, addr)| {
            let mut who = format!("pid {pid}");
            for part in [app, addr].into_iter().flatten().filter(|s| !s.is_empty()) {
                who.push_str(", ");
                who.push_str(&part);
            }
            Some((u32::try_from(partition).ok()?, who))
        })
        .collect())
}
