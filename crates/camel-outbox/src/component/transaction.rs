//! The outbox component's transactions for the `transacted` step: a database transaction
//! that the `outbox:` producers inside the step publish into, committed or rolled back by
//! the step. Rust steps inside reach it with [`RouteTransaction::current`] to make their
//! own writes part of it (the business write of the outbox pattern).

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use camel_api::transaction::{self, Transaction, TransactionManager};
use camel_api::CamelError;
use futures::future::BoxFuture;

use super::{SharedOutbox, SharedSource};
use crate::message::NewMessage;
use crate::outbox::Outbox;
use crate::publish::{OutboxTransaction, TransactionTarget};
use crate::store::Datasource;

/// The component's outboxes, by database and name.
pub(crate) type Outboxes = Arc<Mutex<HashMap<String, Arc<SharedOutbox>>>>;

/// Begins transactions on one database of the component.
#[derive(Debug)]
pub(crate) struct Manager {
    source: Arc<SharedSource>,
    outboxes: Outboxes,
}

impl Manager {
    pub(crate) fn new(source: Arc<SharedSource>, outboxes: Outboxes) -> Self {
        Manager { source, outboxes }
    }

    /// Opens the outboxes on this database that routes use: their tables must exist
    /// before the transaction starts (on SQLite, creating them inside it would wait for
    /// the write lock the transaction holds). One that cannot open is skipped: it may not
    /// be used in this step at all, and a producer that does use it reports the error.
    async fn open_outboxes(&self) {
        let mine: Vec<Arc<SharedOutbox>> = self
            .outboxes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .filter(|o| o.source.key == self.source.key)
            .cloned()
            .collect();
        for outbox in mine {
            if let Err(e) = outbox.outbox().await {
                tracing::debug!(outbox = outbox.name(), error = %e, "outbox not opened before a transaction");
            }
        }
    }
}

impl TransactionManager for Manager {
    fn key(&self) -> &str {
        &self.source.key
    }

    fn begin(&self) -> BoxFuture<'static, Result<Arc<dyn Transaction>, CamelError>> {
        let this = Manager {
            source: self.source.clone(),
            outboxes: self.outboxes.clone(),
        };
        Box::pin(async move {
            this.open_outboxes().await;
            let source = this.source;
            let (tx, turn) = match source.datasource().await? {
                #[cfg(feature = "postgres")]
                Datasource::Postgres(pool) => {
                    (DbTx::Postgres(pool.begin().await.map_err(db)?), None)
                }
                // The write lock is taken at once, as for every SQLite write of the outbox,
                // after this process's earlier transactions on the file have ended.
                #[cfg(feature = "sqlite")]
                Datasource::Sqlite(pool) => {
                    let turn = source.writer.clone().acquire_owned().await;
                    let turn = turn.map_err(|_| ended())?;
                    let tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(db)?;
                    (DbTx::Sqlite(tx), Some(turn))
                }
            };
            let state = State {
                tx: Some(tx),
                wake: Vec::new(),
                turn,
            };
            Ok(Arc::new(RouteTransaction {
                key: source.key.as_str().into(),
                state: Arc::new(tokio::sync::Mutex::new(state)),
            }) as Arc<dyn Transaction>)
        })
    }
}

#[derive(Debug)]
enum DbTx {
    #[cfg(feature = "postgres")]
    Postgres(sqlx::Transaction<'static, sqlx::Postgres>),
    #[cfg(feature = "sqlite")]
    Sqlite(sqlx::Transaction<'static, sqlx::Sqlite>),
}

#[derive(Debug)]
struct State {
    /// `None` once committed or rolled back.
    tx: Option<DbTx>,
    /// Outboxes published to, whose local workers are woken after the commit.
    wake: Vec<Outbox>,
    /// SQLite: this transaction's turn as the file's writer, given back when it ends.
    turn: Option<tokio::sync::OwnedSemaphorePermit>,
}

/// The transaction of an enclosing `transacted` step on an outbox database.
///
/// ```no_run
/// # async fn step() -> Result<(), Box<dyn std::error::Error>> {
/// use camel_outbox::RouteTransaction;
/// // Inside a Rust `process` step nested in `transacted`:
/// if let Some(tx) = RouteTransaction::current() {
///     let mut guard = tx.lock().await;
///     if let Some(conn) = guard.postgres() {
///         sqlx::query("UPDATE orders SET state = 'paid' WHERE id = 42")
///             .execute(conn)
///             .await?;
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct RouteTransaction {
    key: Arc<str>,
    state: Arc<tokio::sync::Mutex<State>>,
}

impl RouteTransaction {
    /// The transaction of the `transacted` step this code runs in, if that step is on a
    /// database of the outbox component.
    pub fn current() -> Option<RouteTransaction> {
        transaction::current()?
            .as_any()
            .downcast_ref::<RouteTransaction>()
            .cloned()
    }

    /// Which database the transaction is on (the component's key for it).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Exclusive use of the transaction's connection (steps running concurrently inside
    /// one `transacted` step take turns).
    ///
    /// The lock is not re-entrant: drop the guard before calling anything that may publish
    /// through this transaction (an `outbox:` producer, a `direct:` route that reaches
    /// one). Such a producer gives up after 10 s with an error.
    pub async fn lock(&self) -> TransactionGuard<'_> {
        TransactionGuard {
            state: self.state.lock().await,
        }
    }

    async fn finish(&self, commit: bool) -> Result<(), CamelError> {
        let mut state = self.state.lock().await;
        let Some(tx) = state.tx.take() else {
            return Err(ended());
        };
        let _turn = state.turn.take();
        let result = match (tx, commit) {
            #[cfg(feature = "postgres")]
            (DbTx::Postgres(tx), true) => tx.commit().await,
            #[cfg(feature = "postgres")]
            (DbTx::Postgres(tx), false) => tx.rollback().await,
            #[cfg(feature = "sqlite")]
            (DbTx::Sqlite(tx), true) => tx.commit().await,
            #[cfg(feature = "sqlite")]
            (DbTx::Sqlite(tx), false) => tx.rollback().await,
        };
        result.map_err(db)?;
        if commit {
            for outbox in state.wake.drain(..) {
                outbox.wake();
            }
        }
        Ok(())
    }
}

impl Transaction for RouteTransaction {
    fn key(&self) -> &str {
        &self.key
    }

    fn commit(self: Arc<Self>) -> BoxFuture<'static, Result<(), CamelError>> {
        Box::pin(async move { self.finish(true).await })
    }

    fn rollback(self: Arc<Self>) -> BoxFuture<'static, Result<(), CamelError>> {
        Box::pin(async move { self.finish(false).await })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The locked connection of a [`RouteTransaction`].
#[derive(Debug)]
pub struct TransactionGuard<'a> {
    state: tokio::sync::MutexGuard<'a, State>,
}

impl TransactionGuard<'_> {
    /// The connection, when the transaction is on PostgreSQL and still open.
    #[cfg(feature = "postgres")]
    pub fn postgres(&mut self) -> Option<&mut sqlx::PgConnection> {
        match self.state.tx.as_mut()? {
            DbTx::Postgres(tx) => Some(&mut **tx),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// The connection, when the transaction is on SQLite and still open.
    #[cfg(feature = "sqlite")]
    pub fn sqlite(&mut self) -> Option<&mut sqlx::SqliteConnection> {
        match self.state.tx.as_mut()? {
            DbTx::Sqlite(tx) => Some(&mut **tx),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// Publishes `message` to `outbox` in this transaction; the local relay is woken when
    /// the step commits.
    pub async fn publish(
        &mut self,
        outbox: &Outbox,
        message: NewMessage,
    ) -> Result<i64, CamelError> {
        let state = &mut *self.state;
        let Some(tx) = state.tx.as_mut() else {
            return Err(ended());
        };
        let id = outbox.publish(tx, message).await?;
        if !state.wake.iter().any(|o| o.table() == outbox.table()) {
            state.wake.push(outbox.clone());
        }
        Ok(id)
    }
}

impl OutboxTransaction for DbTx {
    fn target(&mut self) -> TransactionTarget<'_> {
        match self {
            #[cfg(feature = "postgres")]
            DbTx::Postgres(tx) => TransactionTarget::Postgres(tx),
            #[cfg(feature = "sqlite")]
            DbTx::Sqlite(tx) => TransactionTarget::Sqlite(tx),
        }
    }
}

fn ended() -> CamelError {
    CamelError::processor("the transaction of the `transacted` step has already ended")
}

fn db(e: sqlx::Error) -> CamelError {
    CamelError::external("outbox transaction", e)
}
