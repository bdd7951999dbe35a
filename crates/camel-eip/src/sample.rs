//! Sample: lets one exchange per period (or every Nth exchange) go on; the others stop
//! there (the route ends for them, as Camel's sampler does).
//!
//! ```
//! use std::time::Duration;
//! use camel_api::{BoxProcessor, Exchange};
//! use camel_eip::sample::{Sample, Sampling};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let sample = Sample::new(Sampling::Every(2), BoxProcessor::identity());
//! assert!(sample.process(Exchange::new("1")).await.unwrap().is_stopped());
//! assert!(!sample.process(Exchange::new("2")).await.unwrap().is_stopped());
//! # }
//! ```

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use camel_api::{BoxProcessor, CamelError, Exchange, Process, ProcessorFuture};
use tokio::time::Instant;
use tower::{Layer, Service};

use crate::layer::EipFuture;

/// Which exchanges a sample lets through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// The first exchange of each period.
    Period(Duration),
    /// Every Nth exchange (the Nth, the 2Nth, …).
    Every(u64),
}

#[derive(Debug, Default)]
struct Seen {
    last: Option<Instant>,
    count: u64,
}

/// Lets sampled exchanges through to `S`; the others come back stopped.
#[derive(Clone, Debug)]
pub struct Sample<S = BoxProcessor> {
    sampling: Sampling,
    seen: Arc<Mutex<Seen>>,
    inner: S,
}

impl<S> Sample<S> {
    /// A sample in front of `inner`.
    pub fn new(sampling: Sampling, inner: S) -> Self {
        Sample {
            sampling,
            seen: Arc::default(),
            inner,
        }
    }

    fn passes(&self) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        match self.sampling {
            Sampling::Every(n) => {
                seen.count += 1;
                seen.count.is_multiple_of(n.max(1))
            }
            Sampling::Period(period) => {
                let now = Instant::now();
                let pass = seen.last.is_none_or(|last| now >= last + period);
                if pass {
                    seen.last = Some(now);
                }
                pass
            }
        }
    }
}

impl Sample<BoxProcessor> {
    /// The sample as a route step.
    pub fn into_processor(self) -> BoxProcessor {
        BoxProcessor::new(self).named("sample")
    }

    /// Handles one exchange (the route step's path).
    pub fn process(&self, ex: Exchange) -> ProcessorFuture {
        Process::process(self, ex)
    }
}

impl Process for Sample<BoxProcessor> {
    fn process(&self, mut ex: Exchange) -> ProcessorFuture {
        if self.passes() {
            self.inner.process(ex)
        } else {
            ex.stop();
            ProcessorFuture::ready(Ok(ex))
        }
    }
}

impl<S> Service<Exchange> for Sample<S>
where
    S: Service<Exchange, Response = Exchange, Error = CamelError>,
{
    type Response = Exchange;
    type Error = CamelError;
    type Future = EipFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), CamelError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut ex: Exchange) -> Self::Future {
        if self.passes() {
            EipFuture::inner(self.inner.call(ex))
        } else {
            ex.stop();
            EipFuture::ready(Ok(ex))
        }
    }
}

/// Wraps a service in a [`Sample`]; the services it makes share one count.
#[derive(Clone, Debug)]
pub struct SampleLayer {
    sampling: Sampling,
    seen: Arc<Mutex<Seen>>,
}

impl SampleLayer {
    /// A sample layer.
    pub fn new(sampling: Sampling) -> Self {
        SampleLayer {
            sampling,
            seen: Arc::default(),
        }
    }
}

impl<S> Layer<S> for SampleLayer {
    type Service = Sample<S>;

    fn layer(&self, inner: S) -> Sample<S> {
        Sample {
            sampling: self.sampling,
            seen: self.seen.clone(),
            inner,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn passed(s: &Sample) -> bool {
        !s.process(Exchange::new("x")).await.unwrap().is_stopped()
    }

    #[tokio::test(start_paused = true)]
    async fn one_per_period() {
        let s = Sample::new(
            Sampling::Period(Duration::from_secs(1)),
            BoxProcessor::identity(),
        );
        assert!(passed(&s).await);
        assert!(!passed(&s).await);
        tokio::time::advance(Duration::from_millis(999)).await;
        assert!(!passed(&s).await);
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(passed(&s).await);
        assert!(!passed(&s).await);
    }

    #[tokio::test]
    async fn every_nth() {
        let s = Sample::new(Sampling::Every(3), BoxProcessor::identity());
        let mut got = Vec::new();
        for _ in 0..7 {
            got.push(passed(&s).await);
        }
        assert_eq!(got, [false, false, true, false, false, true, false]);
    }
}
