//! The consumer: the relay, handing each message to the route's pipeline.

use std::sync::Arc;

use async_trait::async_trait;
use camel_api::{CamelError, Consumer, ConsumerContext};

use super::convert::to_exchange;
use super::SharedOutbox;
use crate::worker::Relay;

/// The `from: outbox:NAME` consumer.
#[derive(Debug)]
pub(crate) struct OutboxConsumer {
    shared: Arc<SharedOutbox>,
}

impl OutboxConsumer {
    pub(crate) fn new(shared: Arc<SharedOutbox>) -> Self {
        OutboxConsumer { shared }
    }
}

#[async_trait]
impl Consumer for OutboxConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let outbox = self.shared.outbox().await?.clone();
        let cancel = ctx.cancellation().clone();
        let relay = Relay::new(outbox, move |message| {
            let ctx = ctx.clone();
            async move { ctx.send(to_exchange(message)).await.map(|_| ()) }
        });
        relay.run(cancel).await.map_err(Into::into)
    }
}
