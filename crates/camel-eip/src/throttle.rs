//! Throttle: at most N exchanges per time period go on (per correlation key); the others
//! wait for a later period, or fail with `reject_execution` (Camel's `TotalRequests`
//! mode).
//!
//! Periods are consecutive fixed windows of `period`: an exchange takes a slot in the
//! current window, or in the first later window with room, and waits until that window
//! opens. The limit is the expression's value for that exchange, so a header can change it
//! at run time. Waiting is a timer, never a blocked thread.
//!
//! As a tower layer, [`ThrottleLayer`] holds exchanges back before the inner service.
//!
//! ```
//! use std::time::Duration;
//! use camel_api::{BoxProcessor, Exchange};
//! use camel_eip::throttle::{Throttle, ThrottleOptions};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
//! let max = camel_language::constant("2");
//! let throttle = Throttle::new(ThrottleOptions::new(max, Duration::from_secs(1)), BoxProcessor::identity());
//! let start = tokio::time::Instant::now();
//! for _ in 0..3 {
//!     throttle.process(Exchange::new("x")).await.unwrap();
//! }
//! assert_eq!(start.elapsed(), Duration::from_secs(1)); // the third waited for the next second
//! # }
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use camel_api::{BoxExpression, BoxProcessor, CamelError, Exchange, Process, ProcessorFuture};
use tokio::time::Instant;
use tower::{Layer, Service};

use crate::layer::EipFuture;

/// Keys kept before windows that have passed are pruned.
const PRUNE_ABOVE: usize = 10_000;

/// How a throttle limits.
#[derive(Clone, Debug)]
pub struct ThrottleOptions {
    /// The maximum number of exchanges per period (evaluated per exchange).
    pub maximum: BoxExpression,
    /// The period.
    pub period: Duration,
    /// Exchanges with the same key share a limit; `None`: all share one.
    pub correlation: Option<BoxExpression>,
    /// Fail an exchange over the limit instead of holding it.
    pub reject: bool,
}

impl ThrottleOptions {
    /// At most `maximum` per `period`, one limit for all, holding back.
    pub fn new(maximum: BoxExpression, period: Duration) -> Self {
        ThrottleOptions {
            maximum,
            period,
            correlation: None,
            reject: false,
        }
    }
}

#[derive(Debug)]
struct Window {
    start: Instant,
    used: u64,
}

#[derive(Debug)]
struct State {
    options: ThrottleOptions,
    windows: Mutex<HashMap<String, Window>>,
}

impl State {
    /// Takes a slot for `ex`: `None` to go on now, or the instant its window opens.
    fn reserve(&self, ex: &Exchange) -> Result<Option<Instant>, CamelError> {
        let o = &self.options;
        let value = o.maximum.evaluate(ex)?;
        let max = value.as_i64().filter(|n| *n > 0).ok_or_else(|| {
            CamelError::processor(format!(
                "throttle: the maximum number of requests must be a positive whole number, got `{value}`"
            ))
        })? as u64;
        let key = match &o.correlation {
            Some(e) => e.evaluate(ex)?.to_string(),
            None => String::new(),
        };
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        if windows.len() > PRUNE_ABOVE {
            windows.retain(|_, w| w.start + o.period > now);
        }
        let w = windows.entry(key).or_insert(Window {
            start: now,
            used: 0,
        });
        if now >= w.start + o.period {
            *w = Window {
                start: now,
                used: 0,
            };
        }
        let at = if w.used < max {
            w.used += 1;
            w.start
        } else if o.reject {
            return Err(CamelError::Overloaded(
                format!(
                    "throttle: more than {max} exchanges within {} ms",
                    o.period.as_millis()
                )
                .into(),
            ));
        } else {
            w.start += o.period;
            w.used = 1;
            w.start
        };
        Ok((at > now).then_some(at))
    }
}

/// Holds exchanges back before `S`.
#[derive(Clone, Debug)]
pub struct Throttle<S = BoxProcessor> {
    state: Arc<State>,
    inner: S,
}

impl<S> Throttle<S> {
    /// A throttle in front of `inner`.
    pub fn new(options: ThrottleOptions, inner: S) -> Self {
        Throttle {
            state: Arc::new(State {
                options,
                windows: Mutex::new(HashMap::new()),
            }),
            inner,
        }
    }
}

impl Throttle<BoxProcessor> {
    /// The throttle as a route step.
    pub fn into_processor(self) -> BoxProcessor {
        BoxProcessor::new(self).named("throttle")
    }

    /// Handles one exchange (the route step's path).
    pub fn process(&self, ex: Exchange) -> ProcessorFuture {
        Process::process(self, ex)
    }
}

impl Process for Throttle<BoxProcessor> {
    fn process(&self, ex: Exchange) -> ProcessorFuture {
        match self.state.reserve(&ex) {
            Err(e) => ProcessorFuture::ready(Err(e)),
            Ok(None) => self.inner.process(ex),
            Ok(Some(at)) => process_at(at, &self.inner, ex),
        }
    }
}

impl<S> Service<Exchange> for Throttle<S>
where
    S: Service<Exchange, Response = Exchange, Error = CamelError> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Exchange;
    type Error = CamelError;
    type Future = EipFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), CamelError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, ex: Exchange) -> Self::Future {
        match self.state.reserve(&ex) {
            Err(e) => EipFuture::ready(Err(e)),
            Ok(None) => EipFuture::inner(self.inner.call(ex)),
            Ok(Some(at)) => call_at(at, &mut self.inner, ex),
        }
    }
}

/// Runs `inner` on `ex` once `at` has come (the held path of throttle and delay).
pub(crate) fn process_at(at: Instant, inner: &BoxProcessor, ex: Exchange) -> ProcessorFuture {
    let inner = inner.clone();
    ProcessorFuture::boxed(async move {
        tokio::time::sleep_until(at).await;
        inner.process(ex).await
    })
}

/// Calls the service whose readiness was reserved on `ex` once `at` has come.
pub(crate) fn call_at<S>(at: Instant, service: &mut S, ex: Exchange) -> EipFuture<S::Future>
where
    S: Service<Exchange, Response = Exchange, Error = CamelError> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let mut ready = crate::layer::take_ready(service);
    EipFuture::step(ProcessorFuture::boxed(async move {
        tokio::time::sleep_until(at).await;
        ready.call(ex).await
    }))
}

/// Wraps a service in a [`Throttle`]; every service it makes shares one set of limits.
#[derive(Clone, Debug)]
pub struct ThrottleLayer {
    state: Arc<State>,
}

impl ThrottleLayer {
    /// A throttle layer.
    pub fn new(options: ThrottleOptions) -> Self {
        ThrottleLayer {
            state: Throttle::new(options, ()).state,
        }
    }
}

impl<S> Layer<S> for ThrottleLayer {
    type Service = Throttle<S>;

    fn layer(&self, inner: S) -> Throttle<S> {
        Throttle {
            state: self.state.clone(),
            inner,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use camel_language::{constant, header};

    fn throttle(max: &str, period_ms: u64) -> ThrottleOptions {
        ThrottleOptions::new(constant(max), Duration::from_millis(period_ms))
    }

    async fn times(t: &Throttle, n: usize, key: &str) -> Vec<u128> {
        let start = Instant::now();
        let calls = (0..n).map(|_| t.process(Exchange::new("x").with_header("k", key)));
        futures::future::join_all(calls.map(|f| async move {
            f.await.unwrap();
            Instant::now()
        }))
        .await
        .into_iter()
        .map(|at| (at - start).as_millis())
        .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn at_most_max_per_period() {
        let t = Throttle::new(throttle("2", 1000), BoxProcessor::identity());
        assert_eq!(times(&t, 5, "a").await, [0, 0, 1000, 1000, 2000]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_new_period_starts_after_a_quiet_one() {
        let t = Throttle::new(throttle("1", 100), BoxProcessor::identity());
        assert_eq!(times(&t, 1, "a").await, [0]);
        tokio::time::advance(Duration::from_millis(250)).await;
        assert_eq!(times(&t, 2, "a").await, [0, 100]);
    }

    #[tokio::test(start_paused = true)]
    async fn correlation_keys_have_their_own_limits() {
        let mut o = throttle("1", 1000);
        o.correlation = Some(header("k"));
        let t = Throttle::new(o, BoxProcessor::identity());
        assert_eq!(times(&t, 2, "a").await, [0, 1000]);
        assert_eq!(times(&t, 1, "b").await, [0]);
    }

    #[tokio::test(start_paused = true)]
    async fn reject_execution_fails_over_the_limit() {
        let mut o = throttle("1", 1000);
        o.reject = true;
        let t = Throttle::new(o, BoxProcessor::identity());
        t.process(Exchange::new("a")).await.unwrap();
        let e = t.process(Exchange::new("b")).await.unwrap_err();
        assert_eq!(e.kind_name(), "RejectedExecutionException");
        tokio::time::advance(Duration::from_millis(1000)).await;
        t.process(Exchange::new("c")).await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn the_maximum_is_read_per_exchange_and_must_be_positive() {
        let t = Throttle::new(
            ThrottleOptions::new(header("max"), Duration::from_secs(1)),
            BoxProcessor::identity(),
        );
        let e = t.process(Exchange::new("x")).await.unwrap_err();
        assert!(e.to_string().contains("positive"), "{e}");
        let with = |n: &str| Exchange::new("x").with_header("max", n);
        t.process(with("1")).await.unwrap();
        let start = Instant::now();
        t.process(with("2")).await.unwrap(); // the limit grew: room in this window
        assert_eq!(start.elapsed(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn as_a_layer_it_holds_back_before_the_inner_service() {
        use tower::ServiceExt;
        let inner = tower::service_fn(|ex: Exchange| async move { Ok::<_, CamelError>(ex) });
        let layer = ThrottleLayer::new(throttle("1", 500));
        let start = Instant::now();
        for _ in 0..3 {
            layer
                .layer(inner)
                .oneshot(Exchange::new("x"))
                .await
                .unwrap();
        }
        assert_eq!(start.elapsed(), Duration::from_millis(1000));
    }
}
