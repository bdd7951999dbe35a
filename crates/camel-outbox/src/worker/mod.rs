//! The relay: one worker per partition drains the outbox into a handler (a route, in the
//! `outbox:` component). See `docs/outbox.md` for the guarantees.
//!
//! ```no_run
//! # async fn demo(outbox: camel_outbox::Outbox) {
//! use camel_outbox::Relay;
//! let relay = Relay::new(outbox, |message| async move {
//!     println!("{} {:?}", message.id, message.group_key);
//!     Ok(())
//! })
//! .spawn();
//! // …
//! relay.shutdown().await.ok();
//! # }
//! ```

mod health;
mod horizon;
mod ownership;
mod partition;
#[cfg(feature = "replication")]
mod replication;
mod running;
mod scheduler;

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use camel_api::CamelError;
use futures::future::BoxFuture;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::admin::OutboxAdmin;
use crate::error::Result;
use crate::message::StoredMessage;
use crate::outbox::Outbox;

/// What a relay hands each message to: `Ok` confirms it; `Err` counts a failed attempt
/// (`CamelError::RetryAfter { ms, .. }` retries after `ms` instead of the backoff and
/// never makes the message dead).
pub(crate) type Handler =
    Arc<dyn Fn(StoredMessage) -> BoxFuture<'static, Result<(), CamelError>> + Send + Sync>;

/// A relay of one outbox, before it runs.
pub struct Relay {
    outbox: Outbox,
    handler: Handler,
    health: health::Report,
}

impl fmt::Debug for Relay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Relay")
            .field("outbox", &self.outbox)
            .finish_non_exhaustive()
    }
}

impl Relay {
    /// A relay handing every message of `outbox` to `handler`.
    pub fn new<F, Fut>(outbox: Outbox, handler: F) -> Self
    where
        F: Fn(StoredMessage) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), CamelError>> + Send + 'static,
    {
        Relay {
            outbox,
            handler: Arc::new(move |m| Box::pin(handler(m))),
            health: health::Report::default(),
        }
    }

    /// Reports to `health` while it runs: failing while a partition cannot reach the
    /// database, healthy again once every partition reads from it (or is owned by
    /// another process).
    pub(crate) fn reporting_to(mut self, health: Arc<camel_api::ConsumerHealth>) -> Self {
        let name = self.outbox.config().name.clone();
        self.health = health::Report::to(Arc::new(health::RelayHealth::new(&name, health)));
        self
    }

    /// Runs every partition's worker until `cancel` fires, then lets the deliveries in
    /// flight finish, deletes what they confirmed, and releases the partitions.
    pub async fn run(self, cancel: CancellationToken) -> Result<()> {
        #[cfg(not(feature = "replication"))]
        if self.outbox.config().logical_replication {
            return Err(crate::error::OutboxError::Config(
                "logical_replication needs camel-outbox's `replication` feature".into(),
            ));
        }
        let mut tasks = JoinSet::new();
        for partition in 0..self.outbox.config().partitions {
            tasks.spawn(ownership::drive_partition(
                self.outbox.clone(),
                partition,
                self.handler.clone(),
                cancel.clone(),
                self.health.clone(),
            ));
        }
        #[cfg(feature = "postgres")]
        if self.outbox.config().listen_notify {
            tasks.spawn(listen(self.outbox.clone(), cancel.clone()));
        }
        if self.outbox.config().logical_replication {
            #[cfg(feature = "replication")]
            tasks.spawn(replication::wake_on_inserts(
                self.outbox.clone(),
                cancel.clone(),
            ));
            #[cfg(not(feature = "replication"))]
            return Err(crate::error::OutboxError::Config(
                "logical_replication needs camel-outbox's `replication` feature".into(),
            ));
        }
        tasks.spawn(report_backlog(self.outbox.clone(), cancel.clone()));
        let mut first_error = None;
        while let Some(done) = tasks.join_next().await {
            let error = match done {
                Ok(Ok(())) => continue,
                Ok(Err(e)) => e,
                // A panicked worker would leave its partition undrained: stop the relay
                // and say so rather than run on without it.
                Err(e) => crate::error::OutboxError::Config(format!("relay worker failed: {e}")),
            };
            cancel.cancel();
            first_error.get_or_insert(error);
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Runs the relay on its own task.
    pub fn spawn(self) -> RelayHandle {
        // Every task of the relay (the run task, the partition workers, the deliveries)
        // holds a clone of `alive`, so `abort` can tell when the last of them is gone.
        let (alive, gone) = tokio::sync::mpsc::channel::<()>(1);
        let inner = self.handler;
        let handler: Handler = Arc::new(move |m| {
            let alive = alive.clone();
            let delivery = inner(m);
            Box::pin(async move {
                let result = delivery.await;
                drop(alive);
                result
            })
        });
        let relay = Relay {
            outbox: self.outbox,
            handler,
            health: self.health,
        };
        let cancel = CancellationToken::new();
        let task = tokio::spawn(relay.run(cancel.clone()));
        RelayHandle { cancel, task, gone }
    }
}

/// A running relay.
#[derive(Debug)]
pub struct RelayHandle {
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<Result<()>>,
    gone: tokio::sync::mpsc::Receiver<()>,
}

impl RelayHandle {
    /// Stops gracefully: deliveries in flight finish and are confirmed.
    pub async fn shutdown(self) -> Result<()> {
        self.cancel.cancel();
        match self.task.await {
            Ok(r) => r,
            Err(e) => Err(crate::error::OutboxError::Config(format!(
                "relay task failed: {e}"
            ))),
        }
    }

    /// Stops at once, like a crash: deliveries in flight are dropped unconfirmed and will
    /// be delivered again. Returns once the workers are gone; a statement they had already
    /// handed to the database (a `DELETE` of confirmed rows running on SQLite's connection
    /// thread) may still complete after that, as it would after a real crash.
    pub async fn abort(mut self) {
        self.task.abort();
        let _ = (&mut self.task).await;
        while self.gone.recv().await.is_some() {}
    }
}

/// Refreshes the backlog gauges every few seconds.
async fn report_backlog(outbox: Outbox, cancel: CancellationToken) -> Result<()> {
    let admin = OutboxAdmin::from_config(outbox.datasource().clone(), outbox.config())?;
    loop {
        if let Err(e) = admin.counts().await {
            tracing::debug!(outbox = %outbox.config().name, error = %e, "outbox counts failed");
        }
        tokio::select! {
            _ = cancel.cancelled() => return Ok(()),
            _ = tokio::time::sleep(Duration::from_secs(5)) => {}
        }
    }
}

/// Forwards `NOTIFY`s of other processes' publishes to the local workers.
#[cfg(feature = "postgres")]
async fn listen(outbox: Outbox, cancel: CancellationToken) -> Result<()> {
    #[cfg_attr(not(feature = "sqlite"), allow(irrefutable_let_patterns))]
    let crate::store::Datasource::Postgres(pool) = outbox.datasource() else {
        return Ok(());
    };
    let channel = crate::store::postgres::channel(outbox.table());
    while !cancel.is_cancelled() {
        let mut listener = match sqlx::postgres::PgListener::connect_with(pool).await {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(outbox = %outbox.config().name, error = %e, "outbox LISTEN failed");
                tokio::select! {
                    _ = cancel.cancelled() => return Ok(()),
                    _ = tokio::time::sleep(outbox.config().poll_interval) => continue,
                }
            }
        };
        listener.listen(&channel).await?;
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return Ok(()),
                n = listener.recv() => match n {
                    Ok(n) => match n.payload().parse::<u32>() {
                        Ok(p) => outbox.waker(p).notify_one(),
                        Err(_) if n.payload() == crate::store::postgres::ADMIN_NOTICE => {
                            outbox.admin_changed()
                        }
                        Err(_) => outbox.wake(),
                    },
                    Err(_) => break,
                },
            }
        }
    }
    Ok(())
}
