//! The multicast as a tower layer: branches first, then the inner service gets the
//! aggregated exchange.

use std::task::{Context, Poll};

use camel_api::{BoxProcessor, CamelError, Exchange, ProcessorFuture};
use tower::{Layer, Service};

use super::config::MulticastConfig;
use super::service::Multicast;
use crate::layer::EipFuture;

/// Sends each exchange to the branches of a [`Multicast`], then calls `S` with the result.
#[derive(Debug, Clone)]
pub struct MulticastService<S> {
    multicast: Multicast,
    inner: S,
}

impl<S> Service<Exchange> for MulticastService<S>
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
        let mut ready = crate::layer::take_ready(&mut self.inner);
        let multicast = self.multicast.clone();
        EipFuture::step(ProcessorFuture::boxed(async move {
            let aggregated = multicast.run(ex).await?;
            ready.call(aggregated).await
        }))
    }
}

/// Wraps a service in a [`MulticastService`].
#[derive(Debug, Clone)]
pub struct MulticastLayer {
    multicast: Multicast,
}

impl MulticastLayer {
    /// A multicast over `branches`, configured by `config`, in front of the inner service.
    pub fn new(branches: Vec<BoxProcessor>, config: MulticastConfig) -> Self {
        MulticastLayer {
            multicast: Multicast::new(branches, config),
        }
    }
}

impl<S> Layer<S> for MulticastLayer {
    type Service = MulticastService<S>;

    fn layer(&self, inner: S) -> MulticastService<S> {
        MulticastService {
            multicast: self.multicast.clone(),
            inner,
        }
    }
}
