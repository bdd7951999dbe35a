//! The handle of one outbox: its configuration, its tables, and the in-process wake-up
//! that lets a local publish reach the relay without waiting for a poll.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use tokio::sync::Notify;

use crate::config::{OutboxConfig, TableName};
use crate::error::{OutboxError, Result};
use crate::store::Datasource;

/// One outbox in one database. Cheap to clone; clones share the wake-up signals, so
/// publish through the same handle (or a clone) that runs the relay.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use camel_outbox::{Datasource, NewMessage, Outbox, OutboxConfig};
/// let ds = Datasource::connect("sqlite:orders.db")?;
/// let outbox = Outbox::open(ds.clone(), OutboxConfig::new("orders")).await?;
/// let camel_outbox::Datasource::Sqlite(pool) = &ds else { unreachable!() };
/// let mut conn = pool.acquire().await?;
/// let mut tx = sqlx::Connection::begin_with(&mut *conn, "BEGIN IMMEDIATE").await?;
/// // … the business write on `tx` …
/// let id = outbox.publish(&mut tx, NewMessage::text("paid").group("order:42")).await?;
/// outbox.commit(tx).await?;
/// # let _ = id; Ok(()) }
/// ```
#[derive(Clone)]
pub struct Outbox {
    inner: Arc<Inner>,
}

struct Inner {
    config: OutboxConfig,
    table: TableName,
    datasource: Datasource,
    wake: Box<[Notify]>,
    /// Per partition: the highest order key of a row the replication stream saw
    /// committed (0: none). The worker reads again until its read's horizon has passed
    /// it (see `worker::partition`).
    streamed: Box<[AtomicI64]>,
    round_robin: AtomicU32,
    /// Admin changes announced in this process (see [`Outbox::admin`]).
    admin_changes: AtomicU64,
    /// Per partition: a worker of this process drains it (set by the worker while it
    /// owns the partition; read by the admin's `owners`).
    owned: Box<[AtomicBool]>,
    published: metrics::Counter,
}

impl fmt::Debug for Outbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outbox")
            .field("name", &self.inner.config.name)
            .field("table", &self.inner.table)
            .finish_non_exhaustive()
    }
}

impl Outbox {
    /// Validates `config`, creates the tables when missing and checks that the backlog
    /// was published with the same partition count (see
    /// [`OutboxError::PartitionsChanged`]).
    pub async fn open(datasource: Datasource, config: OutboxConfig) -> Result<Self> {
        let table = config.validate()?;
        migrate(&datasource, &table).await?;
        datasource
            .settle_partitions(&table, &config.name, config.partitions)
            .await?;
        let wake = (0..config.partitions).map(|_| Notify::new()).collect();
        let owned = (0..config.partitions)
            .map(|_| AtomicBool::new(false))
            .collect();
        let streamed = (0..config.partitions).map(|_| AtomicI64::new(0)).collect();
        Ok(Outbox {
            inner: Arc::new(Inner {
                published: crate::metrics::published(&config.name),
                config,
                table,
                datasource,
                wake,
                streamed,
                round_robin: AtomicU32::new(0),
                admin_changes: AtomicU64::new(0),
                owned,
            }),
        })
    }

    /// Like [`Outbox::open`], with the partition count the outbox already stores, when it
    /// stores one (else `config.partitions`). For a process that does not state a count:
    /// it follows the relays instead of contradicting them.
    pub async fn open_with_stored_partitions(
        datasource: Datasource,
        mut config: OutboxConfig,
    ) -> Result<Self> {
        let table = config.validate()?;
        migrate(&datasource, &table).await?;
        if let Some(stored) = datasource.meta(&table, "partitions").await? {
            config.partitions = crate::store::parse_partitions(&stored)?;
        }
        Self::open(datasource, config).await
    }

    /// The configuration.
    pub fn config(&self) -> &OutboxConfig {
        &self.inner.config
    }

    /// The validated table name.
    pub fn table(&self) -> &TableName {
        &self.inner.table
    }

    /// The database.
    pub fn datasource(&self) -> &Datasource {
        &self.inner.datasource
    }

    /// Commits `tx` and wakes this process's workers.
    pub async fn commit<DB: sqlx::Database>(&self, tx: sqlx::Transaction<'_, DB>) -> Result<()> {
        tx.commit().await?;
        self.wake();
        Ok(())
    }

    /// Wakes this process's workers (after a commit made without [`Outbox::commit`]).
    pub fn wake(&self) {
        for w in self.inner.wake.iter() {
            w.notify_one();
        }
    }

    /// Admin operations on this outbox whose changes reach this process's workers at
    /// once (a blocked group whose head is discarded goes on, a revived message goes
    /// out, without waiting for a retry time or a poll).
    pub fn admin(&self) -> crate::admin::OutboxAdmin {
        crate::admin::OutboxAdmin::of(self)
    }

    /// Messages changed under the workers (an admin operation): they re-read what they
    /// hold back.
    pub(crate) fn admin_changed(&self) {
        self.inner
            .admin_changes
            .fetch_add(1, AtomicOrdering::Release);
        self.wake();
    }

    /// How many admin changes this process announced so far.
    pub(crate) fn admin_changes(&self) -> u64 {
        self.inner.admin_changes.load(AtomicOrdering::Acquire)
    }

    /// The partitions a worker of this process (a relay on this handle or a clone)
    /// drains now, in order.
    pub fn owned_partitions(&self) -> Vec<u32> {
        (0..self.inner.owned.len() as u32)
            .filter(|p| self.inner.owned[*p as usize].load(AtomicOrdering::Acquire))
            .collect()
    }

    /// Records whether this process's worker of `partition` owns it.
    pub(crate) fn set_owned(&self, partition: u32, owned: bool) {
        if let Some(flag) = self.inner.owned.get(partition as usize) {
            flag.store(owned, AtomicOrdering::Release);
        }
    }

    pub(crate) fn waker(&self, partition: u32) -> &Notify {
        &self.inner.wake[partition as usize % self.inner.wake.len()]
    }

    /// Wakes `partition`'s worker for rows the replication stream saw committed, the
    /// highest of them with order key `order`.
    #[cfg(feature = "replication")]
    pub(crate) fn wake_streamed(&self, partition: u32, order: i64) {
        let at = partition as usize % self.inner.streamed.len();
        self.inner.streamed[at].fetch_max(order, AtomicOrdering::AcqRel);
        self.waker(partition).notify_one();
    }

    /// The highest order key of a row of `partition` the replication stream saw
    /// committed, 0 when none.
    pub(crate) fn streamed_order(&self, partition: u32) -> i64 {
        let at = partition as usize % self.inner.streamed.len();
        self.inner.streamed[at].load(AtomicOrdering::Acquire)
    }

    pub(crate) fn next_round_robin(&self) -> u32 {
        self.inner.round_robin.fetch_add(1, AtomicOrdering::Relaxed) % self.inner.config.partitions
    }

    pub(crate) fn published_counter(&self) -> &metrics::Counter {
        &self.inner.published
    }
}

/// Creates the tables when missing; a database that cannot be reached is named.
async fn migrate(datasource: &Datasource, table: &TableName) -> Result<()> {
    datasource.migrate(table).await.map_err(|e| match e {
        OutboxError::Database(e) => datasource.explain(e),
        other => other,
    })
}
