//! The pub/sub consumer: SUBSCRIBE or PSUBSCRIBE on a connection of its own.
//!
//! Redis keeps nothing for a subscriber: a message is delivered once, to whoever is
//! subscribed at that moment, so this consumer is at most once. It reads every message
//! as it arrives (the client library queues what is not read, without a bound) and runs
//! at most `max_inflight` at once; a message arriving with every slot taken is dropped
//! and counted in a warning, since holding it would only move the unbounded queue here.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use camel_api::{CamelError, ConsumerContext};
use futures::StreamExt;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::connection::{failed, pubsub};
use crate::message::{body_of, CHANNEL_HEADER, PATTERN_HEADER};
use crate::options::{ConsumerMode, RedisOptions};

/// One subscription's life, until cancelled (`Ok(true)`) or the connection ends.
pub(crate) async fn session(
    ctx: &ConsumerContext,
    o: &RedisOptions,
    mode: &ConsumerMode,
    dropped: &AtomicU64,
) -> Result<bool, CamelError> {
    let mut connection = pubsub(o).await?;
    for channel in &o.channels {
        match mode {
            ConsumerMode::PSubscribe => connection.psubscribe(channel).await,
            _ => connection.subscribe(channel).await,
        }
        .map_err(|e| failed("SUBSCRIBE", e))?;
    }
    ctx.health().set_healthy();
    tracing::info!(server = %o.server(), channels = ?o.channels, "consuming from Redis pub/sub");
    let slots = Arc::new(Semaphore::new(o.max_inflight));
    let mut running = JoinSet::new();
    let mut messages = connection.on_message();
    let cancelled = loop {
        let message = tokio::select! {
            _ = ctx.cancelled() => break true,
            m = messages.next() => m,
        };
        while running.try_join_next().is_some() {}
        let Some(message) = message else {
            break false;
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            let n = dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if n.is_power_of_two() {
                tracing::warn!(server = %o.server(), dropped_total = n,
                    "Redis pub/sub message dropped: max_inflight messages already in the route");
            }
            continue;
        };
        let mut exchange = camel_api::Exchange::new(body_of(message.get_payload_bytes()))
            .with_header(CHANNEL_HEADER, message.get_channel_name());
        if let Ok(pattern) = message.get_pattern::<String>() {
            exchange = exchange.with_header(PATTERN_HEADER, pattern);
        }
        let ctx = ctx.clone();
        running.spawn(async move {
            if let Err(e) = ctx.send(exchange).await {
                tracing::warn!(error = %e, "route failed on a Redis pub/sub message; Redis keeps no copy");
            }
            drop(permit);
        });
    };
    drop(messages);
    let drain = async { while running.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(Duration::from_secs(30), drain).await;
    Ok(cancelled)
}
