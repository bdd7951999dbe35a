//! The cron consumer: wait for the next fire time on the wall clock, send, repeat.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use camel_api::{CamelError, Consumer, ConsumerContext, Exchange};
use chrono::{DateTime, Utc};

use super::clock::{epoch_millis, utc_now};
use super::{CronExpression, WallClock};

/// The longest single sleep: the wall clock is read again after it, so a clock step (NTP,
/// a resumed VM) delays a firing by at most this much.
const MAX_SLEEP: Duration = Duration::from_secs(60);

/// What a cron endpoint fires on.
#[derive(Clone, Debug)]
pub(super) struct Trigger {
    pub(super) name: Arc<str>,
    pub(super) group: Arc<str>,
    pub(super) expression: CronExpression,
    /// The first firing is the first one at least this long after the route started.
    pub(super) start_delay: Duration,
}

#[derive(Debug)]
pub(super) struct CronConsumer {
    pub(super) trigger: Trigger,
    pub(super) clock: Arc<dyn WallClock>,
}

#[async_trait]
impl Consumer for CronConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let Self { trigger, clock } = *self;
        let start = utc_now(&*clock) + trigger.start_delay;
        let mut previous: Option<DateTime<Utc>> = None;
        let mut due = trigger.expression.next_after(start);
        while let Some(scheduled) = due {
            if !sleep_until(&*clock, scheduled, &ctx).await {
                break;
            }
            let fired = utc_now(&*clock);
            let following = trigger.expression.next_after(scheduled);
            let exchange = fired_exchange(&trigger, scheduled, fired, previous, following);
            match ctx.send(exchange).await {
                Ok(_) => {}
                Err(CamelError::Stopping(_)) => break,
                Err(error) => {
                    tracing::warn!(trigger = %trigger.name, %error, "cron exchange failed");
                }
            }
            previous = Some(scheduled);
            due = catch_up(&trigger.expression, following, utc_now(&*clock));
        }
        Ok(())
    }
}

/// The next firing after one that ended at `now`: `following` if it is still ahead;
/// otherwise the firings missed while the exchange ran (or the route was paused) fold
/// into one, the latest, which is due at once.
fn catch_up(
    expression: &CronExpression,
    following: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    match following {
        Some(next) if next <= now => expression.last_at_or_before(now).or(Some(next)),
        other => other,
    }
}

/// Sleeps until the wall clock reads `at`; false when cancelled first.
pub(crate) async fn sleep_until(
    clock: &dyn WallClock,
    at: DateTime<Utc>,
    ctx: &ConsumerContext,
) -> bool {
    loop {
        if ctx.is_cancelled() {
            return false;
        }
        let now = utc_now(clock);
        let Ok(wait) = (at - now).to_std() else {
            return true; // `at` is not ahead
        };
        if wait.is_zero() {
            return true;
        }
        tokio::select! {
            biased;
            () = ctx.cancelled() => return false,
            () = tokio::time::sleep(wait.min(MAX_SLEEP)) => {}
        }
    }
}

/// The exchange of one firing, with the headers Camel's Quartz consumer sets.
fn fired_exchange(
    trigger: &Trigger,
    scheduled: DateTime<Utc>,
    fired: DateTime<Utc>,
    previous: Option<DateTime<Utc>>,
    next: Option<DateTime<Utc>>,
) -> Exchange {
    let mut exchange = Exchange::default()
        .with_header("fireTime", epoch_millis(fired))
        .with_header("scheduledFireTime", epoch_millis(scheduled))
        .with_header("triggerName", trigger.name.clone())
        .with_header("triggerGroup", trigger.group.clone());
    if let Some(previous) = previous {
        exchange = exchange.with_header("previousFireTime", epoch_millis(previous));
    }
    if let Some(next) = next {
        exchange = exchange.with_header("nextFireTime", epoch_millis(next));
    }
    exchange
}
