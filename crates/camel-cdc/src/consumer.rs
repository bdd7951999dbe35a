//! The consumer: one replication session at a time; each row change through the route,
//! the slot confirmed one settled transaction at a time.
//!
//! A session prepares the slot and publication on an ordinary connection (and takes the
//! snapshot when one is due), then streams. Changes go to the route in stream order,
//! at most `max_inflight` unsettled at once: at the bound the consumer stops receiving,
//! the client library's bounded buffer fills, and the server waits on its socket. The
//! confirmed position follows [`crate::progress::Progress`].
//!
//! When a route fails the session stops receiving, lets the running exchanges finish,
//! confirms what is settled and reconnects after a wait (doubling up to
//! `max_reconnect_delay` while failures repeat): the server then sends the failed
//! transaction again, and everything after it. A lost connection is handled the same
//! way. A process that dies loses nothing: the slot keeps every unconfirmed change.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use camel_api::{CamelError, Consumer, ConsumerContext, ProcessorFuture};
use pgwire_replication::{Lsn, ReplicationClient, ReplicationConfig, ReplicationEvent};
use tokio::task::JoinSet;

use crate::exchange::{change_exchange, snapshot_exchange, Transaction};
use crate::options::CdcOptions;
use crate::pgoutput::{Decoder, Message};
use crate::progress::{Progress, Ticket};
use crate::slot;

/// A consumer of one slot.
#[derive(Debug)]
pub struct CdcConsumer {
    options: Arc<CdcOptions>,
}

/// How a session ended.
#[derive(Debug)]
enum SessionEnd {
    /// The route stopped.
    Stopped,
    /// A route failed, or the connection or the server failed: start again after a wait.
    Retry {
        why: String,
        /// Something was confirmed in this session (the wait starts over).
        progressed: bool,
    },
}

impl CdcConsumer {
    /// A consumer with these options.
    pub fn new(options: CdcOptions) -> Self {
        CdcConsumer {
            options: Arc::new(options),
        }
    }

    /// Slot, publication and snapshot, on an ordinary connection.
    async fn prepare(&self, ctx: &ConsumerContext) -> Result<(), SessionEnd> {
        let o = &*self.options;
        let retry = |e: slot::SlotError| SessionEnd::Retry {
            why: e.to_string(),
            progressed: false,
        };
        let mut conn = slot::connect(o).await.map_err(retry)?;
        slot::ensure_publication(&mut conn, o)
            .await
            .map_err(retry)?;
        if !slot::slot_exists(&mut conn, o).await.map_err(retry)? {
            // Marked before the slot exists: a process that dies between the two takes
            // the snapshot at its next start instead of never.
            if o.snapshot {
                slot::mark_snapshot(&mut conn, o, true)
                    .await
                    .map_err(retry)?;
            }
            slot::create_slot(&mut conn, o).await.map_err(retry)?;
            tracing::info!(slot = %o.slot, server = %o.server(), "created replication slot");
        }
        if o.snapshot && slot::snapshot_pending(&mut conn, o).await.map_err(retry)? {
            let at = slot::confirmed_lsn(&mut conn, o).await.map_err(retry)?;
            let tables = slot::published_tables(&mut conn, o).await.map_err(retry)?;
            for (schema, table) in &tables {
                let sent = slot::for_each_row(&mut conn, o, schema, table, |row| {
                    let exchange = snapshot_exchange(schema, table, row, at);
                    async move { ctx.send(exchange).await.map(|_| ()) }
                })
                .await
                .map_err(retry)?;
                if let Err(e) = sent {
                    return Err(SessionEnd::Retry {
                        why: format!("snapshot of {schema}.{table}: {e}"),
                        progressed: false,
                    });
                }
            }
            slot::mark_snapshot(&mut conn, o, false)
                .await
                .map_err(retry)?;
            tracing::info!(slot = %o.slot, tables = tables.len(), "snapshot delivered");
        }
        Ok(())
    }

    async fn session(&self, ctx: &ConsumerContext) -> SessionEnd {
        if let Err(end) = self.prepare(ctx).await {
            return end;
        }
        if ctx.is_cancelled() {
            return SessionEnd::Stopped;
        }
        let o = &*self.options;
        let config = ReplicationConfig::new(
            o.host.clone(),
            o.user.clone(),
            o.password.0.clone(),
            o.database.clone(),
            o.slot.clone(),
            o.publication.clone(),
        )
        .with_port(o.port)
        .with_status_interval(o.status_interval)
        // Bounds what waits between the socket and the route while the route is slow.
        .with_buffer_size(o.max_inflight.max(64))
        .with_application_name("camel-cdc");
        let mut client = match ReplicationClient::connect(config).await {
            Ok(c) => c,
            Err(e) => {
                return SessionEnd::Retry {
                    why: format!("start replication from slot `{}`: {e}", o.slot),
                    progressed: false,
                }
            }
        };
        ctx.health().set_healthy();
        tracing::info!(slot = %o.slot, publication = %o.publication, server = %o.server(),
            max_inflight = o.max_inflight, "streaming changes");
        let mut stream = Stream::default();
        let end = stream.run(ctx, o, &mut client).await;
        // Everything settled: report the last confirmed position before leaving, so a
        // graceful stop does not hand the same changes out again.
        if let Some(lsn) = stream.confirmed {
            let metrics = client.metrics();
            let deadline =
                tokio::time::Instant::now() + o.status_interval + Duration::from_millis(200);
            while metrics.last_applied_lsn().0 < lsn && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        let _ = tokio::time::timeout(Duration::from_secs(5), client.shutdown()).await;
        end
    }
}

/// One session's stream state.
#[derive(Debug, Default)]
struct Stream {
    decoder: Decoder,
    progress: Progress,
    transaction: Transaction,
    /// The last position handed to the client for confirmation.
    confirmed: Option<u64>,
}

impl Stream {
    async fn run(
        &mut self,
        ctx: &ConsumerContext,
        o: &CdcOptions,
        client: &mut ReplicationClient,
    ) -> SessionEnd {
        let mut running: JoinSet<(Ticket, Result<(), CamelError>)> = JoinSet::new();
        let mut closing: Option<String> = None;
        let mut stopping = false;
        loop {
            if closing.is_some() && running.is_empty() {
                break;
            }
            tokio::select! {
                biased;
                _ = ctx.cancelled(), if !stopping => {
                    stopping = true;
                    closing.get_or_insert_with(|| "stopping".into());
                }
                Some(joined) = running.join_next(), if !running.is_empty() => match joined {
                    Ok((ticket, Ok(()))) => {
                        self.progress.settle(ticket);
                        self.confirm(client);
                    }
                    Ok((_, Err(e))) => {
                        closing.get_or_insert_with(|| format!("route failed: {e}"));
                    }
                    Err(e) => {
                        closing.get_or_insert_with(|| format!("a delivery task ended abnormally: {e}"));
                    }
                },
                event = client.recv(), if closing.is_none() && running.len() < o.max_inflight => {
                    if let Err(why) = self.on_event(ctx, client, event, &mut running) {
                        closing = Some(why);
                    }
                }
            }
        }
        self.confirm(client);
        if stopping {
            self.finish_transaction(client).await;
        }
        match closing {
            _ if stopping => SessionEnd::Stopped,
            why => SessionEnd::Retry {
                why: why.unwrap_or_default(),
                progressed: self.confirmed.is_some(),
            },
        }
    }

    /// Handles one event from the stream; `Err` ends the session with the reason.
    fn on_event(
        &mut self,
        ctx: &ConsumerContext,
        client: &ReplicationClient,
        event: pgwire_replication::Result<Option<ReplicationEvent>>,
        running: &mut JoinSet<(Ticket, Result<(), CamelError>)>,
    ) -> Result<(), String> {
        match event {
            Ok(Some(ReplicationEvent::Begin {
                final_lsn,
                xid,
                commit_time_micros,
            })) => {
                self.progress.begin();
                self.transaction = Transaction {
                    commit_lsn: final_lsn.0,
                    commit_time: commit_time_micros,
                    xid,
                };
            }
            Ok(Some(ReplicationEvent::Commit { end_lsn, .. })) => {
                self.progress.commit(end_lsn.0);
                self.confirm(client);
            }
            Ok(Some(ReplicationEvent::XLogData {
                wal_start, data, ..
            })) => {
                let change = match self.decoder.decode(data) {
                    Ok(Message::Row(change)) => change,
                    Ok(_) => return Ok(()),
                    Err(e) => return Err(e.to_string()),
                };
                let Some(relation) = self.decoder.relation(change.relation) else {
                    return Err(format!("change of unknown relation {}", change.relation));
                };
                let exchange = change_exchange(&change, relation, &self.transaction, wal_start.0);
                let ticket = self.progress.change();
                // A route that completes synchronously is settled here, without a task.
                match ctx.process(exchange) {
                    ProcessorFuture::Ready(Some(Ok(_))) => self.progress.settle(ticket),
                    ProcessorFuture::Ready(Some(Err(e))) => {
                        return Err(format!("route failed: {e}"))
                    }
                    ProcessorFuture::Ready(None) => {
                        return Err("the route's future had already completed".into())
                    }
                    pending => {
                        running.spawn(async move { (ticket, pending.await.map(|_| ())) });
                    }
                }
            }
            Ok(Some(ReplicationEvent::KeepAlive { wal_end, .. })) => {
                // Nothing open: every change the server sent up to `wal_end` is
                // confirmed, so the slot may move there (otherwise writes to tables
                // outside the publication would keep WAL on the server for nothing).
                if self.progress.is_idle() && running.is_empty() && !wal_end.is_zero() {
                    client.update_applied_lsn(wal_end);
                    self.confirmed = Some(self.confirmed.unwrap_or(0).max(wal_end.0));
                }
            }
            Ok(Some(_)) => {}
            Ok(None) => return Err("the server ended the replication stream".into()),
            Err(e) => return Err(format!("replication stream: {e}")),
        }
        Ok(())
    }

    /// A stop that came between a transaction's last change and its commit would leave
    /// the whole transaction unconfirmed, to be delivered again: read on for its commit
    /// (briefly, and only while no further change would have to go to the route).
    async fn finish_transaction(&mut self, client: &mut ReplicationClient) {
        let deadline = tokio::time::Instant::now() + Duration::from_millis(500);
        while !self.progress.is_idle() {
            match tokio::time::timeout_at(deadline, client.recv()).await {
                Ok(Ok(Some(ReplicationEvent::Commit { end_lsn, .. }))) => {
                    self.progress.commit(end_lsn.0);
                    self.confirm(client);
                    return;
                }
                Ok(Ok(Some(ReplicationEvent::XLogData { data, .. }))) => {
                    if !matches!(self.decoder.decode(data), Ok(Message::Other)) {
                        return;
                    }
                }
                Ok(Ok(Some(
                    ReplicationEvent::KeepAlive { .. } | ReplicationEvent::Message { .. },
                ))) => {}
                _ => return,
            }
        }
    }

    fn confirm(&mut self, client: &ReplicationClient) {
        if let Some(position) = self.progress.confirmable() {
            client.update_applied_lsn(Lsn(position));
            self.confirmed = Some(self.confirmed.unwrap_or(0).max(position));
        }
    }
}

#[async_trait]
impl Consumer for CdcConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let o = self.options.clone();
        let mut wait = o.reconnect_delay;
        loop {
            match self.session(&ctx).await {
                SessionEnd::Stopped => return Ok(()),
                SessionEnd::Retry { why, progressed } => {
                    if progressed {
                        wait = o.reconnect_delay;
                    }
                    ctx.health().set_failing(format!(
                        "PostgreSQL {} slot {}: {why}",
                        o.server(),
                        o.slot
                    ));
                    tracing::warn!(slot = %o.slot, server = %o.server(), error = %why, retry_in = ?wait,
                        "replication session ended; the unconfirmed changes come again after the reconnect");
                }
            }
            tokio::select! {
                _ = ctx.cancelled() => return Ok(()),
                _ = tokio::time::sleep(wait) => {}
            }
            wait = (wait * 2).min(o.max_reconnect_delay);
        }
    }
}
