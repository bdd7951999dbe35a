//! The `spring-redis:` component (also registered as `redis:`).

use std::sync::Arc;

use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Consumer, Endpoint, EndpointUri,
};

use crate::consumer::RedisConsumer;
use crate::options::RedisOptions;
use crate::producer::RedisProducer;

/// Makes `spring-redis:HOST:PORT` endpoints, under the scheme it was made with.
#[derive(Debug, Clone)]
pub struct RedisComponent {
    scheme: &'static str,
}

impl RedisComponent {
    /// `spring-redis:`, Camel's name.
    pub fn spring_redis() -> Self {
        RedisComponent {
            scheme: "spring-redis",
        }
    }

    /// `redis:`, the name older Camel routes use.
    pub fn redis() -> Self {
        RedisComponent { scheme: "redis" }
    }
}

impl Component for RedisComponent {
    fn scheme(&self) -> &str {
        self.scheme
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let options = RedisOptions::from_uri(uri)?;
        Ok(Arc::new(RedisEndpoint {
            producer: Arc::new(RedisProducer::new(options.clone())),
            options,
        }))
    }
}

#[derive(Debug)]
struct RedisEndpoint {
    options: RedisOptions,
    producer: Arc<RedisProducer>,
}

impl Endpoint for RedisEndpoint {
    fn uri(&self) -> &str {
        &self.options.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Ok(self.producer.clone().processor())
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        Ok(Box::new(RedisConsumer::new(self.options.clone())?))
    }
}
