//! `transacted` on MySQL/MariaDB: the outbox has no MySQL store, so no outbox transaction
//! exists there; `sql:` offers its own, on the pool its endpoints share (ADR 0074). Only
//! `sql:` statements take part: an `outbox:` publish inside such a step is refused by the
//! outbox (it cannot store on MySQL).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use camel_api::transaction::{Transaction, TransactionManager};
use camel_api::CamelError;
use futures::future::BoxFuture;
use sqlx::MySql;
use tokio::sync::Mutex;

use crate::datasource::{Database, SharedDatabase};
use crate::error::SqlError;

/// True for the URLs whose transactions `sql:` manages itself.
pub(crate) fn is_mysql_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    lower.starts_with("mysql:") || lower.starts_with("mariadb:")
}

/// Begins transactions on one MySQL/MariaDB database.
#[derive(Debug)]
pub(crate) struct MySqlManager {
    pub(crate) db: Arc<SharedDatabase>,
}

impl TransactionManager for MySqlManager {
    fn key(&self) -> &str {
        &self.db.key
    }

    fn begin(&self) -> BoxFuture<'static, Result<Arc<dyn Transaction>, CamelError>> {
        let db = self.db.clone();
        Box::pin(async move {
            let Database::MySql(pool) = db.pool().await? else {
                return Err(CamelError::processor(format!(
                    "{} is not a MySQL/MariaDB database",
                    db.shown
                )));
            };
            let tx = pool
                .begin()
                .await
                .map_err(|e| SqlError::database(&db.shown, e))?;
            Ok(Arc::new(MySqlTransaction {
                key: db.key.clone(),
                shown: db.shown.clone(),
                tx: Mutex::new(Some(tx)),
            }) as Arc<dyn Transaction>)
        })
    }
}

/// An open MySQL transaction; `None` once committed or rolled back.
pub(crate) struct MySqlTransaction {
    key: String,
    shown: String,
    pub(crate) tx: Mutex<Option<sqlx::Transaction<'static, MySql>>>,
}

impl fmt::Debug for MySqlTransaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MySqlTransaction")
            .field("database", &self.shown)
            .finish_non_exhaustive()
    }
}

impl MySqlTransaction {
    async fn end(self: Arc<Self>, commit: bool) -> Result<(), CamelError> {
        let Some(tx) = self.tx.lock().await.take() else {
            return Err(SqlError::TransactionEnded.into());
        };
        let done = if commit {
            tx.commit().await
        } else {
            tx.rollback().await
        };
        done.map_err(|e| SqlError::database(&self.shown, e).into())
    }
}

impl Transaction for MySqlTransaction {
    fn key(&self) -> &str {
        &self.key
    }

    fn commit(self: Arc<Self>) -> BoxFuture<'static, Result<(), CamelError>> {
        Box::pin(self.end(true))
    }

    fn rollback(self: Arc<Self>) -> BoxFuture<'static, Result<(), CamelError>> {
        Box::pin(self.end(false))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
