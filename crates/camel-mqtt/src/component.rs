//! The `paho-mqtt5:` and `paho:` components.

use std::sync::Arc;

use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Consumer, Endpoint, EndpointUri,
};

use crate::consumer::MqttConsumer;
use crate::options::{MqttOptions, Protocol};
use crate::producer::MqttProducer;

/// Makes `paho-mqtt5:TOPIC` (MQTT 5) or `paho:TOPIC` (MQTT 3.1.1) endpoints.
#[derive(Debug, Clone)]
pub struct MqttComponent {
    protocol: Protocol,
}

impl MqttComponent {
    /// `paho-mqtt5:`, MQTT 5.
    pub fn mqtt5() -> Self {
        MqttComponent {
            protocol: Protocol::V5,
        }
    }

    /// `paho:`, MQTT 3.1.1.
    pub fn mqtt311() -> Self {
        MqttComponent {
            protocol: Protocol::V311,
        }
    }
}

impl Component for MqttComponent {
    fn scheme(&self) -> &str {
        match self.protocol {
            Protocol::V5 => "paho-mqtt5",
            Protocol::V311 => "paho",
        }
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let options = MqttOptions::from_uri(uri, self.protocol)?;
        Ok(Arc::new(MqttEndpoint {
            producer: Arc::new(MqttProducer::new(options.clone())),
            options,
        }))
    }
}

#[derive(Debug)]
struct MqttEndpoint {
    options: MqttOptions,
    producer: Arc<MqttProducer>,
}

impl Endpoint for MqttEndpoint {
    fn uri(&self) -> &str {
        &self.options.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Ok(self.producer.clone().processor())
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        Ok(Box::new(MqttConsumer::new(self.options.clone())?))
    }
}
