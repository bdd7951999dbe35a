//! The `nats:` component.

use std::sync::Arc;

use camel_api::{CamelError, Component, ComponentContext, Endpoint, EndpointUri};

use super::codec::NatsCodec;
use super::consumer::NatsConsumer;
use crate::attributes::HeaderSelection;
use crate::batcher::BatcherRegistry;
use crate::endpoint::registry_constructors;
use crate::endpoint::{required_path, SinkEndpoint};

/// Parameters of `nats:` besides the common sink and batch ones.
pub const NATS_PARAMETERS: &[&str] = &[
    "servers",
    "jetstream",
    "headers",
    "connect_timeout",
    "stream",
];

const DEFAULT_SERVERS: &str = "nats://127.0.0.1:4222";

/// Makes `nats:SUBJECT` endpoints: a batching sink in `to`, a subscriber in `from`.
#[derive(Debug, Clone)]
pub struct NatsComponent {
    registry: Arc<BatcherRegistry>,
}

registry_constructors!(NatsComponent);

impl Component for NatsComponent {
    fn scheme(&self) -> &str {
        "nats"
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.as_str().to_string();
        let sink = SinkEndpoint::build(
            uri,
            ctx,
            self.registry.clone(),
            NATS_PARAMETERS,
            |path, params| {
                let subject = required_path(&raw, path, "a subject, as in `nats:orders.created`")?;
                let servers = params
                    .take_str("servers")
                    .unwrap_or_else(|| DEFAULT_SERVERS.to_string());
                let jetstream = params.take_bool("jetstream")?.unwrap_or(true);
                let headers = HeaderSelection::take_parameter(params)?;
                let mut codec = NatsCodec::new(&subject, &servers, jetstream).with_headers(headers);
                if let Some(stream) = params.take_str("stream") {
                    codec = codec.with_stream(&stream);
                }
                if let Some(t) = params.take_duration("connect_timeout")? {
                    codec = codec.with_connect_timeout(t);
                }
                Ok(codec)
            },
        )?;
        Ok(Arc::new(NatsEndpoint { sink }))
    }
}

/// A sink endpoint that can also subscribe.
#[derive(Debug)]
struct NatsEndpoint {
    sink: Arc<dyn Endpoint>,
}

impl Endpoint for NatsEndpoint {
    fn uri(&self) -> &str {
        self.sink.uri()
    }

    fn producer(&self) -> Result<camel_api::BoxProcessor, CamelError> {
        self.sink.producer()
    }

    fn consumer(&self) -> Result<Box<dyn camel_api::Consumer>, CamelError> {
        NatsConsumer::from_uri(self.uri()).map(|c| Box::new(c) as Box<dyn camel_api::Consumer>)
    }
}
