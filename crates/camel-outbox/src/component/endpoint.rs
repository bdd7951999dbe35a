//! One `outbox:NAME` endpoint: a producer that publishes, a consumer that relays.

use std::sync::Arc;

use camel_api::{BoxExpression, BoxProcessor, CamelError, Consumer, Endpoint};

use super::consumer::OutboxConsumer;
use super::producer;
use super::SharedOutbox;

/// An `outbox:` endpoint.
#[derive(Debug)]
pub(crate) struct OutboxEndpoint {
    uri: Arc<str>,
    shared: Arc<SharedOutbox>,
    group_key: Option<BoxExpression>,
}

impl OutboxEndpoint {
    pub(crate) fn new(
        uri: Arc<str>,
        shared: Arc<SharedOutbox>,
        group_key: Option<BoxExpression>,
    ) -> Self {
        OutboxEndpoint {
            uri,
            shared,
            group_key,
        }
    }
}

impl Endpoint for OutboxEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Ok(producer::processor(
            self.shared.clone(),
            self.group_key.clone(),
        ))
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        if self.group_key.is_some() {
            return Err(CamelError::invalid_uri(
                self.uri.clone(),
                "`group_key` belongs on the producer (`to`); the relay reads the key stored with each message",
            ));
        }
        Ok(Box::new(OutboxConsumer::new(self.shared.clone())))
    }
}
