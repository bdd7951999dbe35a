//! `from: nats:SUBJECT`: a core NATS subscription feeding a route.
//!
//! A plain at-most-once subscriber (the durable, at-least-once consumer is
//! [`super::JetStreamConsumer`], chosen by `durable_name`). A message that carries a reply
//! subject (a NATS request) is answered with the route's resulting body, as Camel's nats
//! consumer does; a failed exchange is answered with an empty body and the
//! `Nats-Service-Error` header.

use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use camel_api::inbound::{admits_transport_header, is_control_header};
use camel_api::{
    Body, CamelError, Consumer, ConsumerContext, EndpointUri, Exchange, ExchangePattern,
};
use futures::StreamExt;

/// Header with the subject a message arrived on.
pub const SUBJECT_HEADER: &str = "CamelNatsSubject";

/// Header of a request's answer when the route failed: the error text.
pub const SERVICE_ERROR_HEADER: &str = "Nats-Service-Error";

/// Prefixes of NATS headers that never become exchange headers, besides the framework's
/// `Camel*` control headers (which include this consumer's own `CamelNats*`): the
/// `Nats-` headers are NATS's own protocol headers (`Nats-Msg-Id`, `Nats-Expected-*`,
/// `Nats-Rollup`, `Nats-TTL`, `Nats-Service-Error`), which the server, a JetStream
/// publish or a requester obeys; what the consumer knows of the message it gives as
/// `CamelNats*` headers instead.
pub const RESERVED_HEADER_PREFIXES: &[&str] = &["Nats-"];

/// A subscriber on one subject (wildcards allowed).
#[derive(Debug)]
pub struct NatsConsumer {
    subject: String,
    servers: String,
    connect_timeout: Duration,
}

impl NatsConsumer {
    /// Reads the subject and `servers` from a `nats:` URI.
    pub fn from_uri(raw: &str) -> Result<Self, CamelError> {
        let mut uri = EndpointUri::parse(raw)?;
        let servers = uri
            .parameters
            .take_str("servers")
            .unwrap_or_else(|| "nats://127.0.0.1:4222".to_string());
        Ok(NatsConsumer::new(uri.path(), &servers))
    }

    /// A subscriber on `subject` at `servers` (comma-separated URLs).
    pub fn new(subject: &str, servers: &str) -> Self {
        NatsConsumer {
            subject: subject.to_string(),
            servers: servers.to_string(),
            connect_timeout: Duration::from_secs(5),
        }
    }

    /// Sets how long the first connection attempt may take.
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }
}

/// Connects to `servers` (comma-separated) for the endpoint on `subject`.
pub(crate) async fn connect(
    servers: &str,
    timeout: Duration,
    subject: &str,
) -> Result<async_nats::Client, CamelError> {
    let servers: Vec<&str> = servers.split(',').map(str::trim).collect();
    async_nats::ConnectOptions::new()
        .connection_timeout(timeout)
        .connect(servers)
        .await
        .map_err(|e| CamelError::external(format!("connecting to NATS for `{subject}`"), e))
}

/// The exchange of one message: its body, `CamelNatsSubject`, and the message's headers
/// that [`admits_transport_header`] admits (first value of each); a `Camel*` or `Nats-*`
/// header of the message is dropped, so a publisher cannot set a producer's control
/// header (`CamelSqlQuery`, `CamelHttpUri`) or this consumer's own headers.
pub(crate) fn to_exchange(message: &async_nats::Message) -> Exchange {
    let body = match std::str::from_utf8(&message.payload) {
        Ok(text) => Body::from(text),
        Err(_) => Body::Bytes(Bytes::clone(&message.payload)),
    };
    let mut exchange = Exchange::new(body).with_header(SUBJECT_HEADER, message.subject.as_str());
    if let Some(headers) = &message.headers {
        for (name, values) in headers.iter() {
            let name: &str = name.as_ref();
            if !admits_transport_header(name, RESERVED_HEADER_PREFIXES) {
                continue;
            }
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
        let client = connect(&self.servers, self.connect_timeout, &self.subject).await?;
        let mut subscription = client
            .subscribe(self.subject.clone())
            .await
            .map_err(|e| CamelError::external(format!("subscribing to `{}`", self.subject), e))?;
        loop {
            tokio::select! {
                _ = ctx.cancelled() => break,
                message = subscription.next() => match message {
                    None => break,
                    Some(m) => match m.reply.clone() {
                        // A failed exchange is the route's to report; the subscriber goes on.
                        None => {
                            let _ = ctx.send(to_exchange(&m)).await;
                        }
                        Some(reply) => {
                            let request = to_exchange(&m).with_pattern(ExchangePattern::InOut);
                            answer(&client, reply, ctx.send(request).await).await;
                        }
                    },
                },
            }
        }
        let _ = subscription.unsubscribe().await;
        let _ = client.flush().await;
        Ok(())
    }
}

/// Answers a request with the route's result.
async fn answer(
    client: &async_nats::Client,
    reply: async_nats::Subject,
    result: Result<Exchange, CamelError>,
) {
    let sent = match result {
        Ok(exchange) => {
            let mut headers = async_nats::HeaderMap::new();
            for (name, value) in exchange.message.headers.iter() {
                if is_control_header(name) {
                    continue;
                }
                headers.insert(name.as_ref(), value.to_string().as_str());
            }
            client
                .publish_with_headers(reply, headers, exchange.message.body.to_bytes())
                .await
        }
        Err(error) => {
            let mut headers = async_nats::HeaderMap::new();
            headers.insert(SERVICE_ERROR_HEADER, error.to_string().as_str());
            client
                .publish_with_headers(reply, headers, Bytes::new())
                .await
        }
    };
    if let Err(e) = sent {
        tracing::warn!(error = %e, "answering a NATS request failed");
    }
}
