//! The post-driver: drives released exchanges through the continuation, one at a time and
//! in release order, after their callers already got the acknowledgement.
//!
//! A failure here happens after the route's error handler is out of reach, so it is
//! logged, counted in `camel_resequencer_post_ack_failures_total{routeId, route}` and, when a
//! dead-letter processor is configured, handed to it.
//!
//! The backlog in front of it is bounded (see `backlog.rs`): each release's permit is
//! given back once it is done. A stop or swap that reaches its deadline cuts it off; what
//! it had not finished comes back as [`Undelivered`], for the lifecycle to count or hand
//! over.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use camel_api::{BoxProcessor, CamelError, Exchange, ExchangeId, ProcessorFuture};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, error, warn};

use super::backlog::Batch;
use super::names;
use super::policy::{DropReason, Release};
use super::shared::{Shared, Stat};

/// The processors a post-driver delivers to.
#[derive(Clone, Debug)]
pub(crate) struct Outlets {
    pub(crate) continuation: BoxProcessor,
    pub(crate) dead_letter: Option<BoxProcessor>,
}

/// What a post-driver cut off at a deadline did not finish, in release order.
#[derive(Debug, Default)]
pub(crate) struct Undelivered {
    /// Releases it never started.
    pub(crate) releases: Vec<Release>,
    /// The exchange whose continuation (or dead-letter) call a stop abandoned mid-way: it
    /// may be partly processed, so it is neither retried nor handed over, only reported.
    pub(crate) interrupted: Option<ExchangeId>,
}

/// Releases done before their permits go back to the actor (the rest return with the
/// batch): small against any useful backlog, large enough to keep the lock out of a fast
/// continuation's way.
const RETURN_PERMITS_EVERY: usize = 8;

/// How the lifecycle tells the post-driver that the deadline passed.
#[derive(Clone, Debug, Default)]
pub(crate) struct Cut {
    token: CancellationToken,
    detach: Arc<AtomicBool>,
}

impl Cut {
    /// A stop: the call in progress is abandoned (its exchange is lost) and nothing more
    /// is started.
    pub(crate) fn abandon(&self) {
        self.token.cancel();
    }

    /// A swap: the call in progress finishes on its own, on the old continuation (as any
    /// exchange in flight on the old pipeline does), and nothing more is started.
    pub(crate) fn detach(&self) {
        self.detach.store(true, Ordering::SeqCst);
        self.token.cancel();
    }

    fn is_cut(&self) -> bool {
        self.token.is_cancelled()
    }
}

/// How one call ended.
enum Called {
    Done(Result<Exchange, CamelError>),
    /// A stop's deadline came first: the call was dropped.
    Abandoned,
    /// A swap's deadline came first: the call goes on in a task of its own.
    Detached,
}

/// Awaits `call` unless the deadline comes first. A call that completed at once (most
/// synchronous continuations) costs no select.
async fn call(call: ProcessorFuture, id: ExchangeId, cut: &Cut, shared: &Arc<Shared>) -> Called {
    let mut call = match call {
        ProcessorFuture::Ready(Some(result)) => return Called::Done(result),
        pending => pending,
    };
    tokio::select! {
        biased;
        result = &mut call => Called::Done(result),
        () = cut.token.cancelled() => {
            if !cut.detach.load(Ordering::SeqCst) {
                return Called::Abandoned;
            }
            let shared = shared.clone();
            tokio::spawn(async move {
                if let Err(e) = call.await {
                    shared.post_ack_failures.increment(1);
                    warn!(route_id = %shared.route_id, exchange_id = %id, error = %e, "a call left to finish on the old continuation after a swap failed");
                }
            });
            Called::Detached
        }
    }
}

/// Runs until the actor's sender — the only one — is dropped and the channel is empty, or
/// until `cut`: then everything not started is returned, undelivered.
pub(crate) async fn run_post_driver(
    mut released: mpsc::UnboundedReceiver<Batch>,
    outlets: Outlets,
    shared: Arc<Shared>,
    cut: Cut,
) -> Undelivered {
    let mut drop_log = DropLog::default();
    let mut left = Undelivered::default();
    while let Some(mut batch) = released.recv().await {
        let mut releases = std::mem::take(&mut batch.releases).into_iter();
        // Counted once per batch: the counters share a cache line with the intake's.
        let mut delivered = 0;
        // Permits go back a few at a time: each return takes the semaphore's lock.
        let mut done = 0;
        while let Some(release) = releases.next() {
            if cut.is_cut() {
                left.releases.push(release);
                left.releases.extend(releases.by_ref());
                break;
            }
            let abandoned = match release {
                Release::Deliver(exchange) if exchange.is_stopped() => {
                    shared.count(Stat::SkippedStopped, 1);
                    None
                }
                Release::Deliver(exchange) => {
                    // A copy only when there is somewhere to send it after a failure;
                    // cloning shares the payload.
                    let spare = outlets.dead_letter.as_ref().map(|_| exchange.clone());
                    let id = exchange.id;
                    match call(outlets.continuation.process(exchange), id, &cut, &shared).await {
                        Called::Done(Ok(_)) => {
                            delivered += 1;
                            None
                        }
                        Called::Done(Err(e)) => failed(id, e, spare, &outlets, &shared, &cut).await,
                        Called::Abandoned => Some(id),
                        Called::Detached => None,
                    }
                }
                Release::Drop {
                    exchange,
                    reason,
                    dead_letter,
                } => {
                    shared.dropped(reason);
                    if dead_letter {
                        send_to_dead_letter(exchange, reason, None, &outlets, &shared, &cut).await
                    } else {
                        drop_log.record(&exchange, reason, &shared);
                        None
                    }
                }
            };
            if abandoned.is_some() {
                left.interrupted = abandoned;
            }
            done += 1;
            if done == RETURN_PERMITS_EVERY {
                batch.release(done);
                done = 0;
            }
        }
        shared.count(Stat::Delivered, delivered);
    }
    left
}

/// A continuation failure: logged, counted, and dead-lettered when possible. Returns the
/// id when a stop abandoned the dead-letter call.
async fn failed(
    id: ExchangeId,
    e: CamelError,
    spare: Option<Exchange>,
    outlets: &Outlets,
    shared: &Arc<Shared>,
    cut: &Cut,
) -> Option<ExchangeId> {
    shared.count(Stat::Failed, 1);
    shared.post_ack_failures.increment(1);
    warn!(route_id = %shared.route_id, step = %shared.step_name, exchange_id = %id, error = %e, "continuation failed after the resequencer acknowledged the exchange");
    let original = spare?;
    shared.dropped(DropReason::ContinuationFailed);
    send_to_dead_letter(
        original,
        DropReason::ContinuationFailed,
        Some(&e),
        outlets,
        shared,
        cut,
    )
    .await
}

/// Returns the id when a stop abandoned the dead-letter call.
async fn send_to_dead_letter(
    mut exchange: Exchange,
    reason: DropReason,
    failure: Option<&CamelError>,
    outlets: &Outlets,
    shared: &Arc<Shared>,
    cut: &Cut,
) -> Option<ExchangeId> {
    let Some(dead_letter) = &outlets.dead_letter else {
        error!(route_id = %shared.route_id, exchange_id = %exchange.id, %reason, "no dead-letter processor for a dead-letter release");
        return None;
    };
    exchange
        .properties
        .insert(names::DROP_REASON, reason.as_str());
    if let Some(e) = failure {
        exchange.properties.insert(names::FAILURE, e.to_string());
    }
    let id = exchange.id;
    match call(dead_letter.process(exchange), id, cut, shared).await {
        Called::Done(Ok(_)) => shared.count(Stat::DeadLettered, 1),
        Called::Done(Err(e)) => {
            error!(route_id = %shared.route_id, exchange_id = %id, %reason, error = %e, "dead-letter delivery failed; the exchange is lost");
        }
        Called::Abandoned => return Some(id),
        Called::Detached => {}
    }
    None
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
