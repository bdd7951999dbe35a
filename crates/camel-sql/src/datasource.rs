//! Where a `sql:` endpoint's database comes from, one pool per database shared by every
//! endpoint of the component, and running a statement inside the enclosing `transacted`
//! step's transaction when that is on the same database.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use camel_outbox::{Datasource as OutboxDatasource, RouteTransaction};
use sqlx::mysql::{MySqlPool, MySqlPoolOptions};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::Connection;
use tokio::sync::OnceCell;

use crate::error::SqlError;
use crate::exec::{self, Outcome};
use crate::query::{Arg, Statement};

/// A database pool the component can use, for registering as a context resource.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Database {
    /// PostgreSQL.
    Postgres(PgPool),
    /// SQLite.
    Sqlite(SqlitePool),
    /// MySQL or MariaDB.
    MySql(MySqlPool),
}

impl Database {
    /// The outbox's pool, shared (`None` for a kind this crate does not know).
    pub fn from_outbox(ds: OutboxDatasource) -> Option<Self> {
        match ds {
            OutboxDatasource::Postgres(p) => Some(Database::Postgres(p)),
            OutboxDatasource::Sqlite(p) => Some(Database::Sqlite(p)),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }
}

/// How the pool is made.
#[derive(Debug)]
pub(crate) enum Source {
    Url(String),
    Ready(Database),
}

/// One database as the endpoints of a component share it.
#[derive(Debug)]
pub(crate) struct SharedDatabase {
    /// Matches [`RouteTransaction::key`] for a transaction on this database.
    pub(crate) key: String,
    /// The datasource fit for messages (no password).
    pub(crate) shown: String,
    source: Source,
    pool: OnceCell<Database>,
}

/// True when `text` is a database URL rather than a resource name.
pub(crate) fn is_url(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ["postgres:", "postgresql:", "sqlite:", "mysql:", "mariadb:"]
        .iter()
        .any(|p| lower.starts_with(p))
}

impl SharedDatabase {
    pub(crate) fn new(key: String, shown: String, source: Source) -> Self {
        SharedDatabase {
            key,
            shown,
            source,
            pool: OnceCell::new(),
        }
    }

    /// The pool, made on first use (inside the runtime; endpoints may be built outside).
    pub(crate) async fn pool(&self) -> Result<&Database, SqlError> {
        self.pool
            .get_or_try_init(|| async {
                match &self.source {
                    Source::Ready(db) => Ok(db.clone()),
                    Source::Url(url) => {
                        connect(url).map_err(|e| SqlError::database(&self.shown, e))
                    }
                }
            })
            .await
    }

    /// Runs `stmt` once per argument set: in the enclosing `transacted` step's
    /// transaction when it is on this database, else on a pooled connection (a batch of
    /// several sets in a transaction of its own, so it applies entirely or not at all).
    pub(crate) async fn run(
        &self,
        stmt: &Statement,
        sets: &[Vec<Arg>],
    ) -> Result<Outcome, SqlError> {
        let ds = self.shown.as_str();
        let db = |e| SqlError::database(ds, e);
        if let Some(current) = camel_api::transaction::current().filter(|t| t.key() == self.key) {
            if let Some(mine) = current
                .as_any()
                .downcast_ref::<crate::transaction::MySqlTransaction>()
            {
                let mut guard = mine.tx.lock().await;
                let Some(tx) = guard.as_mut() else {
                    return Err(SqlError::TransactionEnded);
                };
                return exec::mysql::run(tx, stmt, sets, ds).await;
            }
        }
        if let Some(tx) = RouteTransaction::current().filter(|t| t.key() == self.key) {
            let mut guard = tx.lock().await;
            if let Some(conn) = guard.postgres() {
                return exec::postgres::run(conn, stmt, sets, ds).await;
            }
            if let Some(conn) = guard.sqlite() {
                return exec::sqlite::run(conn, stmt, sets, ds).await;
            }
            return Err(SqlError::TransactionEnded);
        }
        let atomic = sets.len() > 1;
        match self.pool().await? {
            Database::Postgres(pool) => {
                let mut conn = pool.acquire().await.map_err(db)?;
                if atomic {
                    let mut tx = conn.begin().await.map_err(db)?;
                    let out = exec::postgres::run(&mut tx, stmt, sets, ds).await?;
                    tx.commit().await.map_err(db)?;
                    Ok(out)
                } else {
                    exec::postgres::run(&mut conn, stmt, sets, ds).await
                }
            }
            Database::Sqlite(pool) => {
                let mut conn = pool.acquire().await.map_err(db)?;
                if atomic {
                    let mut tx = conn.begin().await.map_err(db)?;
                    let out = exec::sqlite::run(&mut tx, stmt, sets, ds).await?;
                    tx.commit().await.map_err(db)?;
                    Ok(out)
                } else {
                    exec::sqlite::run(&mut conn, stmt, sets, ds).await
                }
            }
            Database::MySql(pool) => {
                let mut conn = pool.acquire().await.map_err(db)?;
                if atomic {
                    let mut tx = conn.begin().await.map_err(db)?;
                    let out = exec::mysql::run(&mut tx, stmt, sets, ds).await?;
                    tx.commit().await.map_err(db)?;
                    Ok(out)
                } else {
                    exec::mysql::run(&mut conn, stmt, sets, ds).await
                }
            }
        }
    }
}

/// How long a statement waits for a connection (an unreachable database fails after
/// this, rather than sqlx's 30 s).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// A lazy pool for `url` (no connection is made until a statement runs).
fn connect(url: &str) -> Result<Database, sqlx::Error> {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("postgres") {
        Ok(Database::Postgres(
            PgPoolOptions::new()
                .max_connections(8)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect_lazy(url)?,
        ))
    } else if lower.starts_with("sqlite:") {
        // The same settings as the outbox's SQLite pools, so the two can share a file.
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(Duration::from_secs(5));
        // A file in a directory not made yet (`sqlite:camel-data/app.db` on a first run):
        // made here, as the outbox makes its own; a failure shows when the file is opened.
        if let Some(dir) = options
            .get_filename()
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
        {
            let _ = std::fs::create_dir_all(dir);
        }
        Ok(Database::Sqlite(
            SqlitePoolOptions::new()
                .max_connections(4)
                .connect_lazy_with(options),
        ))
    } else {
        let url = if lower.starts_with("mariadb:") {
            format!("mysql:{}", &url["mariadb:".len()..])
        } else {
            url.to_string()
        };
        Ok(Database::MySql(
            MySqlPoolOptions::new()
                .max_connections(8)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect_lazy(&url)?,
        ))
    }
}

/// Shares `Arc`s of [`SharedDatabase`] by key.
pub(crate) type Databases =
    Arc<std::sync::Mutex<std::collections::HashMap<String, Arc<SharedDatabase>>>>;
