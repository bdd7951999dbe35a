//! `to: nats:SUBJECT?exchange_pattern=InOut`: core NATS request/reply.
//!
//! The exchange's body (and its non-`Camel` headers) is sent as a request; the answer's
//! body and headers replace the message. No answer within `request_timeout` (default
//! 20 s, Camel's default) fails the exchange with a timeout; an answer carrying
//! `Nats-Service-Error` fails it with that text.

use std::sync::Arc;
use std::time::Duration;

use camel_api::{BoxProcessor, CamelError, Exchange};
use tokio::sync::OnceCell;

use super::consumer::{connect, SERVICE_ERROR_HEADER};

/// Sends each exchange as a request and waits for the answer.
#[derive(Debug)]
pub struct NatsRequester {
    subject: String,
    servers: String,
    timeout: Duration,
    connect_timeout: Duration,
    client: OnceCell<async_nats::Client>,
}

impl NatsRequester {
    /// A requester on `subject`.
    pub fn new(
        subject: &str,
        servers: &str,
        timeout: Option<Duration>,
        connect_timeout: Option<Duration>,
    ) -> Self {
        NatsRequester {
            subject: subject.to_string(),
            servers: servers.to_string(),
            timeout: timeout.unwrap_or(Duration::from_secs(20)),
            connect_timeout: connect_timeout.unwrap_or(Duration::from_secs(5)),
            client: OnceCell::new(),
        }
    }

    /// The route step.
    pub fn processor(self: Arc<Self>) -> BoxProcessor {
        BoxProcessor::from_fn(move |exchange| {
            let this = self.clone();
            async move { this.request(exchange).await }
        })
        .named("nats-request")
    }

    async fn request(&self, mut exchange: Exchange) -> Result<Exchange, CamelError> {
        let client = self
            .client
            .get_or_try_init(|| connect(&self.servers, self.connect_timeout, &self.subject))
            .await?;
        let mut headers = async_nats::HeaderMap::new();
        for (name, value) in exchange.message.headers.iter() {
            // The route's control headers stay in the process, as on every transport.
            if !camel_api::inbound::is_control_header(name) {
                headers.insert(name, value.to_string().as_str());
            }
        }
        let request = async_nats::Request::new()
            .payload(exchange.message.body.to_bytes())
            .headers(headers)
            .timeout(Some(self.timeout));
        let answer = client
            .send_request(self.subject.clone(), request)
            .await
            .map_err(|e| CamelError::external(format!("NATS request to `{}`", self.subject), e))?;
        if let Some(error) = answer
            .headers
            .as_ref()
            .and_then(|h| h.get(SERVICE_ERROR_HEADER))
        {
            return Err(CamelError::processor(format!(
                "the NATS service on `{}` answered with an error: {}",
                self.subject,
                error.as_str()
            )));
        }
        let answered = super::consumer::to_exchange(&answer);
        exchange.message.body = answered.message.body;
        for (name, value) in answered.message.headers.iter() {
            exchange
                .message
                .headers
                .insert(name.to_string(), value.clone());
        }
        Ok(exchange)
    }
}
