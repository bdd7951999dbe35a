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
    /// The route the endpoint was made for (named in the producer's warnings).
    route_id: Option<String>,
    /// `fence=true`: the lease table publishes are checked against (ADR 0141).
    fence: Option<String>,
}

impl OutboxEndpoint {
    pub(crate) fn new(
        uri: Arc<str>,
        shared: Arc<SharedOutbox>,
        group_key: Option<BoxExpression>,
        route_id: Option<String>,
        fence: Option<String>,
    ) -> Self {
        OutboxEndpoint {
            uri,
            shared,
            group_key,
            route_id,
            fence,
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
            self.route_id.clone(),
            self.fence.clone(),
        ))
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        if self.group_key.is_some() {
            return Err(CamelError::invalid_uri(
                self.uri.clone(),
                "`group_key` belongs on the producer (`to`); the relay reads the key stored with each message",
            ));
        }
        // Taken here, as the route starts, so a second relay on a SQLite file fails the
        // start itself rather than running beside the first.
        let lock = self.shared.relay_lock()?;
        Ok(Box::new(OutboxConsumer::new(self.shared.clone(), lock)))
    }

    fn delivers_in_order(&self) -> bool {
        // A configuration error is reported when the relay starts; until then assume the
        // default, ordered per group.
        self.shared
            .config()
            .map_or(true, |c| c.ordering != crate::Ordering::None)
    }
}
