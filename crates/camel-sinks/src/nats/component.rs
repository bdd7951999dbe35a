//! The `nats:` component.

use std::sync::Arc;

use camel_api::{CamelError, Component, ComponentContext, Endpoint, EndpointUri};

use super::codec::NatsCodec;
use super::consumer::NatsConsumer;
use super::jetstream::{JetStreamConsumer, JetStreamOptions, JETSTREAM_CONSUMER_PARAMETERS};
use super::request::NatsRequester;
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
    "request_timeout",
    "exchange_pattern",
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
        // The consumer's and the requester's parameters are read from a copy; the sink
        // reads the rest and rejects what neither knows.
        let mut copy = uri.parameters.clone();
        let subject = required_path(&raw, uri.path(), "a subject, as in `nats:orders.created`")?;
        let servers = copy
            .take_str("servers")
            .unwrap_or_else(|| DEFAULT_SERVERS.to_string());
        let durable = JetStreamOptions::take_parameters(
            &subject,
            &servers,
            copy.take_str("stream"),
            &mut copy,
        )?;
        let connect_timeout = copy.take_duration("connect_timeout")?;
        let request_timeout = copy.take_duration("request_timeout")?;
        let requester = match copy.take_choice("exchange_pattern", &["InOnly", "InOut"])? {
            Some("InOut") => Some(Arc::new(NatsRequester::new(
                &subject,
                &servers,
                request_timeout,
                connect_timeout,
            ))),
            _ => None,
        };
        let mut known: Vec<&str> = NATS_PARAMETERS.to_vec();
        known.extend_from_slice(JETSTREAM_CONSUMER_PARAMETERS);
        let sink = SinkEndpoint::build(uri, ctx, self.registry.clone(), &known, |path, params| {
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
            // Read above from the copy; taken here so they are not left over.
            for name in JETSTREAM_CONSUMER_PARAMETERS {
                params.take_str(name);
            }
            params.take_str("request_timeout");
            params.take_str("exchange_pattern");
            Ok(codec)
        })?;
        Ok(Arc::new(NatsEndpoint {
            sink,
            durable,
            requester,
            connect_timeout,
        }))
    }
}

/// A sink endpoint that can also subscribe (core or durable JetStream) and send requests.
#[derive(Debug)]
struct NatsEndpoint {
    sink: Arc<dyn Endpoint>,
    durable: Option<JetStreamOptions>,
    requester: Option<Arc<NatsRequester>>,
    connect_timeout: Option<std::time::Duration>,
}

impl Endpoint for NatsEndpoint {
    fn uri(&self) -> &str {
        self.sink.uri()
    }

    fn producer(&self) -> Result<camel_api::BoxProcessor, CamelError> {
        match &self.requester {
            Some(requester) => Ok(requester.clone().processor()),
            None => self.sink.producer(),
        }
    }

    fn consumer(&self) -> Result<Box<dyn camel_api::Consumer>, CamelError> {
        if let Some(options) = &self.durable {
            return Ok(Box::new(JetStreamConsumer::new(options.clone())));
        }
        let mut consumer = NatsConsumer::from_uri(self.uri())?;
        if let Some(t) = self.connect_timeout {
            consumer = consumer.with_connect_timeout(t);
        }
        Ok(Box::new(consumer))
    }
}
