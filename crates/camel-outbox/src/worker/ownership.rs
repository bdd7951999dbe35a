//! Who drains a partition. PostgreSQL: the process holding the partition's session
//! advisory lock, taken on a dedicated connection that no pool can recycle (ADR 0010).
//! A process that does not get the lock tries again every `takeover_interval`; when the
//! owner dies its connection closes, PostgreSQL releases the lock, and the next try wins.
//! SQLite: one process owns every partition.

use tokio_util::sync::CancellationToken;

use super::health::Report;
use super::partition::PartitionWorker;
use super::Handler;
use crate::error::Result;
use crate::outbox::Outbox;
use crate::store::Datasource;

/// Owns and drains `partition` until `cancel` fires.
pub(crate) async fn drive_partition(
    outbox: Outbox,
    partition: u32,
    handler: Handler,
    cancel: CancellationToken,
    health: Report,
) -> Result<()> {
    match outbox.datasource().clone() {
        #[cfg(feature = "postgres")]
        Datasource::Postgres(pool) => {
            drive_postgres(outbox, pool, partition, handler, cancel, health).await
        }
        #[cfg(feature = "sqlite")]
        Datasource::Sqlite(pool) => {
            while !cancel.is_cancelled() {
                let store = crate::store::sqlite::SqlitePartition::new(
                    pool.clone(),
                    outbox.table().clone(),
                    partition,
                );
                let worker =
                    PartitionWorker::new(store, outbox.clone(), partition, handler.clone())
                        .reporting_to(health.clone());
                outbox.set_owned(partition, true);
                let ran = worker.run(&cancel).await;
                outbox.set_owned(partition, false);
                if let Err(e) = ran {
                    health.down(partition, &e);
                    tracing::warn!(outbox = %outbox.config().name, partition, error = %e, "outbox worker failed; restarting");
                    pause(&outbox, &cancel).await;
                }
            }
            Ok(())
        }
    }
}

async fn pause(outbox: &Outbox, cancel: &CancellationToken) {
    tokio::select! {
        _ = cancel.cancelled() => {}
        _ = tokio::time::sleep(outbox.config().takeover_interval) => {}
    }
}

#[cfg(feature = "postgres")]
async fn drive_postgres(
    outbox: Outbox,
    pool: sqlx::PgPool,
    partition: u32,
    handler: Handler,
    cancel: CancellationToken,
    health: Report,
) -> Result<()> {
    use crate::store::postgres::{try_own, PgPartition};
    let options = pool.connect_options();
    let connect_timeout = pool.options().get_acquire_timeout();
    let name = outbox.config().name.clone();
    while !cancel.is_cancelled() {
        let mut conn = None;
        // A stop ends a connection attempt at once: a database that does not answer
        // would otherwise hold the stop for the whole connect timeout.
        let owned = tokio::select! {
            _ = cancel.cancelled() => break,
            owned = tokio::time::timeout(
                connect_timeout,
                try_own(&options, outbox.table(), partition, &mut conn),
            ) => owned.unwrap_or_else(|_| Err(crate::error::OutboxError::Unreachable {
                database: outbox.datasource().describe(),
                reason: format!("no connection within {connect_timeout:?} (the URL's connect_timeout, default 30 s)"),
            })),
        };
        match owned {
            Ok(true) => {}
            Ok(false) => {
                // Owned by another process, which takes a working database.
                health.up(partition);
                pause(&outbox, &cancel).await;
                continue;
            }
            Err(e) => {
                health.down(partition, &e);
                tracing::warn!(outbox = %name, partition, error = %e, "cannot reach the outbox database");
                pause(&outbox, &cancel).await;
                continue;
            }
        }
        let Some(mut conn) = conn else { continue };
        // The count may only change while no relay holds a partition (ADR 0033); this
        // relay checked it at open, but another process could have changed it before this
        // lock was taken. Now that it is held, the count cannot change: check once more.
        let running = outbox.config().partitions;
        match crate::store::postgres::stored_partitions(&mut conn, outbox.table()).await {
            Ok(Some(stored)) if stored != running => {
                let _ = sqlx::Connection::close(conn).await;
                return Err(crate::error::OutboxError::PartitionsChangedUnderRelay {
                    outbox: name,
                    stored,
                    running,
                });
            }
            Ok(_) => {}
            Err(e) => {
                health.down(partition, &e);
                tracing::warn!(outbox = %name, partition, error = %e, "cannot reach the outbox database");
                pause(&outbox, &cancel).await;
                continue;
            }
        }
        tracing::info!(outbox = %name, partition, "outbox partition owned");
        let store = PgPartition::new(conn, outbox.table().clone(), partition);
        let worker = PartitionWorker::new(store, outbox.clone(), partition, handler.clone())
            .reporting_to(health.clone());
        outbox.set_owned(partition, true);
        let ran = worker.run(&cancel).await;
        outbox.set_owned(partition, false);
        match ran {
            Ok(store) => {
                // Closing the connection releases the lock for the next owner.
                let _ = sqlx::Connection::close(store.into_connection()).await;
                tracing::info!(outbox = %name, partition, "outbox partition released");
            }
            Err(e) => {
                health.down(partition, &e);
                tracing::warn!(outbox = %name, partition, error = %e, "outbox partition lost");
                pause(&outbox, &cancel).await;
            }
        }
    }
    Ok(())
}
