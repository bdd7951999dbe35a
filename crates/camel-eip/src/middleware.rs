//! Middleware from an async function over [`Exchange`], as axum's `middleware::from_fn`.
//!
//! The function gets the exchange and a [`Next`]: it can change the exchange, decide not
//! to go on, call `next.call(exchange)` and look at (or change) the result.
//!
//! ```
//! use camel_api::{BoxProcessor, CamelError, Exchange};
//! use camel_eip::middleware::from_fn;
//! use tower::{Layer, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let audit = from_fn(|mut exchange, next| async move {
//!     exchange.message.headers.insert("audited", true);
//!     let out = next.call(exchange).await?;
//!     if out.message.headers.get("reject").is_some() {
//!         return Err(CamelError::processor("rejected"));
//!     }
//!     Ok(out)
//! });
//! let svc = audit.layer(BoxProcessor::identity());
//! let out = svc.oneshot(Exchange::new("x")).await.unwrap();
//! assert!(out.message.headers.get("audited").is_some());
//! # }
//! ```

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};

use camel_api::{CamelError, Exchange, ProcessorFuture};
use tower::{Layer, Service};

/// A layer from an async function `f(exchange, next)`.
///
/// The bound here (not only on the service) lets a closure leave its argument types out.
pub fn from_fn<F, Fut>(f: F) -> FromFnLayer<F>
where
    F: Fn(Exchange, Next) -> Fut,
    Fut: Future<Output = Result<Exchange, CamelError>>,
{
    FromFnLayer { f: Arc::new(f) }
}

/// The layer [`from_fn`] returns.
pub struct FromFnLayer<F> {
    f: Arc<F>,
}

impl<F> Clone for FromFnLayer<F> {
    fn clone(&self) -> Self {
        FromFnLayer { f: self.f.clone() }
    }
}

impl<F> fmt::Debug for FromFnLayer<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FromFnLayer")
            .field("f", &std::any::type_name::<F>())
            .finish()
    }
}

impl<F, S> Layer<S> for FromFnLayer<F> {
    type Service = FromFn<F, S>;

    fn layer(&self, inner: S) -> FromFn<F, S> {
        FromFn {
            f: self.f.clone(),
            inner,
        }
    }
}

/// The service of a [`FromFnLayer`]: calls `f` with each exchange and the inner service.
pub struct FromFn<F, S> {
    f: Arc<F>,
    inner: S,
}

impl<F, S: Clone> Clone for FromFn<F, S> {
    fn clone(&self) -> Self {
        FromFn {
            f: self.f.clone(),
            inner: self.inner.clone(),
        }
    }
}

impl<F, S: fmt::Debug> fmt::Debug for FromFn<F, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FromFn")
            .field("f", &std::any::type_name::<F>())
            .field("inner", &self.inner)
            .finish()
    }
}

impl<F, Fut, S> Service<Exchange> for FromFn<F, S>
where
    F: Fn(Exchange, Next) -> Fut,
    Fut: Future<Output = Result<Exchange, CamelError>>,
    S: Service<Exchange, Response = Exchange, Error = CamelError> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Exchange;
    type Error = CamelError;
    type Future = Fut;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), CamelError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, exchange: Exchange) -> Fut {
        // `Next` takes the instance whose readiness `poll_ready` reserved.
        let ready = crate::layer::take_ready(&mut self.inner);
        (self.f)(exchange, Next::new(ready))
    }
}

/// The rest of the pipeline, as a middleware function sees it; called at most once.
pub struct Next {
    call: Box<dyn FnOnce(Exchange) -> ProcessorFuture + Send>,
}

impl Next {
    fn new<S>(mut ready: S) -> Self
    where
        S: Service<Exchange, Response = Exchange, Error = CamelError> + Send + 'static,
        S::Future: Send + 'static,
    {
        Next {
            call: Box::new(move |exchange| ProcessorFuture::boxed(ready.call(exchange))),
        }
    }

    /// Runs the rest of the pipeline with `exchange`.
    pub fn call(self, exchange: Exchange) -> ProcessorFuture {
        (self.call)(exchange)
    }
}

impl fmt::Debug for Next {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next").finish_non_exhaustive()
    }
}
