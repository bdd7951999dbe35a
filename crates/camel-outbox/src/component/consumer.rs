//! The consumer: the relay, handing each message to the route's pipeline.
//!
//! It keeps trying: a database that is down when the route starts, a refused partition
//! change, or a relay that stops with an error makes it retry with backoff (reported
//! through the route's health, logged without flooding) until the relay runs again. A
//! connection lost while the relay runs is the partition workers' business: they take
//! their partitions again when the database is back.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use camel_api::{CamelError, Consumer, ConsumerContext, ConsumerHealth};
use tokio::time::Instant;

use super::convert::to_exchange;
use super::SharedOutbox;
use crate::backoff::Backoff;
use crate::store::RelayLock;
use crate::worker::Relay;

/// Delays between attempts to open the outbox or restart the relay.
const RETRY: Backoff = Backoff {
    min: Duration::from_millis(250),
    max: Duration::from_secs(10),
    jitter: true,
};

/// A database that has not answered a connection attempt after this long is reported
/// failing while the attempt goes on.
const SLOW_CONNECT: Duration = Duration::from_secs(1);

/// The same failure is logged again at most this often.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// The `from: outbox:NAME` consumer.
#[derive(Debug)]
pub(crate) struct OutboxConsumer {
    shared: Arc<SharedOutbox>,
    /// SQLite: held while the consumer lives, so a second relay on the file refuses to
    /// start (see ADR 0034).
    _lock: Option<RelayLock>,
}

impl OutboxConsumer {
    pub(crate) fn new(shared: Arc<SharedOutbox>, lock: Option<RelayLock>) -> Self {
        OutboxConsumer {
            shared,
            _lock: lock,
        }
    }
}

#[async_trait]
impl Consumer for OutboxConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let cancel = ctx.cancellation().clone();
        let mut log = FailureLog::new(ctx.route_id(), self.shared.name());
        let mut failures = 0u32;
        while !cancel.is_cancelled() {
            let opened = tokio::select! {
                opened = self.open(ctx.health()) => opened,
                _ = cancel.cancelled() => {
                    tracing::warn!(
                        route_id = %ctx.route_id(),
                        outbox = %self.shared.name(),
                        "stopped while waiting for the outbox database: the relay never ran, nothing was relayed (the messages stay in the outbox)"
                    );
                    return Ok(());
                }
            };
            let result = match opened {
                Ok(outbox) => {
                    if failures > 0 {
                        log.recovered();
                    }
                    ctx.health().set_healthy();
                    failures = 0;
                    let ctx = ctx.clone();
                    let name: Arc<str> = self.shared.name().into();
                    let health = ctx.health().clone();
                    let relay = Relay::new(outbox.clone(), move |message| {
                        let ctx = ctx.clone();
                        let exchange = to_exchange(&name, message);
                        async move { ctx.send(exchange).await.map(|_| ()) }
                    })
                    .reporting_to(health);
                    // A child token: a relay that fails cancels its own token to stop its
                    // other tasks, which must not stop the route.
                    relay
                        .run(cancel.child_token())
                        .await
                        .map_err(CamelError::from)
                }
                Err(e) => Err(e),
            };
            let error = match result {
                Ok(()) => continue,
                Err(e) if cancel.is_cancelled() => return Err(e),
                Err(e) => e,
            };
            failures += 1;
            ctx.health().set_failing(&error);
            log.failed(&error);
            tokio::select! {
                _ = cancel.cancelled() => {}
                _ = tokio::time::sleep(RETRY.delay(failures)) => {}
            }
        }
        Ok(())
    }
}

impl OutboxConsumer {
    /// Opens the outbox, failing as soon as a direct connection to its database fails
    /// rather than when the pool gives up (30 s by default), so the route reports
    /// failing at once; a database that does not answer within [`SLOW_CONNECT`] is
    /// reported failing while the attempt goes on.
    async fn open(&self, health: &ConsumerHealth) -> Result<crate::Outbox, CamelError> {
        let probe = async {
            let datasource = self.shared.source.datasource().await?;
            let attempt = datasource.probe();
            tokio::pin!(attempt);
            tokio::select! {
                reached = &mut attempt => reached?,
                _ = tokio::time::sleep(SLOW_CONNECT) => {
                    health.set_failing(format_args!(
                        "no answer yet from the outbox database {}",
                        datasource.describe()
                    ));
                    (&mut attempt).await?
                }
            }
            // Reachable: the opening decides.
            std::future::pending::<Result<crate::Outbox, CamelError>>().await
        };
        tokio::select! {
            opened = self.shared.outbox() => opened,
            failed = probe => failed,
        }
    }
}

/// Logs a failure when it is new (or changed) and then at most every [`LOG_EVERY`].
struct FailureLog {
    route_id: String,
    outbox: String,
    last: Option<(String, Instant)>,
    suppressed: u64,
}

impl FailureLog {
    fn new(route_id: &str, outbox: &str) -> Self {
        FailureLog {
            route_id: route_id.to_string(),
            outbox: outbox.to_string(),
            last: None,
            suppressed: 0,
        }
    }

    /// Records a failure; true when it was logged.
    fn failed(&mut self, error: &CamelError) -> bool {
        let text = error.to_string();
        let now = Instant::now();
        let due = match &self.last {
            Some((last, at)) => *last != text || now.duration_since(*at) >= LOG_EVERY,
            None => true,
        };
        if !due {
            self.suppressed += 1;
            return false;
        }
        tracing::error!(
            route_id = %self.route_id,
            outbox = %self.outbox,
            error = %text,
            repeated = self.suppressed,
            "the outbox relay cannot run; retrying with backoff"
        );
        self.suppressed = 0;
        self.last = Some((text, now));
        true
    }

    fn recovered(&mut self) {
        tracing::info!(route_id = %self.route_id, outbox = %self.outbox, "the outbox relay runs again");
        self.last = None;
        self.suppressed = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_repeated_failure_is_logged_once_a_minute_and_a_new_one_at_once() {
        let mut log = FailureLog::new("relay", "orders");
        let down = CamelError::processor("database down");
        assert!(log.failed(&down), "the first failure is logged");
        for _ in 0..100 {
            tokio::time::advance(Duration::from_millis(500)).await;
            assert!(!log.failed(&down), "logged again within a minute");
        }
        tokio::time::advance(LOG_EVERY).await;
        assert!(log.failed(&down), "logged again after a minute");
        assert!(
            log.failed(&CamelError::processor("password refused")),
            "a different failure is logged at once"
        );
        log.recovered();
        assert!(log.failed(&down), "after a recovery, a failure is new");
    }

    #[test]
    fn retries_back_off_to_ten_seconds() {
        assert!(RETRY.delay(1) <= Duration::from_millis(250));
        assert!(RETRY.delay(20) >= Duration::from_secs(5));
        assert!(RETRY.delay(20) <= Duration::from_secs(10));
    }
}
