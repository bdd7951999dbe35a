//! `scheduler:NAME` — a route source that fires after an initial delay and then again
//! `delay` after each exchange, like Camel's scheduler component.
//!
//! The difference from `timer:` is Camel's: the scheduler measures `delay` from the end of
//! one exchange to the start of the next (fixed delay), its defaults are 1 s before the
//! first firing and 500 ms between firings, and it adds metadata only when asked to.
//! Each firing sends an exchange with an empty body; with `include_metadata=true` it
//! carries the properties `CamelTimerName` and `CamelTimerFiredTime` and the header
//! `CamelMessageTimestamp` (both times in milliseconds since the Unix epoch).
//!
//! # URI options
//!
//! | Option | Default | Meaning |
//! |---|---|---|
//! | `initial_delay` | `1000` | Time before the first firing (`0` fires at once). |
//! | `delay` | `500` | Time between firings; must be more than 0. |
//! | `time_unit` | `milliseconds` | Unit of a bare number in `delay`/`initial_delay` (`nanoseconds` … `days`). |
//! | `repeat_count` | `0` | Stop after this many firings; `0` fires until the route stops. |
//! | `use_fixed_delay` | `true` | `false` keeps the rate instead, catching up after a slow exchange. |
//! | `include_metadata` | `false` | Add the name and fired time, as above. |
//!
//! ```
//! use camel_api::{BoxProcessor, Component, ConsumerContext, EndpointUri};
//! use camel_components::{BareContext, SchedulerComponent};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
//! let uri = EndpointUri::parse("scheduler:poll?initialDelay=0&delay=2s&repeatCount=3").unwrap();
//! let endpoint = SchedulerComponent.endpoint(uri, &BareContext).unwrap();
//! let ctx = ConsumerContext::for_pipeline("poller", BoxProcessor::identity());
//! endpoint.consumer().unwrap().run(ctx.clone()).await.unwrap();
//! assert_eq!(ctx.stats().completed(), 3);
//! # }
//! ```

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use camel_api::{
    parse_duration, BoxProcessor, CamelError, Component, ComponentContext, Consumer,
    ConsumerContext, Endpoint, EndpointUri, Exchange, Parameters,
};
use tokio::time::Instant;

use crate::timer::TIMER_NAME;

const OPTIONS: &[&str] = &[
    "delay",
    "initial_delay",
    "time_unit",
    "repeat_count",
    "use_fixed_delay",
    "include_metadata",
];
const UNITS: &[&str] = &[
    "nanoseconds",
    "microseconds",
    "milliseconds",
    "seconds",
    "minutes",
    "hours",
    "days",
];
const DEFAULT_DELAY: Duration = Duration::from_millis(500);
const DEFAULT_INITIAL_DELAY: Duration = Duration::from_millis(1000);

/// Exchange property with the time the scheduler fired (ms since the Unix epoch).
pub const TIMER_FIRED_TIME: &str = "CamelTimerFiredTime";
/// Header with the time the message was made (ms since the Unix epoch).
pub const MESSAGE_TIMESTAMP: &str = "CamelMessageTimestamp";

/// The `scheduler` component. Stateless: every endpoint owns its own schedule.
#[derive(Clone, Copy, Debug, Default)]
pub struct SchedulerComponent;

impl Component for SchedulerComponent {
    fn scheme(&self) -> &str {
        "scheduler"
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let name: Arc<str> = crate::endpoint_name(&uri, "scheduler:poll")?.into();
        let raw = uri.raw();
        let p = &mut uri.parameters;
        let unit = p.take_choice("time_unit", UNITS)?.unwrap_or("milliseconds");
        let delay = take_delay(p, &raw, "delay", unit)?.unwrap_or(DEFAULT_DELAY);
        if delay.is_zero() {
            return Err(CamelError::invalid_uri(
                raw,
                "parameter `delay` must be more than 0",
            ));
        }
        let initial_delay =
            take_delay(p, &raw, "initial_delay", unit)?.unwrap_or(DEFAULT_INITIAL_DELAY);
        let repeat_count = p.take::<u64>("repeat_count")?.unwrap_or(0);
        let fixed_delay = p.take_bool("use_fixed_delay")?.unwrap_or(true);
        let include_metadata = p.take_bool("include_metadata")?.unwrap_or(false);
        uri.parameters.finish(OPTIONS)?;
        Ok(Arc::new(SchedulerEndpoint {
            uri: raw,
            plan: Plan {
                name,
                delay,
                initial_delay,
                repeat_count,
                fixed_delay,
                include_metadata,
            },
        }))
    }
}

/// A bare number counts in `unit`; a number with its own unit (`2s`) keeps it.
fn take_delay(
    p: &mut Parameters,
    uri: &Arc<str>,
    name: &str,
    unit: &str,
) -> Result<Option<Duration>, CamelError> {
    let Some(text) = p.take_str(name) else {
        return Ok(None);
    };
    let bare = text.trim().parse::<u64>().ok().map(|n| match unit {
        "nanoseconds" => Duration::from_nanos(n),
        "microseconds" => Duration::from_micros(n),
        "seconds" => Duration::from_secs(n),
        "minutes" => Duration::from_secs(n.saturating_mul(60)),
        "hours" => Duration::from_secs(n.saturating_mul(3600)),
        "days" => Duration::from_secs(n.saturating_mul(86_400)),
        _ => Duration::from_millis(n),
    });
    bare.or_else(|| parse_duration(&text))
        .map(Some)
        .ok_or_else(|| {
            CamelError::invalid_uri(
                uri.clone(),
                format!(
                    "parameter `{name}` = `{text}` is not a duration (use 1000, 500ms, 2s, 1m)"
                ),
            )
        })
}

/// When and how often a scheduler fires.
#[derive(Clone, Debug)]
struct Plan {
    name: Arc<str>,
    delay: Duration,
    initial_delay: Duration,
    /// 0 = forever.
    repeat_count: u64,
    fixed_delay: bool,
    include_metadata: bool,
}

#[derive(Debug)]
struct SchedulerEndpoint {
    uri: Arc<str>,
    plan: Plan,
}

impl Endpoint for SchedulerEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Err(CamelError::invalid_uri(
            self.uri.clone(),
            "a scheduler can only start a route (`from`), not be sent to",
        ))
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        Ok(Box::new(SchedulerConsumer(self.plan.clone())))
    }
}

#[derive(Debug)]
struct SchedulerConsumer(Plan);

#[async_trait]
impl Consumer for SchedulerConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let plan = self.0;
        let mut due = Instant::now() + plan.initial_delay;
        let mut fired: u64 = 0;
        while plan.repeat_count == 0 || fired < plan.repeat_count {
            tokio::select! {
                biased;
                () = ctx.cancelled() => break,
                () = tokio::time::sleep_until(due) => {}
            }
            fired += 1;
            match ctx.send(exchange(&plan)).await {
                Ok(_) => {}
                Err(CamelError::Stopping(_)) => break,
                Err(error) => {
                    tracing::warn!(scheduler = %plan.name, %error, "scheduler exchange failed");
                }
            }
            // Fixed delay counts from the end of this exchange; fixed rate from the last
            // due time, so a slow exchange is followed at once by the firings it overran.
            due = if plan.fixed_delay {
                Instant::now() + plan.delay
            } else {
                due + plan.delay
            };
        }
        Ok(())
    }
}

fn exchange(plan: &Plan) -> Exchange {
    let mut exchange = Exchange::default();
    if plan.include_metadata {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        exchange = exchange.with_header(MESSAGE_TIMESTAMP, now_ms);
        exchange.properties.insert(TIMER_NAME, plan.name.clone());
        exchange.properties.insert(TIMER_FIRED_TIME, now_ms);
    }
    exchange
}

#[cfg(test)]
mod tests;
