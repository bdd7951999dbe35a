//! The post-driver: drives released exchanges through the continuation, one at a time and
//! in release order, after their callers already got the acknowledgement.
//!
//! A failure here happens after the route's error handler is out of reach, so it is
//! logged, counted in `camel_resequencer_post_ack_failures_total{route}` and, when a
//! dead-letter processor is configured, handed to it.

use std::sync::Arc;
use std::time::Duration;

use camel_api::{BoxProcessor, CamelError, Exchange, ExchangeId};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::{debug, error, warn};

use super::names;
use super::policy::{DropReason, Release};
use super::shared::{Shared, Stat};

/// The processors a post-driver delivers to.
#[derive(Clone, Debug)]
pub(crate) struct Outlets {
    pub(crate) continuation: BoxProcessor,
    pub(crate) dead_letter: Option<BoxProcessor>,
}

/// Runs until the actor's sender — the only one — is dropped and the channel is empty.
pub(crate) async fn run_post_driver(
    mut released: mpsc::Receiver<Vec<Release>>,
    outlets: Outlets,
    shared: Arc<Shared>,
) {
    let mut drop_log = DropLog::default();
    while let Some(batch) = released.recv().await {
        // Counted once per batch: the counters share a cache line with the intake's.
        let mut delivered = 0;
        for release in batch {
            match release {
                Release::Deliver(exchange) if exchange.is_stopped() => {
                    shared.count(Stat::SkippedStopped, 1);
                }
                Release::Deliver(exchange) => {
                    // A copy only when there is somewhere to send it after a failure;
                    // cloning shares the payload.
                    let spare = outlets.dead_letter.as_ref().map(|_| exchange.clone());
                    let id = exchange.id;
                    match outlets.continuation.process(exchange).await {
                        Ok(_) => delivered += 1,
                        Err(e) => failed(id, e, spare, &outlets, &shared).await,
                    }
                }
                Release::Drop {
                    exchange,
                    reason,
                    dead_letter,
                } => {
                    shared.dropped(reason);
                    if dead_letter {
                        send_to_dead_letter(exchange, reason, None, &outlets, &shared).await;
                    } else {
                        drop_log.record(&exchange, reason, &shared);
                    }
                }
            }
        }
        shared.count(Stat::Delivered, delivered);
    }
}

/// A continuation failure: logged, counted, and dead-lettered when possible.
async fn failed(
    id: ExchangeId,
    e: CamelError,
    spare: Option<Exchange>,
    outlets: &Outlets,
    shared: &Shared,
) {
    shared.count(Stat::Failed, 1);
    shared.post_ack_failures.increment(1);
    warn!(route_id = %shared.route_id, step = %shared.step_name, exchange_id = %id, error = %e, "continuation failed after the resequencer acknowledged the exchange");
    if let Some(original) = spare {
        shared.dropped(DropReason::ContinuationFailed);
        send_to_dead_letter(
            original,
            DropReason::ContinuationFailed,
            Some(&e),
            outlets,
            shared,
        )
        .await;
    }
}

async fn send_to_dead_letter(
    mut exchange: Exchange,
    reason: DropReason,
    failure: Option<&CamelError>,
    outlets: &Outlets,
    shared: &Shared,
) {
    let Some(dead_letter) = &outlets.dead_letter else {
        error!(route_id = %shared.route_id, exchange_id = %exchange.id, %reason, "no dead-letter processor for a dead-letter release");
        return;
    };
    exchange
        .properties
        .insert(names::DROP_REASON, reason.as_str());
    if let Some(e) = failure {
        exchange.properties.insert(names::FAILURE, e.to_string());
    }
    let id = exchange.id;
    match dead_letter.process(exchange).await {
        Ok(_) => shared.count(Stat::DeadLettered, 1),
        Err(e) => {
            error!(route_id = %shared.route_id, exchange_id = %id, %reason, error = %e, "dead-letter delivery failed; the exchange is lost");
        }
    }
}

/// Losing data (a gap or a full resequencer) is worth a warning, but not one per exchange
/// under sustained overload: at most one per interval, with the count since the last.
const DROP_WARN_INTERVAL: Duration = Duration::from_secs(10);

#[derive(Default)]
struct DropLog {
    last_warn: Option<Instant>,
    since_last: u64,
}

impl DropLog {
    fn record(&mut self, exchange: &Exchange, reason: DropReason, shared: &Shared) {
        if matches!(reason, DropReason::Duplicate | DropReason::Invalid) {
            debug!(route_id = %shared.route_id, exchange_id = %exchange.id, %reason, "resequencer dropped an exchange");
            return;
        }
        self.since_last += 1;
        let now = Instant::now();
        if self
            .last_warn
            .is_some_and(|t| now.duration_since(t) < DROP_WARN_INTERVAL)
        {
            return;
        }
        warn!(route_id = %shared.route_id, exchange_id = %exchange.id, %reason, dropped = self.since_last, "resequencer dropped exchanges (see camel_resequencer_dropped_total)");
        self.last_warn = Some(now);
        self.since_last = 0;
    }
}
