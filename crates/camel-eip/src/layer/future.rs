//! The response future shared by the generic EIP services.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use camel_api::{CamelError, Exchange, ProcessorFuture};

pin_project_lite::pin_project! {
    /// The future of an EIP service wrapping an inner service `S` (`F` is `S::Future`):
    /// either the inner service's own future, unboxed, or a step future (already complete
    /// for a synchronous decision, boxed when the EIP had to suspend before calling `S`).
    #[must_use = "futures do nothing unless polled"]
    #[project = EipFutureProj]
    #[derive(Debug)]
    pub enum EipFuture<F> {
        /// The inner service's future.
        Inner { #[pin] future: F },
        /// A branch, a failure, or a pass-through decided without the inner service.
        Step { future: ProcessorFuture },
    }
}

impl<F> EipFuture<F> {
    /// The inner service's future.
    pub(crate) fn inner(future: F) -> Self {
        EipFuture::Inner { future }
    }

    /// A step future.
    pub(crate) fn step(future: ProcessorFuture) -> Self {
        EipFuture::Step { future }
    }

    /// An already known result.
    pub(crate) fn ready(result: Result<Exchange, CamelError>) -> Self {
        EipFuture::Step {
            future: ProcessorFuture::ready(result),
        }
    }
}

impl<F> Future for EipFuture<F>
where
    F: Future<Output = Result<Exchange, CamelError>>,
{
    type Output = Result<Exchange, CamelError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            EipFutureProj::Inner { future } => future.poll(cx),
            EipFutureProj::Step { future } => Pin::new(future).poll(cx),
        }
    }
}
