//! A type-erased layer over [`BoxProcessor`]s, the form a route keeps its tower layers in.

use std::fmt;
use std::sync::Arc;

use camel_api::{BoxProcessor, Exchange};
use tower::buffer::BufferLayer;
use tower::{BoxError, Layer, Service, ServiceBuilder, ServiceExt};

use super::error::into_camel_error;

type Wrap = dyn Fn(BoxProcessor) -> BoxProcessor + Send + Sync;

/// Any tower [`Layer`] over [`BoxProcessor`], erased to one cloneable type.
///
/// The wrapped service is adapted with [`BoxProcessor::from_service`]: every exchange
/// clones the layered service and waits for its readiness, so a concurrency limit or a
/// rate limit holds callers back instead of being skipped. Its errors go through
/// [`into_camel_error`], so a timeout is a [`camel_api::CamelError::Timeout`].
///
/// ```
/// use std::time::Duration;
/// use camel_api::{BoxProcessor, Exchange};
/// use camel_eip::layer::ProcessorLayer;
/// use tower::Layer;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let layer = ProcessorLayer::new(tower::timeout::TimeoutLayer::new(Duration::from_secs(1)));
/// let step = layer.layer(BoxProcessor::identity());
/// assert!(step.process(Exchange::new("x")).await.is_ok());
/// # }
/// ```
#[derive(Clone)]
pub struct ProcessorLayer {
    wrap: Arc<Wrap>,
    name: &'static str,
}

impl ProcessorLayer {
    /// Erases `layer`.
    pub fn new<L>(layer: L) -> Self
    where
        L: Layer<BoxProcessor> + Send + Sync + 'static,
        L::Service: Service<Exchange, Response = Exchange> + Clone + Send + Sync + 'static,
        <L::Service as Service<Exchange>>::Error: Into<BoxError>,
        <L::Service as Service<Exchange>>::Future: Send + 'static,
    {
        // An already erased layer is taken as it is rather than wrapped a second time.
        if let Some(erased) = (&layer as &dyn std::any::Any).downcast_ref::<ProcessorLayer>() {
            return erased.clone();
        }
        let wrap = move |inner: BoxProcessor| {
            let service = layer.layer(inner).map_err(into_camel_error);
            BoxProcessor::from_service(service).named("layer")
        };
        ProcessorLayer {
            wrap: Arc::new(wrap),
            name: std::any::type_name::<L>(),
        }
    }

    /// Erases a layer whose service is not `Clone` (tower's `RateLimitLayer`: its state
    /// is one window, not one per clone): one instance sits behind a
    /// [`tower::buffer::Buffer`] of `bound` waiting exchanges, so every exchange of the
    /// route shares it. The buffer's worker task starts when the layer is applied (a route
    /// is compiled), so that must happen inside a Tokio runtime.
    pub fn buffered<L>(layer: L, bound: usize) -> Self
    where
        L: Layer<BoxProcessor> + Send + Sync + 'static,
        L::Service: Service<Exchange, Response = Exchange> + Send + 'static,
        <L::Service as Service<Exchange>>::Error: Into<BoxError> + Send + Sync,
        <L::Service as Service<Exchange>>::Future: Send + 'static,
    {
        let stack = ServiceBuilder::new()
            .layer(BufferLayer::new(bound))
            .layer(layer);
        let mut erased = Self::new(stack);
        erased.name = std::any::type_name::<L>();
        erased
    }

    /// The layer's type name, for `Debug`.
    pub fn type_name(&self) -> &'static str {
        self.name
    }
}

impl Layer<BoxProcessor> for ProcessorLayer {
    type Service = BoxProcessor;

    fn layer(&self, inner: BoxProcessor) -> BoxProcessor {
        (self.wrap)(inner)
    }
}

impl fmt::Debug for ProcessorLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ProcessorLayer").field(&self.name).finish()
    }
}
