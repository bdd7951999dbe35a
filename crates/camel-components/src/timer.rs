//! `timer:NAME` — a route source that fires on a schedule.
//!
//! Each firing sends a new exchange (empty body) through the route, with the headers
//! `CamelTimerCounter` (1 for the first firing) and `CamelTimerFiredTime` (milliseconds
//! since the Unix epoch), and the property `CamelTimerName`. With `include_metadata=true`
//! it also carries Camel's metadata properties `CamelTimerCounter`, `CamelTimerPeriod`
//! (ms) and `CamelTimerFiredTime`, and the header `CamelMessageTimestamp`. A timer only
//! consumes: using it in `to` is an error.
//!
//! The next firing waits for the route to finish the current exchange. With the default
//! fixed delay a slow exchange pushes the schedule back; with `fixed_rate` the timer
//! catches up on the firings it missed, one after the other.
//!
//! # URI options
//!
//! | Option | Default | Meaning |
//! |---|---|---|
//! | `period` | `1000` (ms) | Time between firings. `0` fires once. |
//! | `delay` | `1000` (ms) | Time before the first firing. |
//! | `repeat_count` | `0` | Stop after this many firings; `0` fires until the route stops. |
//! | `fixed_rate` | `false` | Keep the rate by catching up after a slow exchange, instead of keeping the delay. |
//! | `include_metadata` | `false` | Add Camel's metadata properties and `CamelMessageTimestamp`, as above. |
//!
//! ```
//! use camel_api::{BoxProcessor, Component, ConsumerContext, EndpointUri};
//! use camel_components::{BareContext, TimerComponent};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
//! let uri = EndpointUri::parse("timer:tick?period=10&delay=0&repeatCount=3").unwrap();
//! let endpoint = TimerComponent.endpoint(uri, &BareContext).unwrap();
//! let ctx = ConsumerContext::for_pipeline("ticker", BoxProcessor::identity());
//! // With a repeat count the consumer returns by itself after the last firing.
//! endpoint.consumer().unwrap().run(ctx.clone()).await.unwrap();
//! assert_eq!(ctx.stats().completed(), 3);
//! # }
//! ```

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use camel_api::{
    names, BoxProcessor, CamelError, Component, ComponentContext, Consumer, ConsumerContext,
    Endpoint, EndpointUri, Exchange,
};
use tokio::time::{Instant, MissedTickBehavior};

const OPTIONS: &[&str] = &[
    "period",
    "delay",
    "repeat_count",
    "fixed_rate",
    "include_metadata",
];
const DEFAULT_PERIOD: Duration = Duration::from_millis(1000);
const DEFAULT_DELAY: Duration = Duration::from_millis(1000);

/// Exchange property with the name of the timer that fired.
pub const TIMER_NAME: &str = "CamelTimerName";
/// Exchange property with the timer's period in milliseconds (with `include_metadata`).
pub const TIMER_PERIOD: &str = "CamelTimerPeriod";

/// The `timer` component. Stateless: every endpoint owns its own schedule.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimerComponent;

impl Component for TimerComponent {
    fn scheme(&self) -> &str {
        "timer"
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let name: Arc<str> = crate::endpoint_name(&uri, "timer:tick")?.into();
        let p = &mut uri.parameters;
        let period = p.take_duration("period")?.unwrap_or(DEFAULT_PERIOD);
        let delay = p.take_duration("delay")?.unwrap_or(DEFAULT_DELAY);
        let repeat_count = p.take::<u64>("repeat_count")?.unwrap_or(0);
        let fixed_rate = p.take_bool("fixed_rate")?.unwrap_or(false);
        let include_metadata = p.take_bool("include_metadata")?.unwrap_or(false);
        let raw = uri.raw();
        uri.parameters.finish(OPTIONS)?;
        Ok(Arc::new(TimerEndpoint {
            uri: raw,
            schedule: Schedule {
                name,
                period,
                delay,
                // A zero period means "once", as in Camel.
                repeat_count: if period.is_zero() { 1 } else { repeat_count },
                fixed_rate,
                include_metadata,
            },
        }))
    }
}

/// When and how often a timer fires.
#[derive(Clone, Debug)]
struct Schedule {
    name: Arc<str>,
    period: Duration,
    delay: Duration,
    /// 0 = forever.
    repeat_count: u64,
    fixed_rate: bool,
    include_metadata: bool,
}

#[derive(Debug)]
struct TimerEndpoint {
    uri: Arc<str>,
    schedule: Schedule,
}

impl Endpoint for TimerEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Err(CamelError::invalid_uri(
            self.uri.clone(),
            "a timer can only start a route (`from`), not be sent to",
        ))
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        Ok(Box::new(TimerConsumer(self.schedule.clone())))
    }
}

#[derive(Debug)]
struct TimerConsumer(Schedule);

#[async_trait]
impl Consumer for TimerConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let s = self.0;
        // `interval_at` would panic on a zero period; such a timer fires once anyway.
        let mut ticks = tokio::time::interval_at(
            Instant::now() + s.delay,
            s.period.max(Duration::from_millis(1)),
        );
        ticks.set_missed_tick_behavior(if s.fixed_rate {
            MissedTickBehavior::Burst
        } else {
            MissedTickBehavior::Delay
        });
        let mut counter: u64 = 0;
        while s.repeat_count == 0 || counter < s.repeat_count {
            tokio::select! {
                biased;
                () = ctx.cancelled() => break,
                _ = ticks.tick() => {}
            }
            counter += 1;
            let exchange = fired(&s, counter);
            match ctx.send(exchange).await {
                Ok(_) => {}
                Err(CamelError::Stopping(_)) => break,
                Err(error) => {
                    tracing::warn!(timer = %s.name, counter, %error, "timer exchange failed");
                }
            }
        }
        Ok(())
    }
}

/// The exchange of firing number `counter`.
fn fired(s: &Schedule, counter: u64) -> Exchange {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    let mut exchange = Exchange::default()
        .with_header(names::TIMER_COUNTER, counter)
        .with_header(names::TIMER_FIRED_TIME, now_ms);
    exchange.properties.insert(TIMER_NAME, s.name.clone());
    if s.include_metadata {
        // Where Camel puts them: properties, plus the message timestamp header.
        let period_ms = i64::try_from(s.period.as_millis()).unwrap_or(i64::MAX);
        exchange.properties.insert(names::TIMER_COUNTER, counter);
        exchange.properties.insert(TIMER_PERIOD, period_ms);
        exchange.properties.insert(names::TIMER_FIRED_TIME, now_ms);
        exchange = exchange.with_header(crate::scheduler::MESSAGE_TIMESTAMP, now_ms);
    }
    exchange
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use camel_api::Value;

    use super::*;
    use crate::testing::endpoint;

    /// (milliseconds since the test started, counter header) of each firing.
    type Firings = Arc<Mutex<Vec<(u128, i64)>>>;

    /// Records the instant (relative to `start`) and counter of every firing.
    fn recorder(start: Instant) -> (BoxProcessor, Firings) {
        let seen: Firings = Arc::default();
        let sink = seen.clone();
        let pipeline = BoxProcessor::sync(move |ex: Exchange| {
            let counter = ex.header(names::TIMER_COUNTER).and_then(Value::as_i64);
            sink.lock()
                .unwrap()
                .push((start.elapsed().as_millis(), counter.unwrap_or(-1)));
            Ok(ex)
        });
        (pipeline, seen)
    }

    async fn run(uri: &str, pipeline: BoxProcessor) -> ConsumerContext {
        let ep = endpoint(&TimerComponent, uri).unwrap();
        let ctx = ConsumerContext::for_pipeline("t", pipeline);
        ep.consumer().unwrap().run(ctx.clone()).await.unwrap();
        ctx
    }

    #[tokio::test(start_paused = true)]
    async fn fires_after_the_delay_then_every_period_with_a_counter() {
        let start = Instant::now();
        let (pipeline, seen) = recorder(start);
        run("timer:t?delay=500&period=2s&repeatCount=3", pipeline).await;
        assert_eq!(*seen.lock().unwrap(), [(500, 1), (2500, 2), (4500, 3)]);
    }

    #[tokio::test(start_paused = true)]
    async fn defaults_are_one_second() {
        let start = Instant::now();
        let (pipeline, seen) = recorder(start);
        run("timer:t?repeatCount=2", pipeline).await;
        assert_eq!(*seen.lock().unwrap(), [(1000, 1), (2000, 2)]);
    }

    #[tokio::test(start_paused = true)]
    async fn fired_time_is_wall_clock_milliseconds() {
        let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        let seen: Arc<Mutex<Option<Exchange>>> = Arc::default();
        let sink = seen.clone();
        let pipeline = BoxProcessor::sync(move |ex: Exchange| {
            *sink.lock().unwrap() = Some(ex.clone());
            Ok(ex)
        });
        run("timer:wall?delay=0&repeatCount=1", pipeline).await;
        let ex = seen.lock().unwrap().take().unwrap();
        let fired = ex.header(names::TIMER_FIRED_TIME).and_then(Value::as_i64);
        let after = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        let fired = fired.unwrap();
        assert!(fired >= before.as_millis() as i64 && fired <= after.as_millis() as i64);
        assert_eq!(ex.property(TIMER_NAME).unwrap().to_string(), "wall");
    }

    fn slow(start: Instant) -> (BoxProcessor, Firings) {
        // The first exchange takes 350 ms, longer than three periods.
        let (record, seen) = recorder(start);
        let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
            let record = record.clone();
            async move {
                let ex = record.process(ex).await?;
                if ex.header(names::TIMER_COUNTER).and_then(Value::as_i64) == Some(1) {
                    tokio::time::sleep(Duration::from_millis(350)).await;
                }
                Ok(ex)
            }
        });
        (pipeline, seen)
    }

    #[tokio::test(start_paused = true)]
    async fn fixed_delay_pushes_the_schedule_back_after_a_slow_exchange() {
        let start = Instant::now();
        let (pipeline, seen) = slow(start);
        run("timer:t?delay=0&period=100&repeatCount=3", pipeline).await;
        assert_eq!(*seen.lock().unwrap(), [(0, 1), (350, 2), (450, 3)]);
    }

    #[tokio::test(start_paused = true)]
    async fn fixed_rate_catches_up_after_a_slow_exchange() {
        let start = Instant::now();
        let (pipeline, seen) = slow(start);
        run(
            "timer:t?delay=0&period=100&repeatCount=5&fixedRate=true",
            pipeline,
        )
        .await;
        assert_eq!(
            *seen.lock().unwrap(),
            [(0, 1), (350, 2), (350, 3), (350, 4), (400, 5)]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn runs_until_cancelled_without_a_repeat_count() {
        let ep = endpoint(&TimerComponent, "timer:forever?period=10&delay=0").unwrap();
        let ctx = ConsumerContext::for_pipeline("t", BoxProcessor::identity());
        let task = tokio::spawn(ep.consumer().unwrap().run(ctx.clone()));
        ctx.stats().wait_for(100).await;
        ctx.cancellation().cancel();
        task.await.unwrap().unwrap();
        assert!(ctx.stats().completed() >= 100);
    }

    #[tokio::test(start_paused = true)]
    async fn a_zero_period_fires_once() {
        let start = Instant::now();
        let (pipeline, seen) = recorder(start);
        run("timer:once?period=0&delay=0", pipeline).await;
        assert_eq!(*seen.lock().unwrap(), [(0, 1)]);
    }

    #[tokio::test(start_paused = true)]
    async fn include_metadata_adds_camels_properties_and_timestamp() {
        let seen: Arc<Mutex<Vec<Exchange>>> = Arc::default();
        let sink = seen.clone();
        let pipeline = BoxProcessor::sync(move |ex: Exchange| {
            sink.lock().unwrap().push(ex.clone());
            Ok(ex)
        });
        run(
            "timer:meta?delay=0&period=250&repeatCount=2&includeMetadata=true",
            pipeline,
        )
        .await;
        let int = |v: Option<&Value>| v.and_then(Value::as_i64);
        {
            let seen = seen.lock().unwrap();
            let second = &seen[1];
            assert_eq!(int(second.property(names::TIMER_COUNTER)), Some(2));
            assert_eq!(int(second.header(names::TIMER_COUNTER)), Some(2));
            assert_eq!(int(second.property(TIMER_PERIOD)), Some(250));
            assert_eq!(second.property(TIMER_NAME).unwrap().to_string(), "meta");
            let fired = int(second.property(names::TIMER_FIRED_TIME)).unwrap();
            assert_eq!(int(second.header(names::TIMER_FIRED_TIME)), Some(fired));
            assert_eq!(
                int(second.header(crate::scheduler::MESSAGE_TIMESTAMP)),
                Some(fired)
            );
        }

        // Without it: the counter and fired-time headers only.
        let plain: Arc<Mutex<Option<Exchange>>> = Arc::default();
        let sink = plain.clone();
        let pipeline = BoxProcessor::sync(move |ex: Exchange| {
            *sink.lock().unwrap() = Some(ex.clone());
            Ok(ex)
        });
        run("timer:plain?delay=0&repeatCount=1", pipeline).await;
        let ex = plain.lock().unwrap().take().unwrap();
        assert_eq!(int(ex.header(names::TIMER_COUNTER)), Some(1));
        assert!(ex.property(TIMER_PERIOD).is_none());
        assert!(ex.property(names::TIMER_COUNTER).is_none());
        assert!(ex.header(crate::scheduler::MESSAGE_TIMESTAMP).is_none());
    }

    #[test]
    fn cannot_be_sent_to_and_rejects_unknown_options() {
        let ep = endpoint(&TimerComponent, "timer:t").unwrap();
        assert!(ep.producer().is_err());
        let err = endpoint(&TimerComponent, "timer:t?peroid=5")
            .unwrap_err()
            .to_string();
        assert!(err.contains("did you mean `period`"), "{err}");
    }
}
