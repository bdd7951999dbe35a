//! Tower layers in builder routes: [`RouteBuilder::layer`] wraps the rest of the route,
//! [`RouteBuilder::layer_around`] a nested block.
//!
//! A layer is Rust code, so it cannot be written in YAML; like a `process` closure it is
//! kept beside the definition (in [`RouteDefinition::layers`](crate::RouteDefinition))
//! and the step names it (`layer: {ref: layer-1, steps: [...]}`).

use std::sync::atomic::{AtomicU64, Ordering};

use camel_api::{BoxProcessor, Exchange};
use camel_eip::layer::ProcessorLayer;
use serde_json::{json, Map, Value as Json};
use tower::{BoxError, Layer, Service};

use crate::builder::RouteBuilder;
use crate::model::RouteDefinition;

static LAYER_NAMES: AtomicU64 = AtomicU64::new(1);

impl RouteBuilder {
    /// Wraps every step added after this one (the rest of the route, or of the nested
    /// block this is called in) in a tower layer: `TimeoutLayer`, `ConcurrencyLimitLayer`,
    /// `RetryLayer`, `LoadShedLayer`, an EIP layer, a
    /// [`from_fn`](camel_eip::middleware::from_fn) middleware, …
    ///
    /// Each exchange waits for the layered service's readiness, so a concurrency limit
    /// holds callers back. The layer's errors become typed
    /// [`CamelError`](camel_api::CamelError)s (a timeout is `CamelError::Timeout`). A layer
    /// whose service is not `Clone` (`RateLimitLayer`) goes in through
    /// [`ProcessorLayer::buffered`]. A layer does not reach past a top-level `resequence`:
    /// the continuation after it is not wrapped.
    ///
    /// ```
    /// use std::time::Duration;
    /// use camel_core::RouteBuilder;
    /// use tower::limit::ConcurrencyLimitLayer;
    /// use tower::timeout::TimeoutLayer;
    ///
    /// let route = RouteBuilder::from("direct:orders")
    ///     .layer(ConcurrencyLimitLayer::new(8))
    ///     .layer(TimeoutLayer::new(Duration::from_secs(2)))
    ///     .to("log:orders")
    ///     .build();
    /// assert_eq!(route.layers.len(), 2);
    /// ```
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: Layer<BoxProcessor> + Send + Sync + 'static,
        L::Service: Service<Exchange, Response = Exchange> + Clone + Send + Sync + 'static,
        <L::Service as Service<Exchange>>::Error: Into<BoxError>,
        <L::Service as Service<Exchange>>::Future: Send + 'static,
    {
        let name = register(&mut self.route, ProcessorLayer::new(layer));
        self.step("layer", json!({ "ref": name }))
    }

    /// Wraps the steps built by `steps` in a tower layer; the route goes on after them
    /// unwrapped. See [`RouteBuilder::layer`].
    pub fn layer_around<L>(
        mut self,
        layer: L,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self
    where
        L: Layer<BoxProcessor> + Send + Sync + 'static,
        L::Service: Service<Exchange, Response = Exchange> + Clone + Send + Sync + 'static,
        <L::Service as Service<Exchange>>::Error: Into<BoxError>,
        <L::Service as Service<Exchange>>::Future: Send + 'static,
    {
        let name = register(&mut self.route, ProcessorLayer::new(layer));
        let nested = steps(RouteBuilder {
            route: RouteDefinition::default(),
        })
        .route;
        self.route.processors.extend(nested.processors);
        self.route.layers.extend(nested.layers);
        let mut config = Map::new();
        config.insert("ref".into(), Json::String(name));
        config.insert(
            "steps".into(),
            serde_json::to_value(nested.steps).unwrap_or(Json::Null),
        );
        self.step("layer", Json::Object(config))
    }

    /// Camel's Policy EIP: the steps built by `steps` wrapped by the policy the context
    /// holds under `name` ([`CamelContext::add_policy`](crate::CamelContext::add_policy)),
    /// looked up when the route is added; the route goes on after them unwrapped. Unlike
    /// [`layer_around`](Self::layer_around) the route names the policy, so one policy
    /// serves every route, from Rust and from YAML (`policy: {ref: name, steps: [...]}`).
    ///
    /// ```
    /// use camel_core::RouteBuilder;
    ///
    /// let route = RouteBuilder::from("direct:orders")
    ///     .policy("audited", |r| r.to("log:inside"))
    ///     .to("log:after")
    ///     .build();
    /// assert_eq!(route.steps[0].name, "policy");
    /// ```
    pub fn policy(mut self, name: &str, steps: impl FnOnce(RouteBuilder) -> RouteBuilder) -> Self {
        let steps = self.nested_steps(steps);
        self.step_config(camel_eip::config::Policy {
            reference: name.to_string(),
            inherit_error_handler: None,
            steps,
        })
    }
}

/// Keeps `layer` beside the route under a fresh name and returns the name.
fn register(route: &mut RouteDefinition, layer: ProcessorLayer) -> String {
    let name = format!("layer-{}", LAYER_NAMES.fetch_add(1, Ordering::Relaxed));
    route.layers.insert(name.clone(), layer);
    name
}
