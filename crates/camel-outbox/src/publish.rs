//! Publishing inside the caller's own transaction: the message commits or rolls back with
//! the business write, which is the whole point of an outbox.

use sqlx::Transaction;

use crate::config::Ordering;
use crate::error::Result;
use crate::message::{now_ms, partition_of, NewMessage};
use crate::outbox::Outbox;
use crate::store::PreparedRow;

/// The connection of a transaction that an outbox can publish into.
#[derive(Debug)]
#[non_exhaustive]
pub enum TransactionTarget<'a> {
    /// A PostgreSQL transaction.
    #[cfg(feature = "postgres")]
    Postgres(&'a mut sqlx::PgConnection),
    /// A SQLite transaction (begin it with `BEGIN IMMEDIATE`, see the crate docs).
    #[cfg(feature = "sqlite")]
    Sqlite(&'a mut sqlx::SqliteConnection),
}

/// A caller's open transaction: `sqlx::Transaction<'_, Postgres>` or `<'_, Sqlite>`.
pub trait OutboxTransaction: Send {
    /// The connection the transaction runs on.
    fn target(&mut self) -> TransactionTarget<'_>;
}

#[cfg(feature = "postgres")]
impl OutboxTransaction for Transaction<'_, sqlx::Postgres> {
    fn target(&mut self) -> TransactionTarget<'_> {
        TransactionTarget::Postgres(self)
    }
}

#[cfg(feature = "sqlite")]
impl OutboxTransaction for Transaction<'_, sqlx::Sqlite> {
    fn target(&mut self) -> TransactionTarget<'_> {
        TransactionTarget::Sqlite(self)
    }
}

impl Outbox {
    /// Inserts `message` in the caller's transaction `tx` and returns its id.
    ///
    /// The message becomes visible to the relay when `tx` commits; commit with
    /// [`Outbox::commit`] to wake this process's workers at once instead of at their next
    /// poll. With `serialize_writes` (PostgreSQL) this waits for other open transactions
    /// that published to the same group, so call it before statements that could block on
    /// them.
    pub async fn publish<T: OutboxTransaction>(
        &self,
        tx: &mut T,
        message: NewMessage,
    ) -> Result<i64> {
        let ids = self.publish_batch(tx, vec![message]).await?;
        Ok(ids.first().copied().unwrap_or_default())
    }

    /// Inserts many messages with one statement; returns their ids in input order.
    pub async fn publish_batch<T: OutboxTransaction>(
        &self,
        tx: &mut T,
        messages: Vec<NewMessage>,
    ) -> Result<Vec<i64>> {
        if messages.is_empty() {
            return Ok(Vec::new());
        }
        let n = messages.len() as u64;
        let rows = messages.into_iter().map(|m| self.prepare(m)).collect();
        #[cfg(feature = "postgres")]
        let cfg = self.config();
        let ids = match tx.target() {
            #[cfg(feature = "postgres")]
            TransactionTarget::Postgres(conn) => {
                crate::store::postgres::insert(
                    conn,
                    self.table(),
                    rows,
                    cfg.serialize_writes,
                    cfg.listen_notify,
                )
                .await?
            }
            #[cfg(feature = "sqlite")]
            TransactionTarget::Sqlite(conn) => {
                crate::store::sqlite::insert(conn, self.table(), rows).await?
            }
        };
        self.published_counter().increment(n);
        Ok(ids)
    }

    fn prepare(&self, message: NewMessage) -> PreparedRow {
        let cfg = self.config();
        let partition = match (cfg.ordering, message.group_key.as_deref()) {
            (Ordering::Total, _) => 0,
            (Ordering::Group, Some(key)) => partition_of(key, cfg.partitions),
            _ => self.next_round_robin(),
        };
        PreparedRow {
            partition: partition as i32,
            group_key: message.group_key,
            headers: serde_json::Value::Object(message.headers).to_string(),
            payload: message.payload.to_vec(),
            kind: message.kind.code(),
            created_at: now_ms(),
        }
    }
}
