//! A step in front of an inner service: the shape of every EIP that turns one exchange
//! into one exchange and then carries on (recipient list, routing slip, dynamic router,
//! `to_d`, wire tap, enrich, poll enrich, claim check).

use std::task::{Context, Poll};

use camel_api::{BoxProcessor, CamelError, Exchange, ProcessorFuture};
use tower::{Layer, Service};

use super::EipFuture;

/// Runs `step`, then calls `S` with its result. A synchronous step (one whose future is
/// already complete) calls `S` directly: no allocation on that path.
#[derive(Debug, Clone)]
pub struct StepThen<S> {
    step: BoxProcessor,
    inner: S,
}

impl<S> Service<Exchange> for StepThen<S>
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
        match self.step.process(ex) {
            ProcessorFuture::Ready(Some(Ok(ex))) => EipFuture::inner(self.inner.call(ex)),
            ProcessorFuture::Ready(Some(Err(e))) => EipFuture::ready(Err(e)),
            pending => {
                let mut ready = super::take_ready(&mut self.inner);
                EipFuture::step(ProcessorFuture::boxed(async move {
                    let ex = pending.await?;
                    ready.call(ex).await
                }))
            }
        }
    }
}

/// Wraps a service in a [`StepThen`]; each EIP's `layer()` builds one.
#[derive(Debug, Clone)]
pub struct StepLayer {
    step: BoxProcessor,
}

impl StepLayer {
    /// `step` in front of the inner service.
    pub fn new(step: BoxProcessor) -> Self {
        StepLayer { step }
    }
}

impl<S> Layer<S> for StepLayer {
    type Service = StepThen<S>;

    fn layer(&self, inner: S) -> StepThen<S> {
        StepThen {
            step: self.step.clone(),
            inner,
        }
    }
}
