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
//! Each relay streams from a **temporary** slot made on its own replication session: the
//! server drops it when the session ends, also when the process is killed, so no slot
//! is ever left behind holding WAL. The position is confirmed as soon as a commit was
//! read (a lost wake-up costs a poll, never a message). A publication
//! `<table>_wake` (inserts of the outbox table) is made when missing.

use std::collections::BTreeSet;
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
    let mut partitions: BTreeSet<u32> = BTreeSet::new();
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
                        if let Some(p) =
                            partition_of(&decoder, change.relation, change.new.as_deref())
                        {
                            partitions.insert(p);
                        }
                    }
                }
            }
            Some(ReplicationEvent::Commit { end_lsn, .. }) => {
                for p in std::mem::take(&mut partitions) {
                    outbox.waker(p).notify_one();
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

/// The `partition_no` of an inserted row.
fn partition_of(decoder: &Decoder, relation: u32, cells: Option<&[Cell]>) -> Option<u32> {
    let relation = decoder.relation(relation)?;
    let index = relation
        .columns
        .iter()
        .position(|c| c.name == "partition_no")?;
    match cells?.get(index)? {
        Cell::Text(text) => std::str::from_utf8(text).ok()?.parse().ok(),
        _ => None,
    }
}
