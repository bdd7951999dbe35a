//! The `aws2-s3:` component.

use std::sync::Arc;

use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Consumer, Endpoint, EndpointUri,
    StepLifecycle,
};

use crate::client::S3Client;
use crate::consumer::S3Consumer;
use crate::options::S3Options;
use crate::producer::S3Producer;

/// Makes `aws2-s3://BUCKET` endpoints.
#[derive(Debug, Clone, Default)]
pub struct S3Component;

impl S3Component {
    /// The component.
    pub fn new() -> Self {
        S3Component
    }
}

impl Component for S3Component {
    fn scheme(&self) -> &str {
        "aws2-s3"
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let options = S3Options::from_uri(uri)?;
        let client = Arc::new(S3Client::new(options.connection.clone()));
        Ok(Arc::new(S3Endpoint {
            producer: Arc::new(S3Producer::new(
                options.bucket.clone(),
                client.clone(),
                options.producer.clone(),
            )),
            client,
            options,
        }))
    }
}

#[derive(Debug)]
struct S3Endpoint {
    options: S3Options,
    client: Arc<S3Client>,
    producer: Arc<S3Producer>,
}

impl Endpoint for S3Endpoint {
    fn uri(&self) -> &str {
        &self.options.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Ok(self.producer.clone().processor())
    }

    fn lifecycle(&self) -> Option<Arc<dyn StepLifecycle>> {
        self.producer
            .streaming()
            .map(|s| s as Arc<dyn StepLifecycle>)
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        Ok(Box::new(S3Consumer::new(
            self.options.bucket.clone(),
            self.client.clone(),
            self.options.consumer.clone(),
        )))
    }
}
