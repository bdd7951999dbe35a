//! PostgreSQL: pool, migrations, inserts, the partition store on a dedicated connection,
//! and the session advisory lock that makes a worker the one owner of its partition.

use std::time::Duration;

use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions, PgRow};
use sqlx::{Column, ConnectOptions, Connection, PgConnection, PgPool, Row};

use super::schema::{self, PG_COLUMNS, PG_ORDER_KEY};
use super::{Page, PartitionStore, Position, Positioned, PreparedRow, RawRow};
use crate::config::TableName;
use crate::error::Result;
use crate::message::{stable_hash, StoredMessage};

/// Connections of a PostgreSQL pool (see docs/sql.md, "Datasources and pools").
pub(crate) const MAX_CONNECTIONS: u32 = 16;

pub(crate) fn pool(url: &str) -> Result<PgPool> {
    let (url, connect_timeout) = super::connect_timeout::take(url)?;
    let mut options: PgConnectOptions = url.parse()?;
    // Named in `pg_stat_activity` (the URL's `application_name` or `PGAPPNAME` wins), so
    // an operator can tell the context's connections from others.
    if options.get_application_name().is_none() {
        options = options.application_name("camel");
    }
    // One pool per database in a context, shared by the relays, the `outbox:` and `sql:`
    // producers, `transacted` steps and the state stores (ADR 0085): sized for all of them.
    Ok(PgPoolOptions::new()
        .max_connections(MAX_CONNECTIONS)
        .acquire_timeout(connect_timeout.unwrap_or(Duration::from_secs(30)))
        .connect_lazy_with(options.log_statements(tracing::log::LevelFilter::Trace)))
}

/// Advisory-lock key of a partition: (hash of the table, partition). The two-int4 key
/// space is separate from the bigint one `serialize_writes` uses.
pub(crate) fn partition_lock(table: &TableName, partition: u32) -> (i32, i32) {
    (stable_hash(table.as_str()) as u32 as i32, partition as i32)
}

fn group_lock(table: &TableName, group: &str) -> i64 {
    stable_hash(&format!("{}\u{0}{group}", table.as_str())) as i64
}

pub(crate) async fn migrate(pool: &PgPool, table: &TableName) -> Result<()> {
    let mut tx = pool.begin().await?;
    // Two processes starting together would race on CREATE TABLE IF NOT EXISTS.
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(stable_hash(&format!("migrate:{table}")) as i64)
        .execute(&mut *tx)
        .await?;
    for ddl in schema::postgres(table) {
        sqlx::query(&ddl).execute(&mut *tx).await?;
    }
    let version: Option<String> = sqlx::query_scalar(&format!(
        "SELECT value FROM {} WHERE key = 'schema_version'",
        table.meta()
    ))
    .fetch_optional(&mut *tx)
    .await?;
    if version.as_deref() == Some("1") {
        for ddl in schema::postgres_upgrade_v1(table) {
            sqlx::query(&ddl).execute(&mut *tx).await?;
        }
    }
    sqlx::query(&schema::postgres_index(table))
        .execute(&mut *tx)
        .await?;
    sqlx::query(&format!(
        "INSERT INTO {meta} AS m (key, value) VALUES ('schema_version', $1)
         ON CONFLICT (key) DO UPDATE SET value = $1 WHERE m.value = '1'",
        meta = table.meta()
    ))
    .bind(schema::SCHEMA_VERSION)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Reads a setting from `<t>_meta`, through the pool or on one connection (a worker's
/// locked one).
pub(crate) async fn meta<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    table: &TableName,
    key: &str,
) -> Result<Option<String>> {
    Ok(sqlx::query_scalar(&format!(
        "SELECT value FROM {} WHERE key = $1",
        table.meta()
    ))
    .bind(key)
    .fetch_optional(executor)
    .await?)
}

/// Adds one to the number stored under `key` (0 when missing) and returns it.
pub(crate) async fn bump_meta(pool: &PgPool, table: &TableName, key: &str) -> Result<i64> {
    Ok(sqlx::query_scalar(&format!(
        "INSERT INTO {meta} AS m (key, value) VALUES ($1, '1')
         ON CONFLICT (key) DO UPDATE SET value = (m.value::bigint + 1)::text
         RETURNING value::bigint",
        meta = table.meta()
    ))
    .bind(key)
    .fetch_one(pool)
    .await?)
}

/// Inserts `rows` with one statement and returns their ids in input order.
///
/// With `serialize` the transaction first takes a transaction-scoped advisory lock per
/// distinct group, in ascending key order so two publishers of overlapping groups cannot
/// deadlock. With `notify` it also signals the partitions' channel.
pub(crate) async fn insert(
    conn: &mut PgConnection,
    table: &TableName,
    rows: Vec<PreparedRow>,
    serialize: bool,
    notify: bool,
) -> Result<Vec<i64>> {
    if serialize {
        let mut keys: Vec<i64> = rows
            .iter()
            .filter_map(|r| r.group_key.as_deref())
            .map(|g| group_lock(table, g))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        if !keys.is_empty() {
            sqlx::query(
                "SELECT pg_advisory_xact_lock(k) FROM unnest($1::bigint[]) AS k ORDER BY k",
            )
            .bind(keys)
            .execute(&mut *conn)
            .await?;
        }
    }
    let n = rows.len();
    let mut parts = Vec::with_capacity(n);
    let mut groups = Vec::with_capacity(n);
    let mut headers = Vec::with_capacity(n);
    let mut payloads = Vec::with_capacity(n);
    let mut kinds = Vec::with_capacity(n);
    let mut created = Vec::with_capacity(n);
    for r in rows {
        parts.push(r.partition);
        groups.push(r.group_key);
        headers.push(r.headers);
        payloads.push(r.payload);
        kinds.push(r.kind);
        created.push(r.created_at);
    }
    // The order key is computed once for the statement (the column default would compute
    // it per row) and after any group lock above, so a serialised publisher's key is
    // above the key of the publisher it waited for.
    let mut ids: Vec<i64> = sqlx::query_scalar(&format!(
        "INSERT INTO {table} (partition_no, group_key, headers, payload, kind, created_at, tx_order)
         SELECT p, g, h::jsonb, b, k, c, (SELECT {PG_ORDER_KEY})
         FROM unnest($1::int[], $2::text[], $3::text[], $4::bytea[], $5::smallint[], $6::bigint[])
              AS u(p, g, h, b, k, c)
         RETURNING id"
    ))
    .bind(&parts)
    .bind(groups)
    .bind(headers)
    .bind(payloads)
    .bind(kinds)
    .bind(created)
    .fetch_all(&mut *conn)
    .await?;
    // The identity is drawn row by row in input order, so sorted ids are in input order.
    ids.sort_unstable();
    if notify {
        let mut distinct = parts;
        distinct.sort_unstable();
        distinct.dedup();
        sqlx::query("SELECT pg_notify($1, p::text) FROM unnest($2::int[]) AS p")
            .bind(channel(table))
            .bind(distinct)
            .execute(&mut *conn)
            .await?;
    }
    Ok(ids)
}

/// The partition count stored for the outbox, read on `conn` (a worker's locked
/// connection).
pub(crate) async fn stored_partitions(
    conn: &mut PgConnection,
    table: &TableName,
) -> Result<Option<u32>> {
    meta(&mut *conn, table, "partitions")
        .await?
        .map(|v| super::parse_partitions(&v))
        .transpose()
}

/// The payload of the notification an admin change sends on the outbox's channel (a
/// publish sends a partition number).
pub(crate) const ADMIN_NOTICE: &str = "admin";

/// The `LISTEN/NOTIFY` channel of an outbox.
pub(crate) fn channel(table: &TableName) -> String {
    format!("{table}_wake")
}

/// Opens a dedicated connection (never a pooled one: a pool that recycles a connection
/// would silently drop the session lock) and tries to lock `partition` on it.
pub(crate) async fn try_own(
    options: &PgConnectOptions,
    table: &TableName,
    partition: u32,
    conn: &mut Option<PgConnection>,
) -> Result<bool> {
    if conn.is_none() {
        *conn = Some(PgConnection::connect_with(options).await?);
    }
    let Some(c) = conn.as_mut() else {
        return Ok(false);
    };
    let (k1, k2) = partition_lock(table, partition);
    let owned: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1, $2)")
        .bind(k1)
        .bind(k2)
        .fetch_one(&mut *c)
        .await?;
    Ok(owned)
}

/// The partition store of the lock holder: every statement runs on the locked connection.
#[derive(Debug)]
pub(crate) struct PgPartition {
    conn: PgConnection,
    table: TableName,
    partition: i32,
    scan_sql: String,
    group_sql: String,
    all_sql: String,
}

impl PgPartition {
    pub(crate) fn new(conn: PgConnection, table: TableName, partition: u32) -> Self {
        let t = table.as_str();
        let base = format!("SELECT {PG_COLUMNS} FROM {t} WHERE partition_no = $1");
        PgPartition {
            // The horizon comes from the statement's own snapshot (computed once): every
            // row visible in it with an order key below the horizon is committed for
            // good, and no row with such a key can still appear. The rows are joined to
            // it so that an empty page still says its horizon (one row of NULLs): a
            // worker woken by the replication stream needs it (see `worker::partition`).
            // `quiet`: no transaction id below the snapshot's end was running, so only a
            // new id can move the horizon (ADR 0174).
            scan_sql: format!(
                "SELECT m.*, h.horizon, h.quiet
                 FROM (SELECT pg_snapshot_xmin(s)::text::bigint AS horizon,
                              pg_snapshot_xmin(s) = pg_snapshot_xmax(s) AS quiet
                       FROM (SELECT pg_current_snapshot() AS s) snap) h
                 LEFT JOIN LATERAL (
                     SELECT {PG_COLUMNS}, tx_order FROM {t}
                     WHERE partition_no = $1 AND (tx_order, id) > ($2, $3)
                       AND (group_key IS NULL OR group_key <> ALL($5))
                     ORDER BY tx_order, id LIMIT $4) m ON true
                 ORDER BY m.tx_order, m.id"
            ),
            group_sql: format!(
                "{base} AND group_key = $2 AND id >= $3 AND (tx_order, id) <= ($4, $5)
                 ORDER BY id LIMIT $6"
            ),
            all_sql: format!(
                "{base} AND id >= $2 AND (tx_order, id) <= ($3, $4) ORDER BY id LIMIT $5"
            ),
            conn,
            table,
            partition: partition as i32,
        }
    }

    /// Gives the connection back (a graceful stop closes it, releasing the lock).
    pub(crate) fn into_connection(self) -> PgConnection {
        self.conn
    }
}

/// Where each column of a message row sits, looked up once per result from its first
/// row: sqlx finds a column by name through a hash map, which cost about 3,000
/// instructions per relayed row when done for every column of every row (callgrind).
struct Ordinals {
    id: usize,
    partition: usize,
    group_key: usize,
    headers: usize,
    payload: usize,
    kind: usize,
    attempts: usize,
    retry_at: usize,
    created_at: usize,
}

impl Ordinals {
    fn of(r: &PgRow) -> Result<Self> {
        let at = |name: &str| r.try_column(name).map(|c| c.ordinal());
        Ok(Ordinals {
            id: at("id")?,
            partition: at("partition_no")?,
            group_key: at("group_key")?,
            headers: at("headers")?,
            payload: at("payload")?,
            kind: at("kind")?,
            attempts: at("attempts")?,
            retry_at: at("retry_at")?,
            created_at: at("created_at")?,
        })
    }

    fn decode(&self, r: &PgRow) -> Result<StoredMessage> {
        RawRow {
            id: r.try_get(self.id)?,
            partition: i64::from(r.try_get::<i32, _>(self.partition)?),
            group_key: r.try_get(self.group_key)?,
            headers: r.try_get(self.headers)?,
            payload: r.try_get(self.payload)?,
            kind: i64::from(r.try_get::<i16, _>(self.kind)?),
            attempts: i64::from(r.try_get::<i32, _>(self.attempts)?),
            retry_at: r.try_get(self.retry_at)?,
            created_at: r.try_get(self.created_at)?,
        }
        .decode()
    }
}

fn decode(rows: Vec<PgRow>) -> Result<Vec<StoredMessage>> {
    let Some(first) = rows.first() else {
        return Ok(Vec::new());
    };
    let at = Ordinals::of(first)?;
    rows.iter().map(|r| at.decode(r)).collect()
}

/// Keeps the rows of a scan up to the first one still behind the horizon, and the
/// horizon (also when no row came back).
fn decode_page(rows: Vec<PgRow>) -> Result<Page> {
    let mut page = Page::default();
    let Some(first) = rows.first() else {
        return Ok(page);
    };
    let at = Ordinals::of(first)?;
    let order_at = first.try_column("tx_order")?.ordinal();
    let horizon_at = first.try_column("horizon")?.ordinal();
    page.quiet = first.try_get("quiet")?;
    for r in &rows {
        page.horizon = r.try_get(horizon_at)?;
        // NULL: the partition had no row to read, only the horizon came back.
        let Some(order) = r.try_get::<Option<i64>, _>(order_at)? else {
            break;
        };
        if order >= page.horizon {
            page.held_back = true;
            break;
        }
        page.rows.push(Positioned {
            at: Position {
                order,
                id: r.try_get(at.id)?,
            },
            message: at.decode(r)?,
        });
    }
    Ok(page)
}

#[async_trait]
impl PartitionStore for PgPartition {
    async fn scan(&mut self, after: Position, limit: u32, skip: &[String]) -> Result<Page> {
        let rows = sqlx::query(&self.scan_sql)
            .bind(self.partition)
            .bind(after.order)
            .bind(after.id)
            .bind(i64::from(limit))
            .bind(skip)
            .fetch_all(&mut self.conn)
            .await?;
        decode_page(rows)
    }

    async fn scan_group(
        &mut self,
        group: Option<&str>,
        from: i64,
        up_to: Position,
        limit: u32,
    ) -> Result<Vec<StoredMessage>> {
        let q = match group {
            Some(g) => sqlx::query(&self.group_sql).bind(self.partition).bind(g),
            None => sqlx::query(&self.all_sql).bind(self.partition),
        };
        let rows = q
            .bind(from)
            .bind(up_to.order)
            .bind(up_to.id)
            .bind(i64::from(limit))
            .fetch_all(&mut self.conn)
            .await?;
        decode(rows)
    }

    async fn pass_horizon(&mut self) -> Result<()> {
        // A statement of its own is a transaction of its own: it takes the next id and
        // ends, and the next snapshot's horizon is past it.
        sqlx::query("SELECT pg_current_xact_id()")
            .execute(&mut self.conn)
            .await?;
        Ok(())
    }

    async fn delete(&mut self, ids: &[i64]) -> Result<()> {
        sqlx::query(&format!(
            "DELETE FROM {} WHERE partition_no = $1 AND id = ANY($2)",
            self.table
        ))
        .bind(self.partition)
        .bind(ids)
        .execute(&mut self.conn)
        .await?;
        Ok(())
    }

    async fn record_failure(&mut self, id: i64, attempts: u32, retry_at_ms: i64) -> Result<bool> {
        let done = sqlx::query(&format!(
            "UPDATE {} SET attempts = $3, retry_at = $4 WHERE partition_no = $1 AND id = $2",
            self.table
        ))
        .bind(self.partition)
        .bind(id)
        .bind(attempts as i32)
        .bind(retry_at_ms)
        .execute(&mut self.conn)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn bury(&mut self, id: i64, attempts: u32, error: &str) -> Result<bool> {
        let t = &self.table;
        let done = sqlx::query(&format!(
            "WITH gone AS (DELETE FROM {t} WHERE partition_no = $1 AND id = $2 RETURNING *)
             INSERT INTO {dead} (id, partition_no, group_key, headers, payload, kind, attempts,
                                 created_at, died_at, last_error)
             SELECT id, partition_no, group_key, headers, payload, kind, $3, created_at, $4, $5
             FROM gone",
            dead = t.dead()
        ))
        .bind(self.partition)
        .bind(id)
        .bind(attempts as i32)
        .bind(crate::message::now_ms())
        .bind(error)
        .execute(&mut self.conn)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn admin_epoch(&mut self) -> Result<i64> {
        let value = meta(&mut self.conn, &self.table, super::ADMIN_EPOCH).await?;
        Ok(value.and_then(|v| v.parse().ok()).unwrap_or(0))
    }

    async fn describe_horizon(&mut self, horizon: i64) -> Result<Option<String>> {
        // pg_stat_activity shows 32-bit transaction ids; the horizon is epoch-qualified.
        let row: Option<(i32, Option<String>, Option<String>, Option<f64>)> = sqlx::query_as(
            "SELECT pid, datname::text, state,
                    EXTRACT(EPOCH FROM now() - xact_start)::float8
             FROM pg_stat_activity WHERE backend_xid = ($1 % 4294967296)::text::xid",
        )
        .bind(horizon)
        .fetch_optional(&mut self.conn)
        .await?;
        Ok(row.map(|(pid, db, state, age)| {
            format!(
                "pid {pid} in database {}, {}, open for {:.0} s",
                db.as_deref().unwrap_or("?"),
                state.as_deref().unwrap_or("state unknown"),
                age.unwrap_or(0.0)
            )
        }))
    }
}

#[cfg(test)]
#[path = "postgres_tests.rs"]
mod tests;
