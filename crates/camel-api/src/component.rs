use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::{
    BoxExpression, BoxPredicate, BoxProcessor, CamelError, Consumer, EndpointUri, StepLifecycle,
};

/// A factory of endpoints for one URI scheme (`direct`, `file`, `outbox`, …).
///
/// Components are registered in the context by scheme; the route compiler asks the
/// component for an endpoint for every URI a route names.
pub trait Component: Send + Sync + fmt::Debug + 'static {
    /// The URI scheme this component serves.
    fn scheme(&self) -> &str;

    /// Creates the endpoint for `uri`. Take the parameters you know from
    /// `uri.parameters`, then call `finish` so unknown ones are reported.
    fn endpoint(
        &self,
        uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError>;

    /// Transactions on this component's database named `datasource` (its default database
    /// when `None`), for the `transacted` step; `Ok(None)` when the component has none.
    fn transaction_manager(
        &self,
        datasource: Option<&str>,
        ctx: &dyn ComponentContext,
    ) -> Result<Option<Arc<dyn crate::transaction::TransactionManager>>, CamelError> {
        let _ = (datasource, ctx);
        Ok(None)
    }

    /// The context began to stop (`Stopping`, before its routes stop) or to start
    /// (`Starting`). During a stop no route starts, so a wait only a starting route could
    /// end (a `direct` producer waiting for a consumer) ends now instead of holding the
    /// stop until its deadline.
    fn context_changed(&self, change: ContextChange) {
        let _ = change;
    }

    /// Exchanges this component still holds that no route will take, by address (an
    /// in-memory `seda` queue's contents): asked once the routes of a stopping context
    /// have stopped, for the shutdown report. They are lost when the process exits.
    fn left_at_stop(&self) -> Vec<(String, usize)> {
        Vec::new()
    }

    /// Whether the destination `uri` names keeps the order in which messages are sent to
    /// it: `Some(false)` for one known not to (an SQS standard queue), `Some(true)` for one
    /// known to, `None` when the component does not say. A route whose source hands out
    /// ordered exchanges ([`Endpoint::delivers_in_order`]) warns at start about each `to`
    /// answering `Some(false)`. Read from the URI alone: no endpoint is built.
    fn keeps_order(&self, uri: &EndpointUri) -> Option<bool> {
        let _ = uri;
        None
    }
}

/// What [`Component::context_changed`] announces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContextChange {
    /// `start` was called: routes may start from now on.
    Starting,
    /// `stop` was called: every route is about to stop and none will start.
    Stopping,
}

/// One configured address: a producer to send to it, a consumer to read from it.
pub trait Endpoint: Send + Sync + fmt::Debug + 'static {
    /// The URI the endpoint was made from.
    fn uri(&self) -> &str;

    /// A producer: the processor a `to` step calls.
    fn producer(&self) -> Result<BoxProcessor, CamelError>;

    /// A consumer: the source of a route's exchanges (`from`).
    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        Err(CamelError::invalid_uri(
            self.uri().to_string(),
            "this component cannot be used in `from`",
        ))
    }

    /// A polling consumer: reads one exchange on demand (the `poll_enrich` step). The
    /// default says the endpoint cannot be polled.
    fn poller(&self) -> Result<Arc<dyn Poller>, CamelError> {
        Err(CamelError::invalid_uri(
            self.uri().to_string(),
            "this component cannot be polled (`poll_enrich` reads from `seda:`)",
        ))
    }

    /// Background work owned by this endpoint's producer (a batcher, a pool), drained with
    /// the route.
    fn lifecycle(&self) -> Option<Arc<dyn StepLifecycle>> {
        None
    }

    /// As a source: true when the consumer hands out exchanges in an order their
    /// destinations are meant to keep (an outbox relayed in order per group). The route
    /// then warns at start about each `to` whose component says it does not keep order
    /// ([`Component::keeps_order`]).
    fn delivers_in_order(&self) -> bool {
        false
    }
}

/// Reads one exchange when asked, instead of running a route (Camel's
/// `PollingConsumer`).
#[async_trait::async_trait]
pub trait Poller: Send + Sync + fmt::Debug + 'static {
    /// Takes the next exchange: waits at most `timeout` (as long as it takes when `None`);
    /// `Ok(None)` when nothing arrived in time.
    async fn poll(
        &self,
        timeout: Option<std::time::Duration>,
    ) -> Result<Option<crate::Exchange>, CamelError>;
}

/// What a component may ask of the context while it builds an endpoint.
pub trait ComponentContext: Send + Sync {
    /// Compiles an expression in `language` (`simple`, `jsonpath`, `header`, `constant`).
    fn expression(&self, language: &str, text: &str) -> Result<BoxExpression, CamelError>;

    /// Compiles a predicate in `language`.
    fn predicate(&self, language: &str, text: &str) -> Result<BoxPredicate, CamelError>;

    /// A producer for another URI (a dead-letter endpoint, say).
    fn producer(&self, uri: &str) -> Result<BoxProcessor, CamelError>;

    /// The endpoint of another URI, for a component that wraps one (`master:` runs
    /// another endpoint's consumer). The default says the context cannot.
    fn endpoint(&self, uri: &str) -> Result<Arc<dyn Endpoint>, CamelError> {
        Err(CamelError::invalid_uri(
            uri.to_string(),
            "this context cannot build endpoints for other components",
        ))
    }

    /// A shared resource registered in the context under `name` (a datasource, a client).
    fn resource(&self, name: &str) -> Option<Arc<dyn Any + Send + Sync>>;

    /// The id of the route being compiled, when there is one.
    fn route_id(&self) -> Option<&str>;

    /// The context's database pools, one per database, shared by every component and
    /// closed when the context stops (ADR 0085). `None` outside a context (a component
    /// tested on its own): the component then keeps pools of its own.
    fn pools(&self) -> Option<crate::pools::Pools> {
        None
    }
}
