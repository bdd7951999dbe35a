//! Camel's Policy EIP: a named wrapper around a block of steps.
//!
//! In Camel a policy is a bean that wraps the processor of the steps inside
//! `policy: {ref: name, steps: [...]}` (a transaction, a security check, a metric). Here a
//! policy is a tower [`Layer`] kept under a name in the context's registry
//! (`CamelContext::add_policy`), and the step applies it to its compiled steps when the
//! route is compiled. Routes without a `policy` step pay nothing; a route with one pays
//! what the layer costs.
//!
//! ```
//! use std::time::Duration;
//! use camel_api::{BoxProcessor, Exchange};
//! use camel_eip::policy::Policy;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let policy = Policy::new(tower::timeout::TimeoutLayer::new(Duration::from_secs(1)));
//! let guarded = policy.wrap(BoxProcessor::identity());
//! assert!(guarded.process(Exchange::new("x")).await.is_ok());
//! # }
//! ```

use std::fmt;

use camel_api::{BoxProcessor, Exchange};
use tower::{BoxError, Layer, Service};

use crate::layer::ProcessorLayer;

/// A policy: a tower layer over the steps of a `policy` block, cloned cheaply.
#[derive(Clone)]
pub struct Policy {
    layer: ProcessorLayer,
}

impl Policy {
    /// A policy applying `layer` to the steps it wraps (see [`ProcessorLayer::new`] for
    /// how readiness and errors are carried).
    pub fn new<L>(layer: L) -> Self
    where
        L: Layer<BoxProcessor> + Send + Sync + 'static,
        L::Service: Service<Exchange, Response = Exchange> + Clone + Send + Sync + 'static,
        <L::Service as Service<Exchange>>::Error: Into<BoxError>,
        <L::Service as Service<Exchange>>::Future: Send + 'static,
    {
        Policy {
            layer: ProcessorLayer::new(layer),
        }
    }

    /// A policy from an already erased layer ([`ProcessorLayer::buffered`] for a layer
    /// whose service is not `Clone`).
    pub fn from_layer(layer: ProcessorLayer) -> Self {
        Policy { layer }
    }

    /// The steps `inner` wrapped by this policy.
    pub fn wrap(&self, inner: BoxProcessor) -> BoxProcessor {
        self.layer.layer(inner)
    }
}

impl fmt::Debug for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Policy")
            .field(&self.layer.type_name())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use camel_api::{Body, CamelError};

    use super::*;
    use crate::middleware::from_fn;

    #[tokio::test]
    async fn the_policy_runs_around_the_wrapped_steps_and_sees_their_failure() {
        let seen = Arc::new(AtomicUsize::new(0));
        let failures = Arc::new(AtomicUsize::new(0));
        let (s, f) = (Arc::clone(&seen), Arc::clone(&failures));
        let policy = Policy::new(from_fn(move |ex: Exchange, next| {
            let (s, f) = (Arc::clone(&s), Arc::clone(&f));
            async move {
                s.fetch_add(1, Ordering::SeqCst);
                let out = next.call(ex).await;
                if out.is_err() {
                    f.fetch_add(1, Ordering::SeqCst);
                }
                out
            }
        }));
        let ok = policy.wrap(BoxProcessor::sync(|mut ex: Exchange| {
            ex.message.body = Body::from("inside");
            Ok(ex)
        }));
        let out = ok.process(Exchange::new("x")).await.unwrap();
        assert_eq!(out.message.body, Body::from("inside"));
        let failing = policy.wrap(BoxProcessor::sync(|_ex: Exchange| {
            Err(CamelError::processor("refused inside"))
        }));
        assert!(failing.process(Exchange::new("y")).await.is_err());
        assert_eq!(seen.load(Ordering::SeqCst), 2);
        assert_eq!(failures.load(Ordering::SeqCst), 1);
    }
}
