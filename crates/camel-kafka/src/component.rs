//! The component and its endpoints.

use std::sync::Arc;

use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Consumer, Endpoint, EndpointUri,
};

use crate::config::{ConsumerSettings, ProducerSettings};
use crate::consumer::KafkaConsumer;

/// Makes `kafka:TOPIC` endpoints.
#[derive(Debug, Default, Clone)]
pub struct KafkaComponent;

impl KafkaComponent {
    /// The component.
    pub fn new() -> Self {
        KafkaComponent
    }
}

impl Component for KafkaComponent {
    fn scheme(&self) -> &str {
        "kafka"
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        // The URI serves `from` or `to`; which one is known only when the route asks
        // for a consumer or a producer, so both are checked then, each against its own
        // parameters. The producer's key expression needs `ctx`: it is compiled now,
        // when the URI has no consumer parameter.
        let consumer_only = crate::config::CONSUMER_PARAMETERS
            .iter()
            .any(|p| uri.parameters.contains(p));
        let producer = if consumer_only {
            None
        } else {
            Some(ProducerSettings::from_uri(&uri, ctx)?)
        };
        Ok(Arc::new(KafkaEndpoint {
            raw: uri.as_str().to_string(),
            uri,
            producer,
        }))
    }
}

#[derive(Debug)]
struct KafkaEndpoint {
    raw: String,
    uri: EndpointUri,
    producer: Option<ProducerSettings>,
}

impl Endpoint for KafkaEndpoint {
    fn uri(&self) -> &str {
        &self.raw
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        match &self.producer {
            Some(settings) => crate::producer::processor(settings.clone()),
            None => Err(CamelError::invalid_uri(
                self.raw.clone(),
                "this URI has consumer parameters (`group_id`, …): use it in `from`",
            )),
        }
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        let settings = ConsumerSettings::from_uri(&self.uri)?;
        Ok(Box::new(KafkaConsumer::new(settings)))
    }
}
