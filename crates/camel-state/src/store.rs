//! The two tables, created on first use, and the connection shared by every repository on
//! one URL.
//!
//! ```sql
//! -- One row per open group (completion_id = '') and per completed, unconfirmed group.
//! CREATE TABLE camel_aggregation (
//!     repository      TEXT NOT NULL,     -- which aggregator (route id / step)
//!     completion_id   TEXT NOT NULL,     -- '' while open; the completion's id after
//!     correlation_key TEXT NOT NULL,
//!     version         BIGINT NOT NULL,   -- +1 on every write: the optimistic lock
//!     exchange        TEXT NOT NULL,     -- the aggregate as JSON (see codec)
//!     attempts        INTEGER NOT NULL DEFAULT 0,  -- recovery attempts
//!     updated_at      BIGINT NOT NULL,   -- ms since the epoch
//!     PRIMARY KEY (repository, completion_id, correlation_key));
//! CREATE TABLE camel_idempotent (
//!     repository TEXT NOT NULL, message_id TEXT NOT NULL, created_at BIGINT NOT NULL,
//!     PRIMARY KEY (repository, message_id));
//! ```
//!
//! The key order serves every statement by a prefix: an open group is
//! `(repository, '', key)`, a completion `(repository, id)`, the open keys
//! `(repository, '')`.

use std::time::{SystemTime, UNIX_EPOCH};

use camel_api::CamelError;
use std::sync::Mutex;

use camel_api::pools::{Pools, SharedPool};
use camel_outbox::Datasource;

/// The tables' DDL (the same for both backends).
pub(crate) const DDL: [&str; 2] = [
    "CREATE TABLE IF NOT EXISTS camel_aggregation (
        repository TEXT NOT NULL,
        completion_id TEXT NOT NULL,
        correlation_key TEXT NOT NULL,
        version BIGINT NOT NULL,
        exchange TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (repository, completion_id, correlation_key))",
    "CREATE TABLE IF NOT EXISTS camel_idempotent (
        repository TEXT NOT NULL,
        message_id TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (repository, message_id))",
];

/// Runs `$body` with `$pool` bound to the datasource's pool, whichever backend it is.
macro_rules! on_pool {
    ($ds:expr, $pool:ident => $body:expr) => {
        match &$ds {
            camel_outbox::Datasource::Postgres($pool) => $body,
            camel_outbox::Datasource::Sqlite($pool) => $body,
            _ => Err($crate::store::unsupported()),
        }
    };
}
pub(crate) use on_pool;

pub(crate) fn unsupported() -> CamelError {
    CamelError::processor("camel-state: unsupported datasource")
}

/// A database error as a `CamelError`.
pub(crate) fn db(what: &'static str) -> impl Fn(sqlx::Error) -> CamelError {
    move |e| CamelError::external(format!("state store: {what}"), e)
}

/// Milliseconds since the epoch.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A datasource connected on first use, with the tables created. The pool is the
/// context's for that database (shared with `sql:` and the outbox, ADR 0085) when the
/// stores were registered with the context's [`Pools`].
#[derive(Debug)]
pub(crate) struct Store {
    url: String,
    key: String,
    pools: Pools,
    /// The pool the tables were created on; again after it was closed (a context stopped
    /// and started again).
    ready: Mutex<Option<Datasource>>,
    opening: tokio::sync::Mutex<()>,
}

impl Store {
    pub(crate) fn new(url: &str, pools: Pools) -> Self {
        Store {
            url: url.to_string(),
            key: camel_outbox::component::database_key(url),
            pools,
            ready: Mutex::default(),
            opening: tokio::sync::Mutex::default(),
        }
    }

    fn opened(&self) -> Option<Datasource> {
        self.ready
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .filter(|ds| !ds.is_closed())
            .cloned()
    }

    /// The datasource, connecting and creating the tables the first time.
    pub(crate) async fn get(&self) -> Result<Datasource, CamelError> {
        if let Some(ds) = self.opened() {
            return Ok(ds);
        }
        let _one = self.opening.lock().await;
        if let Some(ds) = self.opened() {
            return Ok(ds);
        }
        let ds = self
            .pools
            .get_or_try_insert_with(&self.key, || Datasource::connect(&self.url))
            .map_err(|e| {
                CamelError::external(
                    format!("state store {}", camel_api::redact_url(&self.url)),
                    e,
                )
            })?;
        migrate(&ds).await?;
        *self.ready.lock().unwrap_or_else(|p| p.into_inner()) = Some(ds.clone());
        Ok(ds)
    }
}

async fn migrate(ds: &Datasource) -> Result<(), CamelError> {
    let fail = db("creating tables");
    match ds {
        Datasource::Postgres(pool) => {
            // Two processes creating the same table at once collide in the catalogue:
            // serialise them on an advisory lock.
            let mut tx = pool.begin().await.map_err(&fail)?;
            sqlx::query("SELECT pg_advisory_xact_lock(7385042116)")
                .execute(&mut *tx)
                .await
                .map_err(&fail)?;
            for ddl in DDL {
                sqlx::query(ddl).execute(&mut *tx).await.map_err(&fail)?;
            }
            tx.commit().await.map_err(&fail)
        }
        Datasource::Sqlite(pool) => {
            let mut conn = pool.acquire().await.map_err(&fail)?;
            let mut tx = sqlx::Connection::begin_with(&mut *conn, "BEGIN IMMEDIATE")
                .await
                .map_err(&fail)?;
            for ddl in DDL {
                sqlx::query(ddl).execute(&mut *tx).await.map_err(&fail)?;
            }
            tx.commit().await.map_err(&fail)
        }
        _ => Err(unsupported()),
    }
}
