//! The `rabbitmq:` component.

use std::sync::Arc;

use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Consumer, Endpoint, EndpointUri,
};

use crate::consumer::RabbitMqConsumer;
use crate::options::RabbitMqOptions;
use crate::producer::RabbitMqProducer;

/// Makes `rabbitmq:EXCHANGE` endpoints.
#[derive(Debug, Clone, Default)]
pub struct RabbitMqComponent;

impl RabbitMqComponent {
    /// The component.
    pub fn new() -> Self {
        RabbitMqComponent
    }
}

impl Component for RabbitMqComponent {
    fn scheme(&self) -> &str {
        "rabbitmq"
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let options = RabbitMqOptions::from_uri(uri)?;
        Ok(Arc::new(RabbitMqEndpoint {
            producer: Arc::new(RabbitMqProducer::new(options.clone())),
            options,
        }))
    }
}

#[derive(Debug)]
struct RabbitMqEndpoint {
    options: RabbitMqOptions,
    producer: Arc<RabbitMqProducer>,
}

impl Endpoint for RabbitMqEndpoint {
    fn uri(&self) -> &str {
        &self.options.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Ok(self.producer.clone().processor())
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        Ok(Box::new(RabbitMqConsumer::new(self.options.clone())))
    }
}
