//! Routing slip, dynamic router and `to_d`: the exchange travels through endpoints named
//! at run time, each reply feeding the next hop.
//!
//! - **Routing slip**: the expression is evaluated once; its URIs are called in order.
//! - **Dynamic router**: the expression is evaluated before every hop, with the property
//!   `CamelSlipEndpoint` holding the endpoint just called (absent before the first), until
//!   it returns null or no URI. Nothing bounds the number of hops (as in Camel): the
//!   expression must end the walk.
//! - **`to_d`**: one URI from a `simple` template.
//!
//! A stopped exchange (`stop` inside a hop) ends the walk. A URI naming no endpoint fails
//! the exchange unless invalid endpoints are ignored.
//!
//! ```
//! use std::sync::Arc;
//! use camel_api::{Body, BoxProcessor, CamelError, Endpoint, Exchange};
//! use camel_eip::dynamic::{CacheSize, EndpointCache, EndpointResolver};
//! use camel_eip::routing_slip::RoutingSlip;
//!
//! #[derive(Debug)]
//! struct Append(String);
//! impl Endpoint for Append {
//!     fn uri(&self) -> &str { &self.0 }
//!     fn producer(&self) -> Result<BoxProcessor, CamelError> {
//!         let tag = self.0.clone();
//!         Ok(BoxProcessor::sync(move |mut ex: Exchange| {
//!             let body = ex.message.body.as_text().unwrap_or_default().into_owned();
//!             ex.message.body = Body::from(format!("{body}>{tag}"));
//!             Ok(ex)
//!         }))
//!     }
//! }
//! #[derive(Debug)]
//! struct Resolver;
//! impl EndpointResolver for Resolver {
//!     fn endpoint(&self, uri: &str) -> Result<Arc<dyn Endpoint>, CamelError> {
//!         Ok(Arc::new(Append(uri.to_string())))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let slip = camel_language::simple("${header.slip}").unwrap();
//! let cache = Arc::new(EndpointCache::producers(Arc::new(Resolver), CacheSize::default()));
//! let step = RoutingSlip::slip(slip, cache, ",", false).into_processor();
//! let out = step.process(Exchange::new("in").with_header("slip", "a:1,b:2")).await.unwrap();
//! assert_eq!(out.message.body, Body::from("in>a:1>b:2"));
//! # }
//! ```

use std::sync::Arc;

use camel_api::{BoxExpression, BoxProcessor, CamelError, Exchange, Process, ProcessorFuture};

use crate::dynamic::{producer_or_skip, uris, EndpointCache, SLIP_ENDPOINT};
use crate::layer::StepLayer;

/// When the expression is evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Walk {
    /// Once (routing slip, `to_d`).
    Once,
    /// Before every hop (dynamic router).
    EveryHop,
}

/// A routing slip, a dynamic router or a `to_d`: see the module docs.
#[derive(Clone)]
pub struct RoutingSlip {
    expression: BoxExpression,
    cache: Arc<EndpointCache<BoxProcessor>>,
    delimiter: Arc<str>,
    ignore_invalid: bool,
    walk: Walk,
    name: &'static str,
}

impl std::fmt::Debug for RoutingSlip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoutingSlip")
            .field("name", &self.name)
            .field("expression", &self.expression)
            .field("delimiter", &self.delimiter)
            .finish_non_exhaustive()
    }
}

impl RoutingSlip {
    /// A routing slip: `expression` names the hops once.
    pub fn slip(
        expression: BoxExpression,
        cache: Arc<EndpointCache<BoxProcessor>>,
        delimiter: &str,
        ignore_invalid: bool,
    ) -> Self {
        RoutingSlip {
            expression,
            cache,
            delimiter: delimiter.into(),
            ignore_invalid,
            walk: Walk::Once,
            name: "routing_slip",
        }
    }

    /// A dynamic router: `expression` names the next hops until it returns null.
    pub fn dynamic_router(
        expression: BoxExpression,
        cache: Arc<EndpointCache<BoxProcessor>>,
        delimiter: &str,
        ignore_invalid: bool,
    ) -> Self {
        RoutingSlip {
            walk: Walk::EveryHop,
            name: "dynamic_router",
            ..RoutingSlip::slip(expression, cache, delimiter, ignore_invalid)
        }
    }

    /// `to_d`: `uri` is evaluated to one URI (not split).
    pub fn to_dynamic(
        uri: BoxExpression,
        cache: Arc<EndpointCache<BoxProcessor>>,
        ignore_invalid: bool,
    ) -> Self {
        RoutingSlip {
            name: "to_d",
            ..RoutingSlip::slip(uri, cache, "false", ignore_invalid)
        }
    }

    /// The step as a route processor.
    pub fn into_processor(self) -> BoxProcessor {
        let name = self.name;
        BoxProcessor::new(self).named(name)
    }

    /// The step as a tower layer: the inner service gets the exchange after the last hop.
    pub fn layer(self) -> StepLayer {
        StepLayer::new(self.into_processor())
    }

    async fn run(self, mut ex: Exchange) -> Result<Exchange, CamelError> {
        loop {
            let hops = uris(&self.expression.evaluate(&ex)?, &self.delimiter);
            if hops.is_empty() {
                return Ok(ex);
            }
            for uri in hops {
                let Some(producer) =
                    producer_or_skip(&self.cache, &uri, self.ignore_invalid).await?
                else {
                    continue;
                };
                ex.properties.insert(SLIP_ENDPOINT, uri.as_str());
                ex = producer.process(ex).await?;
                if ex.is_stopped() {
                    return Ok(ex);
                }
            }
            if self.walk == Walk::Once {
                return Ok(ex);
            }
            // A router whose hops all complete synchronously must still let other tasks run.
            tokio::task::consume_budget().await;
        }
    }
}

impl Process for RoutingSlip {
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        ProcessorFuture::boxed(self.clone().run(exchange))
    }
}
