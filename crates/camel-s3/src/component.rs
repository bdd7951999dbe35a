//! The `aws2-s3:` component.

use std::sync::{Arc, Mutex, PoisonError, Weak};

use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Consumer, ContextChange, Endpoint,
    EndpointUri, StepLifecycle,
};

use crate::client::S3Client;
use crate::consumer::S3Consumer;
use crate::options::S3Options;
use crate::producer::S3Producer;
use crate::streaming::StreamingUpload;

/// Makes `aws2-s3://BUCKET` endpoints.
#[derive(Debug, Clone, Default)]
pub struct S3Component {
    /// The streaming uploads of the endpoints made, told when the context stops.
    uploads: Arc<Mutex<Vec<Weak<StreamingUpload>>>>,
}

impl S3Component {
    /// The component.
    pub fn new() -> Self {
        S3Component::default()
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
        let producer = Arc::new(S3Producer::new(
            options.bucket.clone(),
            client.clone(),
            options.producer.clone(),
        ));
        if let Some(upload) = producer.streaming() {
            let mut uploads = self.uploads.lock().unwrap_or_else(PoisonError::into_inner);
            uploads.retain(|u| u.strong_count() > 0);
            uploads.push(Arc::downgrade(&upload));
        }
        Ok(Arc::new(S3Endpoint {
            producer,
            client,
            options,
        }))
    }

    /// When the context stops, streaming uploads store their open objects at once, and
    /// each body after that, so the exchanges waiting for them end and the routes drain
    /// without waiting for their stop deadline.
    fn context_changed(&self, change: ContextChange) {
        if change != ContextChange::Stopping {
            return;
        }
        let uploads = self.uploads.lock().unwrap_or_else(PoisonError::into_inner);
        for upload in uploads.iter().filter_map(Weak::upgrade) {
            upload.store_without_waiting();
        }
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
