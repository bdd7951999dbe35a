use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tower::{Service, ServiceExt};

use crate::{CamelError, Exchange};

/// The object-safe core of a processor: handle one exchange through a shared reference.
///
/// Implement this for a stage that needs no `&mut self` (most do); any
/// `tower::Service<Exchange>` can be turned into one with [`BoxProcessor::from_service`].
pub trait Process: Send + Sync + 'static {
    /// Handles one exchange.
    fn process(&self, exchange: Exchange) -> ProcessorFuture;

    /// Handles one exchange in place, when this stage is synchronous and works that way
    /// (see [`BoxProcessor::sync_in_place`]); `None` means "not here, call `process`", and
    /// leaves the exchange untouched.
    ///
    /// A pipeline tries this first: a run of such steps then passes one exchange along by
    /// reference instead of moving it in and out of every step.
    fn process_in_place(&self, exchange: &mut Exchange) -> Option<Result<(), CamelError>> {
        let _ = exchange;
        None
    }

    /// Called by a pipeline when [`Process::process_in_place`] returned an error: the
    /// exchange, as the failed attempt left it, and the error. The default fails the
    /// exchange; a stage that handles errors (the route's error handler) recovers here
    /// without having kept a copy of the exchange before the attempt.
    fn in_place_failed(&self, exchange: Exchange, error: CamelError) -> ProcessorFuture {
        drop(exchange);
        ProcessorFuture::ready(Err(error))
    }
}

/// The future of a processor: either already complete (a synchronous stage, no allocation)
/// or a boxed future.
#[must_use = "futures do nothing unless polled"]
pub enum ProcessorFuture {
    /// The result is already known.
    Ready(Option<Result<Exchange, CamelError>>),
    /// The result comes later.
    Pending(BoxFuture<'static, Result<Exchange, CamelError>>),
}

impl ProcessorFuture {
    /// A future that is already complete.
    pub fn ready(result: Result<Exchange, CamelError>) -> Self {
        ProcessorFuture::Ready(Some(result))
    }

    /// Boxes an async computation.
    pub fn boxed(fut: impl Future<Output = Result<Exchange, CamelError>> + Send + 'static) -> Self {
        ProcessorFuture::Pending(Box::pin(fut))
    }
}

impl Future for ProcessorFuture {
    type Output = Result<Exchange, CamelError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut *self {
            ProcessorFuture::Ready(slot) => match slot.take() {
                Some(result) => Poll::Ready(result),
                None => panic!("ProcessorFuture polled after completion"),
            },
            ProcessorFuture::Pending(fut) => fut.as_mut().poll(cx),
        }
    }
}

impl fmt::Debug for ProcessorFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProcessorFuture::Ready(_) => f.write_str("ProcessorFuture::Ready"),
            ProcessorFuture::Pending(_) => f.write_str("ProcessorFuture::Pending"),
        }
    }
}

/// The boxed, cloneable processor every route step, EIP, producer and route compiles to.
///
/// It is a `tower::Service<Exchange, Response = Exchange, Error = CamelError>` that is
/// `Clone + Send + Sync + 'static`. Cloning is one reference-count increment, and a
/// synchronous stage completes without allocating a future.
#[derive(Clone)]
pub struct BoxProcessor {
    inner: Arc<dyn Process>,
    name: &'static str,
}

impl BoxProcessor {
    /// Wraps a [`Process`] implementation.
    pub fn new(process: impl Process) -> Self {
        BoxProcessor {
            inner: Arc::new(process),
            name: "processor",
        }
    }

    /// Sets the name shown by `Debug`.
    pub fn named(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    /// Adapts any tower service. Each call clones the service and waits for its readiness,
    /// so layers with backpressure (concurrency limits, rate limits) keep their contract.
    pub fn from_service<S>(service: S) -> Self
    where
        S: Service<Exchange, Response = Exchange, Error = CamelError>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Future: Send + 'static,
    {
        struct Adapter<S>(S);
        impl<S> Process for Adapter<S>
        where
            S: Service<Exchange, Response = Exchange, Error = CamelError>
                + Clone
                + Send
                + Sync
                + 'static,
            S::Future: Send + 'static,
        {
            fn process(&self, exchange: Exchange) -> ProcessorFuture {
                let svc = self.0.clone();
                ProcessorFuture::boxed(svc.oneshot(exchange))
            }
        }
        BoxProcessor::new(Adapter(service)).named("service")
    }

    /// A synchronous stage from a closure.
    pub fn sync<F>(f: F) -> Self
    where
        F: Fn(Exchange) -> Result<Exchange, CamelError> + Send + Sync + 'static,
    {
        struct SyncStage<F>(F);
        impl<F> Process for SyncStage<F>
        where
            F: Fn(Exchange) -> Result<Exchange, CamelError> + Send + Sync + 'static,
        {
            fn process(&self, exchange: Exchange) -> ProcessorFuture {
                ProcessorFuture::ready((self.0)(exchange))
            }
        }
        BoxProcessor::new(SyncStage(f)).named("sync")
    }

    /// A synchronous stage that changes the exchange in place: the cheapest kind of step
    /// (a pipeline hands it the exchange by reference, see [`Process::process_in_place`]).
    /// On an error the exchange is dropped, as with [`BoxProcessor::sync`].
    ///
    /// ```
    /// use camel_api::{BoxProcessor, Exchange};
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let tag = BoxProcessor::sync_in_place(|ex: &mut Exchange| {
    ///     ex.message.headers.insert("tagged", true);
    ///     Ok(())
    /// });
    /// let out = tag.process(Exchange::new("x")).await.unwrap();
    /// assert!(out.header("tagged").is_some());
    /// # }
    /// ```
    pub fn sync_in_place<F>(f: F) -> Self
    where
        F: Fn(&mut Exchange) -> Result<(), CamelError> + Send + Sync + 'static,
    {
        struct InPlace<F>(F);
        impl<F> Process for InPlace<F>
        where
            F: Fn(&mut Exchange) -> Result<(), CamelError> + Send + Sync + 'static,
        {
            fn process(&self, mut exchange: Exchange) -> ProcessorFuture {
                ProcessorFuture::ready((self.0)(&mut exchange).map(|()| exchange))
            }

            #[inline]
            fn process_in_place(&self, exchange: &mut Exchange) -> Option<Result<(), CamelError>> {
                Some((self.0)(exchange))
            }
        }
        BoxProcessor::new(InPlace(f)).named("sync")
    }

    /// An asynchronous stage from a closure returning a future.
    pub fn from_fn<F, Fut>(f: F) -> Self
    where
        F: Fn(Exchange) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Exchange, CamelError>> + Send + 'static,
    {
        struct Async<F>(F);
        impl<F, Fut> Process for Async<F>
        where
            F: Fn(Exchange) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = Result<Exchange, CamelError>> + Send + 'static,
        {
            fn process(&self, exchange: Exchange) -> ProcessorFuture {
                ProcessorFuture::boxed((self.0)(exchange))
            }
        }
        BoxProcessor::new(Async(f)).named("fn")
    }

    /// The processor that returns its input unchanged.
    pub fn identity() -> Self {
        BoxProcessor::sync(Ok).named("identity")
    }

    /// Handles one exchange through a shared reference (no readiness wait: a
    /// `BoxProcessor` is always ready).
    pub fn process(&self, exchange: Exchange) -> ProcessorFuture {
        self.inner.process(exchange)
    }

    /// Handles one exchange in place if this processor can (see
    /// [`Process::process_in_place`]); `None` otherwise.
    #[inline]
    pub fn process_in_place(&self, exchange: &mut Exchange) -> Option<Result<(), CamelError>> {
        self.inner.process_in_place(exchange)
    }

    /// What follows a failed [`BoxProcessor::process_in_place`] (see
    /// [`Process::in_place_failed`]).
    #[inline]
    pub fn in_place_failed(&self, exchange: Exchange, error: CamelError) -> ProcessorFuture {
        self.inner.in_place_failed(exchange, error)
    }
}

impl fmt::Debug for BoxProcessor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("BoxProcessor").field(&self.name).finish()
    }
}

impl Service<Exchange> for BoxProcessor {
    type Response = Exchange;
    type Error = CamelError;
    type Future = ProcessorFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), CamelError>> {
        // Backpressure of wrapped services is awaited inside `process`.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, exchange: Exchange) -> ProcessorFuture {
        self.inner.process(exchange)
    }
}
