//! The endpoint plumbing every batching sink component shares: the common parameters
//! (`group_key`, `tenant`, `idempotency_key`, batch tuning) and the endpoint type.
//!
//! ```
//! use camel_api::{Endpoint, EndpointUri};
//! use camel_sinks::memory::MemoryCodec;
//! use camel_sinks::testing::HeaderContext;
//! use camel_sinks::{BatcherRegistry, SinkEndpoint};
//!
//! let uri = EndpointUri::parse("memory:orders?group_key=${header.customer}&max_entries=5").unwrap();
//! let ctx = HeaderContext { route_id: Some("orders".into()) };
//! let endpoint = SinkEndpoint::build(uri, &ctx, BatcherRegistry::new(), &[], |path, _params| {
//!     Ok(MemoryCodec::new(path))
//! })
//! .unwrap();
//! assert_eq!(endpoint.uri(), "memory:orders?group_key=${header.customer}&max_entries=5");
//! ```

use std::fmt;
use std::sync::Arc;

use camel_api::{BoxProcessor, CamelError, ComponentContext, Endpoint, EndpointUri, Parameters};

use crate::batcher::{BatchConfig, BatcherRegistry, BATCH_PARAMETERS};
use crate::codec::BatchCodec;
use crate::producer::{SinkOptions, SinkProducer};

/// Parameters every batching sink takes: simple-language expressions evaluated per
/// exchange.
pub const SINK_PARAMETERS: &[&str] = &["group_key", "tenant", "idempotency_key"];

impl SinkOptions {
    /// Takes `group_key`, `tenant` and `idempotency_key` (simple expressions) from an
    /// endpoint URI; the default tenant is the route id.
    pub fn take_parameters(
        params: &mut Parameters,
        ctx: &dyn ComponentContext,
    ) -> Result<Self, CamelError> {
        let mut expr = |name: &str| -> Result<_, CamelError> {
            params
                .take_str(name)
                .map(|text| ctx.expression("simple", &text))
                .transpose()
        };
        Ok(SinkOptions {
            group_key: expr("group_key")?,
            tenant: expr("tenant")?,
            idempotency_key: expr("idempotency_key")?,
            default_tenant: ctx.route_id().unwrap_or("default").into(),
        })
    }
}

/// A batching sink endpoint: usable in `to:` only.
pub struct SinkEndpoint {
    uri: String,
    producer: BoxProcessor,
    label: String,
}

impl fmt::Debug for SinkEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SinkEndpoint")
            .field("sink", &self.label)
            .finish()
    }
}

impl SinkEndpoint {
    /// Builds a sink endpoint for a codec made from the URI.
    ///
    /// `make` reads the codec's own parameters (it receives the URI path); the common
    /// sink and batch parameters are taken here, and anything left over is rejected.
    pub fn build<C: BatchCodec>(
        mut uri: EndpointUri,
        ctx: &dyn ComponentContext,
        registry: Arc<BatcherRegistry>,
        codec_parameters: &[&str],
        make: impl FnOnce(&str, &mut Parameters) -> Result<C, CamelError>,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.as_str().to_string();
        let path = uri.path().to_string();
        let codec = make(&path, &mut uri.parameters)?;
        let options = SinkOptions::take_parameters(&mut uri.parameters, ctx)?;
        let config = BatchConfig::take_parameters(&mut uri.parameters)?;
        config.validate(&raw)?;
        let known: Vec<&str> = codec_parameters
            .iter()
            .chain(SINK_PARAMETERS)
            .chain(BATCH_PARAMETERS)
            .copied()
            .collect();
        uri.parameters.finish(&known)?;
        let producer = SinkProducer::new(codec, config, options, registry);
        Ok(Arc::new(SinkEndpoint {
            uri: raw,
            label: producer.label().to_string(),
            producer: producer.into_processor(),
        }))
    }
}

impl Endpoint for SinkEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Ok(self.producer.clone())
    }
}

/// Reads a required, non-empty path segment of a sink URI.
#[cfg(any(feature = "nats", feature = "sqs", feature = "sns", feature = "pubsub"))]
pub(crate) fn required_path(uri: &str, path: &str, what: &str) -> Result<String, CamelError> {
    let p = path.trim();
    if p.is_empty() {
        return Err(CamelError::invalid_uri(
            uri.to_string(),
            format!("the URI needs {what}"),
        ));
    }
    Ok(p.to_string())
}

#[cfg(any(feature = "nats", feature = "sqs", feature = "sns", feature = "pubsub"))]
/// The constructors every sink component has: `new` (process-wide registry),
/// `with_registry`, and `Default`.
macro_rules! registry_constructors {
    ($component:ident) => {
        impl Default for $component {
            fn default() -> Self {
                $component::new()
            }
        }

        impl $component {
            /// A component using the process-wide batcher registry.
            pub fn new() -> Self {
                $component::with_registry($crate::batcher::BatcherRegistry::global())
            }

            /// A component using `registry` (tests, or one registry per context).
            pub fn with_registry(
                registry: std::sync::Arc<$crate::batcher::BatcherRegistry>,
            ) -> Self {
                $component { registry }
            }
        }
    };
}
#[cfg(any(feature = "nats", feature = "sqs", feature = "sns", feature = "pubsub"))]
pub(crate) use registry_constructors;

#[cfg(test)]
mod tests {
    use camel_api::{EndpointUri, Exchange};

    use super::*;
    use crate::testing::HeaderContext;

    #[test]
    fn tenant_comes_from_the_uri_and_defaults_to_the_route_id() {
        let ctx = HeaderContext {
            route_id: Some("orders-route".into()),
        };
        let mut uri = EndpointUri::parse("nats:x?tenant=${header.customer}").unwrap();
        let options = SinkOptions::take_parameters(&mut uri.parameters, &ctx).unwrap();
        assert_eq!(&*options.default_tenant, "orders-route");
        let tenant = options.tenant.expect("a tenant expression");
        let ex = Exchange::new("x").with_header("customer", "acme");
        assert_eq!(tenant.evaluate(&ex).unwrap().to_string(), "acme");

        let mut plain = EndpointUri::parse("nats:x").unwrap();
        let options = SinkOptions::take_parameters(&mut plain.parameters, &ctx).unwrap();
        assert!(options.tenant.is_none());
        assert_eq!(&*options.default_tenant, "orders-route");
    }
}
