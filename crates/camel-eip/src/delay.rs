//! Delay: holds each exchange for the milliseconds an expression gives, on a timer (no
//! thread is blocked, whatever Camel's `async_delayed` says).
//!
//! A null value, or zero or less, is no delay; a value that is not a number fails the
//! exchange. As a tower layer, [`DelayLayer`] delays before the inner service.
//!
//! ```
//! use std::time::Duration;
//! use camel_api::{BoxProcessor, Exchange};
//! use camel_eip::delay::Delay;
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
//! let delay = Delay::new(camel_language::constant("250"), BoxProcessor::identity());
//! let start = tokio::time::Instant::now();
//! delay.process(Exchange::new("x")).await.unwrap();
//! assert_eq!(start.elapsed(), Duration::from_millis(250));
//! # }
//! ```

use std::task::{Context, Poll};
use std::time::Duration;

use camel_api::{
    BoxExpression, BoxProcessor, CamelError, Exchange, Process, ProcessorFuture, Value,
};
use tower::{Layer, Service};

use tokio::time::Instant;

use crate::layer::EipFuture;
use crate::throttle::{call_at, process_at};

/// Delays exchanges before `S`.
#[derive(Clone, Debug)]
pub struct Delay<S = BoxProcessor> {
    millis: BoxExpression,
    inner: S,
}

impl<S> Delay<S> {
    /// A delay of `millis` (an expression read per exchange) before `inner`.
    pub fn new(millis: BoxExpression, inner: S) -> Self {
        Delay { millis, inner }
    }

    fn duration(&self, ex: &Exchange) -> Result<Duration, CamelError> {
        let value = self.millis.evaluate(ex)?;
        let ms = match &value {
            Value::Null => return Ok(Duration::ZERO),
            v => v.as_f64().ok_or_else(|| {
                CamelError::processor(format!(
                    "delay: expected a number of milliseconds, got `{value}`"
                ))
            })?,
        };
        Ok(if ms.is_finite() && ms > 0.0 {
            Duration::from_micros((ms * 1000.0) as u64)
        } else {
            Duration::ZERO
        })
    }
}

impl Delay<BoxProcessor> {
    /// The delay as a route step.
    pub fn into_processor(self) -> BoxProcessor {
        BoxProcessor::new(self).named("delay")
    }

    /// Handles one exchange (the route step's path).
    pub fn process(&self, ex: Exchange) -> ProcessorFuture {
        Process::process(self, ex)
    }
}

impl Process for Delay<BoxProcessor> {
    fn process(&self, ex: Exchange) -> ProcessorFuture {
        match self.duration(&ex) {
            Err(e) => ProcessorFuture::ready(Err(e)),
            Ok(d) if d.is_zero() => self.inner.process(ex),
            Ok(d) => process_at(Instant::now() + d, &self.inner, ex),
        }
    }
}

impl<S> Service<Exchange> for Delay<S>
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
        match self.duration(&ex) {
            Err(e) => EipFuture::ready(Err(e)),
            Ok(d) if d.is_zero() => EipFuture::inner(self.inner.call(ex)),
            Ok(d) => call_at(Instant::now() + d, &mut self.inner, ex),
        }
    }
}

/// Wraps a service in a [`Delay`].
#[derive(Clone, Debug)]
pub struct DelayLayer {
    millis: BoxExpression,
}

impl DelayLayer {
    /// A delay of `millis` (read per exchange).
    pub fn new(millis: BoxExpression) -> Self {
        DelayLayer { millis }
    }
}

impl<S> Layer<S> for DelayLayer {
    type Service = Delay<S>;

    fn layer(&self, inner: S) -> Delay<S> {
        Delay::new(self.millis.clone(), inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use camel_language::header;

    async fn elapsed(d: &Delay, ms: Option<&str>) -> Result<Duration, CamelError> {
        let mut ex = Exchange::new("x");
        if let Some(ms) = ms {
            ex.message.headers.insert("ms", ms);
        }
        let start = Instant::now();
        d.process(ex).await?;
        Ok(start.elapsed())
    }

    #[tokio::test(start_paused = true)]
    async fn delays_by_the_expression() {
        let d = Delay::new(header("ms"), BoxProcessor::identity());
        assert_eq!(
            elapsed(&d, Some("1500")).await.unwrap(),
            Duration::from_millis(1500)
        );
        assert_eq!(elapsed(&d, Some("-5")).await.unwrap(), Duration::ZERO);
        assert_eq!(elapsed(&d, None).await.unwrap(), Duration::ZERO);
        let e = elapsed(&d, Some("soon")).await.unwrap_err();
        assert!(e.to_string().contains("milliseconds"), "{e}");
    }

    #[tokio::test(start_paused = true)]
    async fn as_a_layer() {
        use tower::ServiceExt;
        let inner = tower::service_fn(|ex: Exchange| async move { Ok::<_, CamelError>(ex) });
        let svc = DelayLayer::new(camel_language::constant("40")).layer(inner);
        let start = Instant::now();
        svc.oneshot(Exchange::new("x")).await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_millis(40));
    }
}
