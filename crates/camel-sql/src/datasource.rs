//! Where a `sql:` endpoint's database comes from, its pool (the context's one pool for
//! that database, shared with the outbox: ADR 0085), and running a statement inside the enclosing `transacted`
//! step's transaction when that is on the same database.

use std::sync::Arc;
use std::time::Duration;

use camel_api::pools::{Pools, SharedPool};
use camel_outbox::{Datasource as OutboxDatasource, RouteTransaction};
use futures::future::BoxFuture;
use sqlx::mysql::{MySql, MySqlPool, MySqlPoolOptions};
use sqlx::postgres::{PgPool, Postgres};
use sqlx::sqlite::{Sqlite, SqlitePool};

use crate::error::SqlError;
use crate::exec::{self, On, Outcome};
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

/// Closed with the context (ADR 0085). Only MySQL pools are stored as a `Database`:
/// PostgreSQL and SQLite pools are the outbox's `Datasource`, shared with it.
impl SharedPool for Database {
    fn close(&self) -> BoxFuture<'static, ()> {
        let db = self.clone();
        Box::pin(async move {
            match db {
                Database::Postgres(p) => p.close().await,
                Database::Sqlite(p) => p.close().await,
                Database::MySql(p) => p.close().await,
            }
        })
    }

    fn is_closed(&self) -> bool {
        match self {
            Database::Postgres(p) => p.is_closed(),
            Database::Sqlite(p) => p.is_closed(),
            Database::MySql(p) => p.is_closed(),
        }
    }

    fn ping(&self) -> BoxFuture<'static, Result<(), String>> {
        let db = self.clone();
        Box::pin(async move {
            let answered = match &db {
                Database::Postgres(p) => sqlx::query("SELECT 1").execute(p).await.map(drop),
                Database::Sqlite(p) => sqlx::query("SELECT 1").execute(p).await.map(drop),
                Database::MySql(p) => sqlx::query("SELECT 1").execute(p).await.map(drop),
            };
            answered.map_err(|e| e.to_string())
        })
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
    /// Matches [`RouteTransaction::key`] for a transaction on this database, and keys its
    /// pool in the context's [`Pools`].
    pub(crate) key: String,
    /// The datasource fit for messages (no password).
    pub(crate) shown: String,
    source: Source,
    pools: Pools,
}

/// True when `text` is a database URL rather than a resource name.
pub(crate) fn is_url(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ["postgres:", "postgresql:", "sqlite:", "mysql:", "mariadb:"]
        .iter()
        .any(|p| lower.starts_with(p))
}

impl SharedDatabase {
    pub(crate) fn new(key: String, shown: String, source: Source, pools: Pools) -> Self {
        SharedDatabase {
            key,
            shown,
            source,
            pools,
        }
    }

    /// Puts the pool in the context's table now when a runtime is at hand (a lazy pool:
    /// no connection), so readiness probes the database before the first statement.
    /// Endpoints built outside a runtime (`camel validate`) leave it to the first use.
    pub(crate) fn register(&self) {
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        if let Source::Url(url) = &self.source {
            // An error (a malformed URL) is the first statement's to report.
            let _ = if crate::transaction::is_mysql_url(url) {
                self.pools
                    .get_or_try_insert_with(&self.key, || connect_mysql(url))
                    .map(drop)
                    .map_err(drop)
            } else {
                self.pools
                    .get_or_try_insert_with(&self.key, || OutboxDatasource::connect(url))
                    .map(drop)
                    .map_err(drop)
            };
        }
    }

    /// The pool: the context's for this database, made on first use (inside the runtime;
    /// endpoints may be built outside), and shared with the outbox and the state stores
    /// on PostgreSQL and SQLite (ADR 0085).
    pub(crate) async fn pool(&self) -> Result<Database, SqlError> {
        match &self.source {
            Source::Ready(db) => Ok(db.clone()),
            Source::Url(url) if crate::transaction::is_mysql_url(url) => self
                .pools
                .get_or_try_insert_with(&self.key, || connect_mysql(url))
                .map_err(|e| SqlError::database(&self.shown, e)),
            Source::Url(url) => {
                let ds = self
                    .pools
                    .get_or_try_insert_with(&self.key, || OutboxDatasource::connect(url))
                    .map_err(|e| SqlError::unreachable(&self.shown, &e))?;
                Database::from_outbox(ds).ok_or_else(|| {
                    SqlError::unreachable(&self.shown, &"not a PostgreSQL or SQLite database")
                })
            }
        }
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
        if let Some(current) = camel_api::transaction::current().filter(|t| t.key() == self.key) {
            if let Some(mine) = current
                .as_any()
                .downcast_ref::<crate::transaction::MySqlTransaction>()
            {
                let mut guard = mine.tx.lock().await;
                let Some(tx) = guard.as_mut() else {
                    return Err(SqlError::TransactionEnded);
                };
                return exec::run::<MySql>(On::Connection(&mut **tx), stmt, sets, ds).await;
            }
        }
        if let Some(tx) = RouteTransaction::current().filter(|t| t.key() == self.key) {
            let mut guard = tx.lock().await;
            if let Some(conn) = guard.postgres() {
                return exec::run::<Postgres>(On::Connection(conn), stmt, sets, ds).await;
            }
            if let Some(conn) = guard.sqlite() {
                return exec::run::<Sqlite>(On::Connection(conn), stmt, sets, ds).await;
            }
            return Err(SqlError::TransactionEnded);
        }
        match self.pool().await? {
            Database::Postgres(pool) => exec::run(On::Pool(&pool), stmt, sets, ds).await,
            Database::Sqlite(pool) => exec::run(On::Pool(&pool), stmt, sets, ds).await,
            Database::MySql(pool) => exec::run(On::Pool(&pool), stmt, sets, ds).await,
        }
    }
}

/// How long a statement waits for a MySQL connection (an unreachable database fails after
/// this, rather than sqlx's 30 s).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// A lazy MySQL/MariaDB pool for `url` (no connection is made until a statement runs).
/// Only `sql:` uses MySQL, so its settings are `sql:`'s; PostgreSQL and SQLite pools are
/// the outbox's (`camel_outbox::Datasource::connect`), with its settings.
fn connect_mysql(url: &str) -> Result<Database, sqlx::Error> {
    let url = match url.get(..8) {
        Some(p) if p.eq_ignore_ascii_case("mariadb:") => format!("mysql:{}", &url[8..]),
        _ => url.to_string(),
    };
    Ok(Database::MySql(
        MySqlPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_lazy(&url)?,
    ))
}

/// Shares `Arc`s of [`SharedDatabase`] by key.
pub(crate) type Databases =
    Arc<std::sync::Mutex<std::collections::HashMap<String, Arc<SharedDatabase>>>>;
