//! The Redis Streams consumer: one consumer of a consumer group, at least once.
//!
//! - On start it creates the group (`XGROUP CREATE … MKSTREAM`, from `group_start_id`)
//!   unless it exists, then reads its own pending entries first (`XREADGROUP … 0`): what
//!   it had taken before a crash, under the same `consumer_name`, comes back at once.
//! - Then it reads new entries (`XREADGROUP … >`, `BLOCK block`), never more than the
//!   free slots of `max_inflight`, and runs each through the route; `XACK` follows a
//!   success only. A failed entry stays pending.
//! - Every `claim_interval` it takes over entries pending for longer than
//!   `claim_min_idle` in the whole group (`XAUTOCLAIM`): those of a consumer that died,
//!   and its own failed ones, which so come back after `claim_min_idle`. An entry still
//!   running here is not run twice; one running in another process for longer than
//!   `claim_min_idle` would be, so `claim_min_idle` must exceed the longest route.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::{CamelError, ConsumerContext};
use redis::aio::MultiplexedConnection;
use redis::streams::{StreamAutoClaimReply, StreamId, StreamReadReply};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::connection::{connect, failed};
use crate::message::entry_exchange;
use crate::options::RedisOptions;

/// What the consumer reads next.
#[derive(Debug, PartialEq, Eq)]
enum Phase {
    /// Its own pending entries, after this id.
    OwnBacklog(String),
    /// New entries.
    New,
}

/// Ids in the route in this process, shared with the tasks that remove them.
type Running = Arc<Mutex<HashSet<String>>>;

/// One connection's life, until cancelled (`Ok(true)`) or a command fails (`Err`).
pub(crate) async fn session(
    ctx: &ConsumerContext,
    o: &Arc<RedisOptions>,
    consumer: &str,
) -> Result<bool, CamelError> {
    let (Some(stream), Some(group)) = (o.stream.as_deref(), o.group.as_deref()) else {
        return Err(CamelError::invalid_uri(
            o.uri.clone(),
            "stream and group are required",
        ));
    };
    // The reader blocks in XREADGROUP for `block`, so it waits without a response limit
    // and has a connection of its own; acknowledgements go through another.
    let mut reader = connect(o, None).await?;
    let acker = connect(o, Some(o.response_timeout)).await?;
    let created: redis::RedisResult<()> = redis::cmd("XGROUP")
        .arg("CREATE")
        .arg(stream)
        .arg(group)
        .arg(&o.group_start_id)
        .arg("MKSTREAM")
        .query_async(&mut reader)
        .await;
    if let Err(e) = created {
        if e.code() != Some("BUSYGROUP") {
            return Err(failed("XGROUP CREATE", e));
        }
    }
    ctx.health().set_healthy();
    tracing::info!(server = %o.server(), stream, group, consumer, max_inflight = o.max_inflight,
        "consuming from the Redis stream");
    let slots = Arc::new(Semaphore::new(o.max_inflight));
    let in_route: Running = Arc::default();
    let mut tasks = JoinSet::new();
    let mut phase = Phase::OwnBacklog("0".to_string());
    let mut next_claim = Instant::now();
    let mut claim_cursor = "0-0".to_string();
    let outcome = loop {
        while tasks.try_join_next().is_some() {}
        // Wait for a free slot; read no more entries than there are free slots.
        let free = tokio::select! {
            _ = ctx.cancelled() => break Ok(true),
            permit = slots.clone().acquire_owned() => {
                drop(permit);
                slots.available_permits().min(o.count).max(1)
            }
        };
        let read = if let Phase::OwnBacklog(after) = &phase {
            let read = read_group(&mut reader, group, consumer, stream, free, None, after).await;
            match read {
                Ok(entries) if entries.is_empty() => {
                    phase = Phase::New;
                    continue;
                }
                Ok(entries) => {
                    if let Some(last) = entries.last() {
                        phase = Phase::OwnBacklog(last.id.clone());
                    }
                    Ok((entries, true))
                }
                Err(e) => Err(e),
            }
        } else if Instant::now() >= next_claim {
            match auto_claim(&mut reader, o, group, consumer, stream, free, &claim_cursor).await {
                Ok(reply) => {
                    // A full pass over the pending list ends at 0-0: wait for the next one.
                    if reply.next_stream_id == "0-0" {
                        next_claim = Instant::now() + o.claim_interval;
                    }
                    claim_cursor = reply.next_stream_id;
                    Ok((reply.claimed, true))
                }
                Err(e) => Err(e),
            }
        } else {
            tokio::select! {
                _ = ctx.cancelled() => break Ok(true),
                r = read_group(&mut reader, group, consumer, stream, free, Some(o.block), ">") => {
                    r.map(|entries| (entries, false))
                }
            }
        };
        let (entries, claimed) = match read {
            Ok(read) => read,
            Err(e) => break Err(e),
        };
        for entry in entries {
            if !in_route
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(entry.id.clone())
            {
                // Claimed back while still in the route here: it finishes once.
                continue;
            }
            let Ok(permit) = slots.clone().try_acquire_owned() else {
                // Never more entries than free slots were read, and only this loop
                // takes slots: this is not reached. Left pending if it were.
                in_route
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&entry.id);
                continue;
            };
            let (ctx, o, in_route) = (ctx.clone(), o.clone(), in_route.clone());
            let mut acker = acker.clone();
            tasks.spawn(async move {
                let id = entry.id.clone();
                run_entry(&ctx, &o, &mut acker, entry, claimed).await;
                in_route
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&id);
                drop(permit);
            });
        }
    };
    // Entries in the route finish (and are acknowledged); what was read but not started
    // stays pending for this consumer's next start or another's claim.
    let drain = async { while tasks.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(Duration::from_secs(30), drain).await;
    outcome
}

/// Runs one entry through the route; XACK after a success.
async fn run_entry(
    ctx: &ConsumerContext,
    o: &RedisOptions,
    acker: &mut MultiplexedConnection,
    entry: StreamId,
    claimed: bool,
) {
    let (Some(stream), Some(group)) = (o.stream.as_deref(), o.group.as_deref()) else {
        return;
    };
    let exchange = entry_exchange(stream, &entry.id, &entry.map, claimed);
    match ctx.send(exchange).await {
        Ok(_) => {
            let acked: redis::RedisResult<i64> = redis::cmd("XACK")
                .arg(stream)
                .arg(group)
                .arg(&entry.id)
                .query_async(acker)
                .await;
            if let Err(e) = acked {
                tracing::warn!(stream, id = %entry.id, error = %e,
                    "XACK failed; the entry stays pending and runs again when claimed");
            }
        }
        Err(e) => {
            tracing::warn!(stream, id = %entry.id, error = %e, claim_min_idle = ?o.claim_min_idle,
                "route failed; the entry stays pending and is claimed again after claim_min_idle");
        }
    }
}

async fn read_group(
    reader: &mut MultiplexedConnection,
    group: &str,
    consumer: &str,
    stream: &str,
    count: usize,
    block: Option<Duration>,
    from: &str,
) -> Result<Vec<StreamId>, CamelError> {
    let mut cmd = redis::cmd("XREADGROUP");
    cmd.arg("GROUP")
        .arg(group)
        .arg(consumer)
        .arg("COUNT")
        .arg(count);
    if let Some(block) = block {
        cmd.arg("BLOCK").arg(block.as_millis().max(1) as u64);
    }
    cmd.arg("STREAMS").arg(stream).arg(from);
    let reply: Option<StreamReadReply> = cmd
        .query_async(reader)
        .await
        .map_err(|e| failed("XREADGROUP", e))?;
    Ok(reply
        .map(|r| r.keys.into_iter().flat_map(|k| k.ids).collect())
        .unwrap_or_default())
}

async fn auto_claim(
    reader: &mut MultiplexedConnection,
    o: &RedisOptions,
    group: &str,
    consumer: &str,
    stream: &str,
    count: usize,
    cursor: &str,
) -> Result<StreamAutoClaimReply, CamelError> {
    redis::cmd("XAUTOCLAIM")
        .arg(stream)
        .arg(group)
        .arg(consumer)
        .arg(o.claim_min_idle.as_millis() as u64)
        .arg(cursor)
        .arg("COUNT")
        .arg(count)
        .query_async(reader)
        .await
        .map_err(|e| failed("XAUTOCLAIM", e))
}
