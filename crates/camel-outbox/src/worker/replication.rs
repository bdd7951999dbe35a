//! `logical_replication`: the workers are woken by the outbox table's inserts, read from
//! a logical replication stream, instead of waiting for their next poll (ADR 0157).
//!
//! The stream only wakes: at each commit that inserted rows, the partitions those rows
//! belong to are woken, and their workers read the rows as they always do (the same
//! indexed read from their position, the same horizon, the same ownership). So order
//! and ownership are the polling relay's, proven by the same tests; what changes is how
//! soon a worker hears of a row another process committed. Polls and sweeps go on as
//! the safety net for a wake-up lost with a broken stream.
//!
//! The server sends a commit once it is in the WAL, which can be a moment before the
//! transaction stops counting as running, so a worker's read can come too early to see
//! the rows. Each wake-up therefore carries the highest order key (`tx_order`) of the
//! rows it announces, and the worker reads again, as for rows held back by the horizon,
//! until a read's horizon has passed it (ADR 0170).
//!
//! Each relay streams from a **temporary** slot made on its own replication session: the
//! server drops it when the session ends, also when the process is killed, so no slot
//! is ever left behind holding WAL. The position is confirmed as soon as a commit was
//! read (a lost wake-up costs a poll, never a message). A publication
//! `<table>_wake` (inserts of the outbox table) is made when missing.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use camel_cdc::pgoutput::{Cell, Decoder, Message, Operation};
use pgwire_replication::{Lsn, ReplicationClient, ReplicationConfig, ReplicationEvent};
use tokio_util::sync::CancellationToken;

use crate::error::{OutboxError, Result};
use crate::outbox::Outbox;
use crate::store::Datasource;

static NEXT_SLOT: AtomicU64 = AtomicU64::new(0);

/// Streams the outbox table's inserts and wakes their partitions until `cancel` fires;
/// reconnects (after `poll_interval`) when the stream breaks.
pub(super) async fn wake_on_inserts(outbox: Outbox, cancel: CancellationToken) -> Result<()> {
    #[cfg_attr(not(feature = "sqlite"), allow(irrefutable_let_patterns))]
    let Datasource::Postgres(pool) = outbox.datasource() else {
        // SQLite has one process and wakes its workers at commit already.
        return Ok(());
    };
    let publication = format!("{}_wake", outbox.table().as_str());
    while !cancel.is_cancelled() {
        let why = match stream(&outbox, pool, &publication, &cancel).await {
            Ok(()) => return Ok(()),
            Err(e) => e.to_string(),
        };
        tracing::warn!(outbox = %outbox.config().name, error = %why,
            "outbox replication stream broke; workers poll until it is back");
        tokio::select! {
            _ = cancel.cancelled() => return Ok(()),
            _ = tokio::time::sleep(outbox.config().poll_interval.max(Duration::from_millis(100))) => {}
        }
    }
    Ok(())
}

async fn stream(
    outbox: &Outbox,
    pool: &sqlx::PgPool,
    publication: &str,
    cancel: &CancellationToken,
) -> Result<()> {
    let table = outbox.table().as_str();
    // Table names are validated identifiers (`[a-z_][a-z0-9_]{0,47}`): no quoting needed.
    let create =
        format!("CREATE PUBLICATION {publication} FOR TABLE {table} WITH (publish = 'insert')");
    if let Err(e) = sqlx::query(&create).execute(pool).await {
        let duplicate = e
            .as_database_error()
            .and_then(|d| d.code())
            .is_some_and(|c| c == "42710");
        if !duplicate {
            return Err(e.into());
        }
    }
    let options = pool.connect_options();
    let slot = format!(
        "camel_wake_{}_{}",
        std::process::id(),
        NEXT_SLOT.fetch_add(1, Ordering::Relaxed)
    );
    // sqlx does not hand out the URL's password: the stream takes PGPASSWORD's.
    let password = std::env::var("PGPASSWORD").unwrap_or_default();
    let config = ReplicationConfig::new(
        options.get_host(),
        options.get_username(),
        password,
        options.get_database().unwrap_or("postgres"),
        slot.clone(),
        publication,
    )
    .with_port(options.get_port())
    .with_status_interval(Duration::from_millis(500))
    .with_buffer_size(256)
    .with_application_name("camel-outbox-wake");
    let failed = |e: pgwire_replication::PgWireError| {
        OutboxError::Config(format!("outbox replication stream: {e}"))
    };
    let mut client = ReplicationClient::connect_gated(config)
        .await
        .map_err(failed)?;
    client
        .simple_query(&format!(
            "CREATE_REPLICATION_SLOT {slot} TEMPORARY LOGICAL pgoutput"
        ))
        .await
        .map_err(failed)?;
    client.start().await.map_err(failed)?;
    client.wait_started().await.map_err(failed)?;
    tracing::info!(outbox = %outbox.config().name, %slot, "outbox workers woken by logical replication");
    let mut decoder = Decoder::new();
    // Per partition, the highest order key inserted by the transaction being read.
    let mut partitions: BTreeMap<u32, i64> = BTreeMap::new();
    loop {
        let event = tokio::select! {
            _ = cancel.cancelled() => {
                let _ = tokio::time::timeout(Duration::from_secs(2), client.shutdown()).await;
                return Ok(());
            }
            event = client.recv() => event.map_err(failed)?,
        };
        match event {
            Some(ReplicationEvent::XLogData { data, .. }) => {
                if let Ok(Message::Row(change)) = decoder.decode(data) {
                    if change.operation == Operation::Insert {
                        let cells = change.new.as_deref();
                        let column = |name| column_of(&decoder, change.relation, cells, name);
                        let partition = column("partition_no").and_then(|p| u32::try_from(p).ok());
                        if let Some(p) = partition {
                            // Without an order key the worker is woken, nothing awaited.
                            let order = column("tx_order").unwrap_or(0);
                            let highest = partitions.entry(p).or_insert(order);
                            *highest = (*highest).max(order);
                        }
                    }
                }
            }
            Some(ReplicationEvent::Commit { end_lsn, .. }) => {
                for (p, order) in std::mem::take(&mut partitions) {
                    outbox.wake_streamed(p, order);
                }
                client.update_applied_lsn(end_lsn);
            }
            Some(ReplicationEvent::KeepAlive { wal_end, .. }) if partitions.is_empty() => {
                client.update_applied_lsn(Lsn(wal_end.0));
            }
            Some(_) => {}
            None => {
                return Err(OutboxError::Config(
                    "the server ended the outbox replication stream".into(),
                ))
            }
        }
    }
}

/// The integer column `name` of an inserted row.
fn column_of(decoder: &Decoder, relation: u32, cells: Option<&[Cell]>, name: &str) -> Option<i64> {
    let relation = decoder.relation(relation)?;
    let index = relation.columns.iter().position(|c| c.name == name)?;
    match cells?.get(index)? {
        Cell::Text(text) => std::str::from_utf8(text).ok()?.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use tokio::sync::Notify;

    use crate::{Datasource, NewMessage, Outbox, OutboxConfig, Relay};

    /// The race of a wake-up that comes before its transaction counts as ended, stretched
    /// out: the rows are announced while their transaction is still open, and committed
    /// after the worker's read found nothing. With polls and sweeps a minute apart, only
    /// the worker's re-reads (until the horizon passes the announced order key) deliver
    /// the row within the bound.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wake_up_that_comes_before_its_commit_is_visible_is_not_lost() {
        let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
            return;
        };
        let ds = Datasource::connect(&url).expect("a PostgreSQL URL");
        let Datasource::Postgres(pool) = ds.clone() else {
            unreachable!("a PostgreSQL URL")
        };
        let name = format!(
            "early_wake_{}_{:x}",
            std::process::id(),
            crate::message::now_ms()
        );
        let mut config = OutboxConfig::new(&name);
        config.partitions = 1;
        config.poll_interval = Duration::from_secs(60);
        config.sweep_interval = Duration::from_secs(60);
        let outbox = Outbox::open(ds, config).await.expect("open");
        let delivered = Arc::new(Notify::new());
        let signal = delivered.clone();
        let relay = Relay::new(outbox.clone(), move |_| {
            signal.notify_one();
            async { Ok(()) }
        })
        .spawn();
        let mut tx = pool.begin().await.expect("begin");
        let id = outbox
            .publish(&mut tx, NewMessage::text("x").group("g"))
            .await
            .expect("publish");
        let order: i64 = sqlx::query_scalar(&format!(
            "SELECT tx_order FROM {} WHERE id = $1",
            outbox.table()
        ))
        .bind(id)
        .fetch_one(&mut *tx)
        .await
        .expect("the row's order key");
        outbox.wake_streamed(0, order);
        // Give the worker time to make its read while the transaction is open (setting
        // the race up; the result is awaited below, with a bound).
        tokio::time::sleep(Duration::from_millis(50)).await;
        tx.commit().await.expect("commit");
        let in_time = tokio::time::timeout(Duration::from_secs(5), delivered.notified()).await;
        relay.shutdown().await.expect("shutdown");
        let table = outbox.table();
        for t in [table.to_string(), table.dead(), table.meta()] {
            sqlx::query(&format!("DROP TABLE {t}"))
                .execute(&pool)
                .await
                .expect("drop");
        }
        assert!(in_time.is_ok(), "the row waited for the next poll");
    }
}
