//! Storage: the datasource, the schema, and the SQL of each backend.
//!
//! Everything above this module is backend-neutral. A worker talks to its partition through
//! [`PartitionStore`]; publishers and admin functions go through the per-backend
//! functions this module dispatches to.

use async_trait::async_trait;

use crate::config::TableName;
use crate::error::{OutboxError, Result};
use crate::message::{PayloadKind, StoredMessage};

pub use relay_lock::RelayLock;

#[cfg(feature = "postgres")]
pub(crate) mod connect_timeout;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
#[cfg(feature = "postgres")]
pub(crate) mod postgres_admin;
pub(crate) mod relay_lock;
pub(crate) mod schema;
#[cfg(feature = "sqlite")]
pub(crate) mod sqlite;
#[cfg(feature = "sqlite")]
pub(crate) mod sqlite_admin;

/// A database holding outboxes: a connection pool for PostgreSQL or SQLite.
///
/// Cheap to clone. Made lazily: no connection is opened until first use.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Datasource {
    /// A PostgreSQL pool.
    #[cfg(feature = "postgres")]
    Postgres(sqlx::PgPool),
    /// A SQLite pool (WAL mode, busy timeout set).
    #[cfg(feature = "sqlite")]
    Sqlite(sqlx::SqlitePool),
}

impl Datasource {
    /// Fails unless `url` names a backend this build supports (no connection is made).
    pub(crate) fn check_url(url: &str) -> Result<()> {
        let lower = url.to_ascii_lowercase();
        let postgres = lower.starts_with("postgres://") || lower.starts_with("postgresql://");
        let sqlite = lower.starts_with("sqlite:");
        if (postgres && cfg!(feature = "postgres")) || (sqlite && cfg!(feature = "sqlite")) {
            Ok(())
        } else {
            Err(OutboxError::UnsupportedDatasource(camel_api::redact_url(
                url,
            )))
        }
    }

    /// A datasource for `url`: `postgres://…`/`postgresql://…` or `sqlite:PATH`
    /// (`sqlite://PATH`); a SQLite file is created when missing. Call it inside a Tokio
    /// runtime (the pool starts its maintenance task).
    pub fn connect(url: &str) -> Result<Self> {
        let lower = url.to_ascii_lowercase();
        #[cfg(feature = "postgres")]
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            return postgres::pool(url).map(Datasource::Postgres);
        }
        #[cfg(feature = "sqlite")]
        if lower.starts_with("sqlite:") {
            return sqlite::pool(url).map(Datasource::Sqlite);
        }
        let _ = lower;
        Err(OutboxError::UnsupportedDatasource(camel_api::redact_url(
            url,
        )))
    }

    /// A datasource on the SQLite file at `path` (created when missing). Call it inside a
    /// Tokio runtime.
    #[cfg(feature = "sqlite")]
    pub fn sqlite_file(path: impl AsRef<std::path::Path>) -> Result<Self> {
        sqlite::pool_for_path(path.as_ref()).map(Datasource::Sqlite)
    }

    /// The database, named without credentials: `postgres://HOST:PORT/DATABASE` or
    /// `sqlite:PATH`. For messages.
    pub fn describe(&self) -> String {
        match self {
            #[cfg(feature = "postgres")]
            Datasource::Postgres(p) => {
                let o = p.connect_options();
                format!(
                    "postgres://{}:{}/{}",
                    o.get_host(),
                    o.get_port(),
                    o.get_database().unwrap_or("")
                )
            }
            #[cfg(feature = "sqlite")]
            Datasource::Sqlite(p) => {
                format!("sqlite:{}", p.connect_options().get_filename().display())
            }
        }
    }

    /// `e`, saying which database could not be reached when it is a connection failure.
    pub(crate) fn explain(&self, e: sqlx::Error) -> OutboxError {
        match e {
            sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) => OutboxError::Unreachable {
                database: self.describe(),
                reason: match e {
                    sqlx::Error::Io(io) => io.to_string(),
                    _ => format!(
                        "no connection within {:?} (the URL's connect_timeout, default 30 s)",
                        self.connect_timeout()
                    ),
                },
            },
            other => OutboxError::Database(other),
        }
    }

    /// Fails as soon as one new connection to the database fails (within the URL's
    /// connect timeout), naming the database and why. The pool hides this: it retries
    /// a refused connection until its acquire timeout (30 s by default) and then says
    /// only that it timed out. A SQLite file needs no probe.
    pub(crate) async fn probe(&self) -> Result<()> {
        match self {
            #[cfg(feature = "postgres")]
            Datasource::Postgres(p) => {
                use sqlx::Connection;
                let timeout = self.connect_timeout();
                let options = p.connect_options();
                let attempt = sqlx::PgConnection::connect_with(&options);
                match tokio::time::timeout(timeout, attempt).await {
                    Ok(Ok(conn)) => {
                        let _ = conn.close().await;
                        Ok(())
                    }
                    Ok(Err(e)) => Err(self.explain(e)),
                    Err(_) => Err(self.explain(sqlx::Error::PoolTimedOut)),
                }
            }
            #[cfg(feature = "sqlite")]
            Datasource::Sqlite(_) => Ok(()),
        }
    }

    fn connect_timeout(&self) -> std::time::Duration {
        match self {
            #[cfg(feature = "postgres")]
            Datasource::Postgres(p) => p.options().get_acquire_timeout(),
            #[cfg(feature = "sqlite")]
            Datasource::Sqlite(p) => p.options().get_acquire_timeout(),
        }
    }

    /// True when the outbox table `table` exists.
    pub(crate) async fn has_table(&self, table: &TableName) -> Result<bool> {
        let found =
            match self {
                #[cfg(feature = "postgres")]
                Datasource::Postgres(p) => {
                    sqlx::query_scalar::<_, bool>("SELECT to_regclass($1) IS NOT NULL")
                        .bind(table.as_str())
                        .fetch_one(p)
                        .await
                }
                #[cfg(feature = "sqlite")]
                Datasource::Sqlite(p) => sqlx::query_scalar::<_, bool>(
                    "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?)",
                )
                .bind(table.as_str())
                .fetch_one(p)
                .await,
            };
        found.map_err(|e| self.explain(e))
    }

    /// Records or checks the outbox's partition count (see ADR 0033).
    pub(crate) async fn settle_partitions(
        &self,
        table: &TableName,
        outbox: &str,
        configured: u32,
    ) -> Result<()> {
        match self {
            #[cfg(feature = "postgres")]
            Datasource::Postgres(p) => {
                postgres_admin::settle_partitions(p, table, outbox, configured).await
            }
            #[cfg(feature = "sqlite")]
            Datasource::Sqlite(p) => {
                sqlite_admin::settle_partitions(p, table, outbox, configured).await
            }
        }
    }

    /// The most connections the pool opens at once (a relay's partition owners hold one
    /// more each, outside the pool: see ADR 0010).
    pub fn max_connections(&self) -> u32 {
        match self {
            #[cfg(feature = "postgres")]
            Datasource::Postgres(p) => p.options().get_max_connections(),
            #[cfg(feature = "sqlite")]
            Datasource::Sqlite(p) => p.options().get_max_connections(),
        }
    }

    /// True for PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        #[cfg(feature = "postgres")]
        if matches!(self, Datasource::Postgres(_)) {
            return true;
        }
        false
    }

    /// Creates the outbox's tables when missing.
    pub(crate) async fn migrate(&self, table: &TableName) -> Result<()> {
        match self {
            #[cfg(feature = "postgres")]
            Datasource::Postgres(p) => postgres::migrate(p, table).await,
            #[cfg(feature = "sqlite")]
            Datasource::Sqlite(p) => sqlite::migrate(p, table).await,
        }
    }

    /// Reads a setting from `<t>_meta`.
    pub(crate) async fn meta(&self, table: &TableName, key: &str) -> Result<Option<String>> {
        match self {
            #[cfg(feature = "postgres")]
            Datasource::Postgres(p) => postgres::meta(p, table, key).await,
            #[cfg(feature = "sqlite")]
            Datasource::Sqlite(p) => sqlite::meta(p, table, key).await,
        }
    }

    /// Adds one to the number stored under `key` in `<t>_meta`; returns the new value.
    pub(crate) async fn bump_meta(&self, table: &TableName, key: &str) -> Result<i64> {
        match self {
            #[cfg(feature = "postgres")]
            Datasource::Postgres(p) => postgres::bump_meta(p, table, key).await,
            #[cfg(feature = "sqlite")]
            Datasource::Sqlite(p) => sqlite::bump_meta(p, table, key).await,
        }
    }
}

/// A context shares one datasource per database between `outbox:`, `sql:` and the state
/// stores, and closes it when it stops (ADR 0085).
impl camel_api::pools::SharedPool for Datasource {
    fn close(&self) -> futures::future::BoxFuture<'static, ()> {
        let ds = self.clone();
        Box::pin(async move {
            match ds {
                #[cfg(feature = "postgres")]
                Datasource::Postgres(p) => p.close().await,
                #[cfg(feature = "sqlite")]
                Datasource::Sqlite(p) => p.close().await,
            }
        })
    }

    fn is_closed(&self) -> bool {
        match self {
            #[cfg(feature = "postgres")]
            Datasource::Postgres(p) => p.is_closed(),
            #[cfg(feature = "sqlite")]
            Datasource::Sqlite(p) => p.is_closed(),
        }
    }

    fn ping(&self) -> futures::future::BoxFuture<'static, std::result::Result<(), String>> {
        let ds = self.clone();
        Box::pin(async move {
            let answered = match &ds {
                #[cfg(feature = "postgres")]
                Datasource::Postgres(p) => sqlx::query("SELECT 1").execute(p).await.map(drop),
                #[cfg(feature = "sqlite")]
                Datasource::Sqlite(p) => sqlx::query("SELECT 1").execute(p).await.map(drop),
            };
            answered.map_err(|e| e.to_string())
        })
    }
}

/// The stored partition count of an outbox (its `_meta` row).
pub(crate) fn parse_partitions(value: &str) -> Result<u32> {
    value.trim().parse().map_err(|_| {
        OutboxError::Config(format!(
            "the stored partition count `{value}` is not a number; fix the `partitions` row \
             of the outbox's _meta table"
        ))
    })
}

/// Refuses to change the stored partition count `stored` into `configured` while a relay
/// runs or messages are pending (ADR 0033); both backends decide alike.
pub(crate) fn refuse_change(
    outbox: &str,
    stored: u32,
    configured: u32,
    relay_running: bool,
    pending: i64,
) -> Result<()> {
    if relay_running {
        return Err(OutboxError::PartitionsInUse {
            outbox: outbox.to_string(),
            stored,
            configured,
        });
    }
    if pending > 0 {
        return Err(OutboxError::PartitionsChanged {
            outbox: outbox.to_string(),
            stored,
            configured,
            pending: pending as u64,
        });
    }
    Ok(())
}

/// The `<t>_meta` key counting admin changes (`discard`, `retry_dead`): a worker that
/// sees it change re-reads its held messages at once instead of at their retry times.
pub(crate) const ADMIN_EPOCH: &str = "admin_epoch";

/// A row ready to insert.
#[derive(Debug)]
pub(crate) struct PreparedRow {
    pub(crate) partition: i32,
    pub(crate) group_key: Option<String>,
    pub(crate) headers: String,
    pub(crate) payload: Vec<u8>,
    pub(crate) kind: i16,
    pub(crate) created_at: i64,
}

/// The raw columns of a row, decoded into a [`StoredMessage`] in one place for both
/// backends.
pub(crate) struct RawRow {
    pub(crate) id: i64,
    pub(crate) partition: i64,
    pub(crate) group_key: Option<String>,
    pub(crate) headers: String,
    pub(crate) payload: Vec<u8>,
    pub(crate) kind: i64,
    pub(crate) attempts: i64,
    pub(crate) retry_at: Option<i64>,
    pub(crate) created_at: i64,
}

impl RawRow {
    pub(crate) fn decode(self) -> Result<StoredMessage> {
        let headers = match serde_json::from_str::<serde_json::Value>(&self.headers) {
            Ok(serde_json::Value::Object(map)) => map,
            Ok(_) => serde_json::Map::new(),
            Err(e) => {
                return Err(OutboxError::CorruptRow {
                    id: self.id,
                    reason: format!("headers are not JSON: {e}"),
                })
            }
        };
        Ok(StoredMessage {
            id: self.id,
            partition: self.partition.max(0) as u32,
            group_key: self.group_key,
            headers,
            payload: self.payload.into(),
            kind: PayloadKind::from_code(self.kind),
            attempts: self.attempts.max(0) as u32,
            retry_at_ms: self.retry_at,
            created_at_ms: self.created_at,
        })
    }
}

/// Where a row stands in the order a worker reads its partition: its *order key*, then
/// its id.
///
/// On PostgreSQL the order key is the inserting transaction's place in the visibility
/// horizon (ADR 0032): a row is read only once every transaction that could still insert
/// a row before it has ended, so the reading position never passes a row that commits
/// later. On SQLite, whose single writer commits in id order, the key is always 0 and the
/// position is the id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Position {
    pub(crate) order: i64,
    pub(crate) id: i64,
}

/// A row with its reading position.
#[derive(Debug)]
pub(crate) struct Positioned {
    pub(crate) at: Position,
    pub(crate) message: StoredMessage,
}

/// One page of a partition read in position order.
#[derive(Debug, Default)]
pub(crate) struct Page {
    /// The rows that may be read, in position order.
    pub(crate) rows: Vec<Positioned>,
    /// True when the page stopped at a committed row that is still behind the horizon:
    /// an older transaction is still running, and rows after it wait for it to end.
    pub(crate) held_back: bool,
    /// The horizon the page was read at (PostgreSQL: the oldest transaction id still
    /// running; also when no row came back), for the stall warning and for rows the
    /// replication stream announced; 0 on SQLite.
    pub(crate) horizon: i64,
    /// True when no transaction that took an id before the read's snapshot was still
    /// running (PostgreSQL): rows held back then wait for a new transaction id, not for
    /// a transaction to end (ADR 0174).
    pub(crate) quiet: bool,
}

impl Page {
    /// True when a page asked for `limit` rows came back full and nothing was held back:
    /// more rows may be read at once.
    pub(crate) fn full(&self, limit: u32) -> bool {
        !self.held_back && self.rows.len() as u32 >= limit
    }
}

/// What a partition worker may do to its partition. On PostgreSQL every call runs on the
/// connection that holds the partition's advisory lock, so a worker that lost the lock
/// (its connection closed) cannot change a row: ownership and the right to write are the
/// same thing.
#[async_trait]
pub(crate) trait PartitionStore: Send {
    /// Up to `limit` rows positioned after `after`, in position order, leaving out the
    /// groups in `skip` and stopping before the first row still behind the horizon.
    async fn scan(&mut self, after: Position, limit: u32, skip: &[String]) -> Result<Page>;

    /// Up to `limit` rows of `group` (all rows when `None`) with id ≥ `from` and a
    /// position ≤ `up_to`, in id order.
    async fn scan_group(
        &mut self,
        group: Option<&str>,
        from: i64,
        up_to: Position,
        limit: u32,
    ) -> Result<Vec<StoredMessage>>;

    /// Moves the horizon past every transaction id given out so far, for rows held back
    /// on a server where nothing else takes one (PostgreSQL: ends a transaction that takes
    /// an id; ADR 0174). Nothing to do elsewhere.
    async fn pass_horizon(&mut self) -> Result<()> {
        Ok(())
    }

    /// Deletes confirmed rows.
    async fn delete(&mut self, ids: &[i64]) -> Result<()>;

    /// Records a failure; false when the row is gone (discarded meanwhile).
    async fn record_failure(&mut self, id: i64, attempts: u32, retry_at_ms: i64) -> Result<bool>;

    /// Moves a row to the dead table; false when the row is gone.
    async fn bury(&mut self, id: i64, attempts: u32, error: &str) -> Result<bool>;

    /// The admin change count of the outbox ([`ADMIN_EPOCH`]).
    async fn admin_epoch(&mut self) -> Result<i64>;

    /// Who is behind `horizon` (the oldest transaction still running), for a warning:
    /// process id, database and how long the transaction has been open, if known.
    async fn describe_horizon(&mut self, _horizon: i64) -> Result<Option<String>> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_passwords() {
        assert_eq!(
            camel_api::redact_url("postgres://u:secret@127.0.0.1/db"),
            "postgres://***@127.0.0.1/db"
        );
        assert_eq!(camel_api::redact_url("sqlite:x.db"), "sqlite:x.db");
    }

    #[test]
    fn rejects_unknown_schemes() {
        assert!(matches!(
            Datasource::connect("mysql://x"),
            Err(OutboxError::UnsupportedDatasource(_))
        ));
    }
}
