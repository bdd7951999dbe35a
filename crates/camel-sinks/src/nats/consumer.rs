//! `from: nats:SUBJECT`: a core NATS subscription feeding a route.
//!
//! It exists so a route can read back what a sink published (the example shows the
//! order per group this way); it is a plain at-most-once subscriber, not a durable
//! JetStream consumer.

use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use camel_api::{Body, CamelError, Consumer, ConsumerContext, EndpointUri, Exchange};
use futures::StreamExt;

/// Header with the subject a message arrived on.
pub const SUBJECT_HEADER: &str = "CamelNatsSubject";

/// A subscriber on one subject (wildcards allowed).
#[derive(Debug)]
pub struct NatsConsumer {
    subject: String,
    servers: String,
}

impl NatsConsumer {
    /// Reads the subject and `servers` from a `nats:` URI.
    pub fn from_uri(raw: &str) -> Result<Self, CamelError> {
        let mut uri = EndpointUri::parse(raw)?;
        let servers = uri
            .parameters
            .take_str("servers")
            .unwrap_or_else(|| "nats://127.0.0.1:4222".to_string());
        Ok(NatsConsumer {
            subject: uri.path().to_string(),
            servers,
        })
    }
}

fn to_exchange(message: async_nats::Message) -> Exchange {
    let body = match std::str::from_utf8(&message.payload) {
        Ok(text) => Body::from(text),
        Err(_) => Body::Bytes(Bytes::clone(&message.payload)),
    };
    let mut exchange = Exchange::new(body).with_header(SUBJECT_HEADER, message.subject.as_str());
    if let Some(headers) = &message.headers {
        for (name, values) in headers.iter() {
            if let Some(v) = values.first() {
                exchange
                    .message
                    .headers
                    .insert(name.to_string(), v.as_str());
            }
        }
    }
    exchange
}

#[async_trait]
impl Consumer for NatsConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let servers: Vec<&str> = self.servers.split(',').map(str::trim).collect();
        let client = async_nats::ConnectOptions::new()
            .connection_timeout(Duration::from_secs(5))
            .connect(servers)
            .await
            .map_err(|e| {
                CamelError::external(format!("connecting to NATS for `{}`", self.subject), e)
            })?;
        let mut subscription = client
            .subscribe(self.subject.clone())
            .await
            .map_err(|e| CamelError::external(format!("subscribing to `{}`", self.subject), e))?;
        loop {
            tokio::select! {
                _ = ctx.cancelled() => break,
                message = subscription.next() => match message {
                    None => break,
                    Some(m) => {
                        // A failed exchange is the route's to report; the subscriber goes on.
                        let _ = ctx.send(to_exchange(m)).await;
                    }
                },
            }
        }
        let _ = subscription.unsubscribe().await;
        Ok(())
    }
}
