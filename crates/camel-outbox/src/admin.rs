//! Operating an outbox: how much is waiting, and what to do with messages that will not go
//! through. The `camel outbox counts | discard | retry-dead` subcommands call these.
//!
//! ```no_run
//! # async fn demo() -> Result<(), camel_outbox::OutboxError> {
//! use camel_outbox::{admin::{OutboxAdmin, DeadSelection}, Datasource};
//! let admin = OutboxAdmin::new(Datasource::connect("sqlite:orders.db")?, "orders")?;
//! println!("{}", admin.counts().await?);
//! admin.retry_dead(DeadSelection::All).await?;
//! # Ok(()) }
//! ```

use std::fmt;
use std::time::Duration;

use crate::config::{OutboxConfig, TableName};
use crate::error::{OutboxError, Result};
use crate::message::{now_ms, partition_of};
use crate::outbox::Outbox;
use crate::store::Datasource;

/// The state of an outbox's backlog.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Messages not yet confirmed (including those in backoff; not the dead).
    pub pending: u64,
    /// Pending messages waiting for their retry time after a failure.
    pub in_backoff: u64,
    /// Dead messages, waiting for `retry_dead` or `discard`.
    pub dead: u64,
    /// Age of the oldest pending message.
    pub oldest_pending_age: Option<Duration>,
}

impl fmt::Display for Counts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "pending: {}\nin_backoff: {}\ndead: {}\noldest_pending_age_seconds: {}",
            self.pending,
            self.in_backoff,
            self.dead,
            self.oldest_pending_age
                .map(|d| format!("{:.3}", d.as_secs_f64()))
                .unwrap_or_else(|| "-".into())
        )
    }
}

/// Which dead messages `retry_dead` revives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeadSelection {
    /// These ids.
    Ids(Vec<i64>),
    /// Every dead message.
    All,
}

/// Who drains one partition of an outbox.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PartitionOwner {
    /// The partition.
    pub partition: u32,
    /// A worker of this process drains it (known only to an admin made with
    /// [`Outbox::admin`]: it asks the handle the relay runs on).
    pub this_process: bool,
    /// PostgreSQL: the database session holding the partition's lock, whichever process
    /// it belongs to (`pid N, application, client address`); `None` when no session
    /// holds it, and always on SQLite (one process relays a SQLite outbox).
    pub session: Option<String>,
}

/// A dead message, as [`OutboxAdmin::dead`] lists it (the payload left out).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeadMessage {
    /// Its id (what `retry_dead` and `discard` take).
    pub id: i64,
    /// Its group, if it had one.
    pub group_key: Option<String>,
    /// Attempts made before it died.
    pub attempts: i64,
    /// The error of the last attempt.
    pub last_error: Option<String>,
}

/// Admin operations on one outbox.
#[derive(Clone, Debug)]
pub struct OutboxAdmin {
    datasource: Datasource,
    table: TableName,
    name: String,
    /// The handle whose workers are woken at once after a change (see
    /// [`Outbox::admin`]); without it they notice at their next poll.
    local: Option<Outbox>,
}

impl OutboxAdmin {
    /// Admin of outbox `name` in its default table (`camel_outbox_<name>`).
    pub fn new(datasource: Datasource, name: &str) -> Result<Self> {
        Self::from_config(datasource, &OutboxConfig::new(name))
    }

    /// Admin of the outbox `config` describes (its table may be custom).
    pub fn from_config(datasource: Datasource, config: &OutboxConfig) -> Result<Self> {
        Ok(OutboxAdmin {
            table: config.validate()?,
            name: config.name.clone(),
            datasource,
            local: None,
        })
    }

    /// Admin of `outbox`, waking its workers in this process at once after a change.
    pub(crate) fn of(outbox: &Outbox) -> Self {
        OutboxAdmin {
            datasource: outbox.datasource().clone(),
            table: outbox.table().clone(),
            name: outbox.config().name.clone(),
            local: Some(outbox.clone()),
        }
    }

    /// Tells the relays that messages changed under them. Every worker compares the
    /// outbox's admin change count at each poll; PostgreSQL relays with `listen_notify`
    /// hear a notification at once, and this process's workers of the handle this admin
    /// was made from are woken directly.
    async fn announce_change(&self) -> Result<()> {
        self.datasource
            .bump_meta(&self.table, crate::store::ADMIN_EPOCH)
            .await?;
        #[cfg(feature = "postgres")]
        #[cfg_attr(not(feature = "sqlite"), allow(irrefutable_let_patterns))]
        if let Datasource::Postgres(pool) = &self.datasource {
            sqlx::query("SELECT pg_notify($1, $2)")
                .bind(crate::store::postgres::channel(&self.table))
                .bind(crate::store::postgres::ADMIN_NOTICE)
                .execute(pool)
                .await?;
        }
        if let Some(outbox) = &self.local {
            outbox.admin_changed();
        }
        Ok(())
    }

    /// Fails with [`OutboxError::NoSuchOutbox`] when the outbox's table is missing (a
    /// mistyped name or table), or [`OutboxError::Unreachable`] naming the database, rather
    /// than with the database's raw error.
    async fn check(&self) -> Result<()> {
        if self.datasource.has_table(&self.table).await? {
            return Ok(());
        }
        Err(OutboxError::NoSuchOutbox {
            outbox: self.name.clone(),
            table: self.table.to_string(),
            database: self.datasource.describe(),
        })
    }

    /// Pending, in backoff, dead, and the age of the oldest pending message. Also
    /// refreshes the `camel_outbox_pending` and `…_oldest_pending_age_seconds` gauges.
    pub async fn counts(&self) -> Result<Counts> {
        self.check().await?;
        let now = now_ms();
        let (pending, in_backoff, oldest, dead) = match &self.datasource {
            #[cfg(feature = "postgres")]
            Datasource::Postgres(p) => {
                crate::store::postgres_admin::counts(p, &self.table, now).await?
            }
            #[cfg(feature = "sqlite")]
            Datasource::Sqlite(p) => {
                crate::store::sqlite_admin::counts(p, &self.table, now).await?
            }
        };
        let counts = Counts {
            pending,
            in_backoff,
            dead,
            oldest_pending_age: oldest
                .map(|o| Duration::from_millis(now.saturating_sub(o).max(0) as u64)),
        };
        let (pending_gauge, age_gauge) = crate::metrics::backlog(&self.name);
        pending_gauge.set(counts.pending as f64);
        age_gauge.set(counts.oldest_pending_age.map_or(0.0, |d| d.as_secs_f64()));
        Ok(counts)
    }

    /// The outbox's name (as in `outbox:NAME`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The partition count the outbox stores (the relays' count).
    pub async fn partitions(&self) -> Result<u32> {
        Ok(
            match self.datasource.meta(&self.table, "partitions").await? {
                Some(stored) => crate::store::parse_partitions(&stored)?,
                None => self.local.as_ref().map_or(1, |o| o.config().partitions),
            },
        )
    }

    /// Every partition and who drains it (see [`PartitionOwner`]).
    pub async fn owners(&self) -> Result<Vec<PartitionOwner>> {
        self.check().await?;
        let partitions = self.partitions().await?;
        let here = self
            .local
            .as_ref()
            .map(Outbox::owned_partitions)
            .unwrap_or_default();
        #[allow(unused_mut)]
        let mut sessions: Vec<(u32, String)> = Vec::new();
        #[cfg(feature = "postgres")]
        #[cfg_attr(not(feature = "sqlite"), allow(irrefutable_let_patterns))]
        if let Datasource::Postgres(p) = &self.datasource {
            sessions = crate::store::postgres_admin::lock_holders(p, &self.table).await?;
        }
        Ok((0..partitions)
            .map(|partition| PartitionOwner {
                partition,
                this_process: here.contains(&partition),
                session: sessions
                    .iter()
                    .find(|(p, _)| *p == partition)
                    .map(|(_, who)| who.clone()),
            })
            .collect())
    }

    /// The first `limit` dead messages, oldest id first.
    pub async fn dead(&self, limit: u32) -> Result<Vec<DeadMessage>> {
        self.check().await?;
        let sql = format!(
            "SELECT id, group_key, CAST(attempts AS BIGINT), last_error FROM {} ORDER BY id LIMIT {limit}",
            self.table.dead()
        );
        let rows: Vec<(i64, Option<String>, i64, Option<String>)> = match &self.datasource {
            #[cfg(feature = "postgres")]
            Datasource::Postgres(p) => sqlx::query_as(&sql).fetch_all(p).await?,
            #[cfg(feature = "sqlite")]
            Datasource::Sqlite(p) => sqlx::query_as(&sql).fetch_all(p).await?,
        };
        Ok(rows
            .into_iter()
            .map(|(id, group_key, attempts, last_error)| DeadMessage {
                id,
                group_key,
                attempts,
                last_error,
            })
            .collect())
    }

    /// Removes message `id`, pending or dead. True when it existed.
    ///
    /// A worker holding the message in backoff (its group blocked behind it) lets the
    /// group go on at once in this process (an admin from [`Outbox::admin`]) or with
    /// `listen_notify` on PostgreSQL, else at its next poll (`poll_interval`).
    pub async fn discard(&self, id: i64) -> Result<bool> {
        self.check().await?;
        let found = match &self.datasource {
            #[cfg(feature = "postgres")]
            Datasource::Postgres(p) => {
                crate::store::postgres_admin::discard(p, &self.table, id).await?
            }
            #[cfg(feature = "sqlite")]
            Datasource::Sqlite(p) => {
                crate::store::sqlite_admin::discard(p, &self.table, id).await?
            }
        };
        if found {
            self.announce_change().await?;
        }
        Ok(found)
    }

    /// Moves dead messages back to pending with their original ids and zero attempts.
    /// Returns how many were revived. They are relayed as soon as the workers hear of the
    /// change: at once in this process (an admin from [`Outbox::admin`]) or with
    /// `listen_notify` on PostgreSQL, else at their next poll (`poll_interval`).
    pub async fn retry_dead(&self, selection: DeadSelection) -> Result<u64> {
        self.check().await?;
        let revived = self.revive(selection).await?;
        if revived > 0 {
            self.announce_change().await?;
        }
        Ok(revived)
    }

    async fn revive(&self, selection: DeadSelection) -> Result<u64> {
        let partitions = self
            .datasource
            .meta(&self.table, "partitions")
            .await?
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(1);
        let place = move |id: i64, group: Option<&str>| match group {
            Some(g) => partition_of(g, partitions) as i32,
            None => (id.rem_euclid(i64::from(partitions))) as i32,
        };
        match &self.datasource {
            #[cfg(feature = "postgres")]
            Datasource::Postgres(p) => {
                crate::store::postgres_admin::retry_dead(p, &self.table, &selection, place).await
            }
            #[cfg(feature = "sqlite")]
            Datasource::Sqlite(p) => {
                crate::store::sqlite_admin::retry_dead(p, &self.table, &selection, place).await
            }
        }
    }
}
