//! The three REST calls of a subscription: `pull`, `acknowledge` and
//! `modifyAckDeadline`: the whole transport with `synchronous_pull=true` (ADR 0159), and
//! the settling path of a streaming pull whose stream broke (ADR 0171).

use std::collections::HashMap;
use std::time::Duration;

use camel_api::CamelError;
use serde::Deserialize;
use serde_json::json;

use super::token::TokenSource;

/// Pub/Sub accepts at most this many ack ids per `acknowledge`/`modifyAckDeadline`.
const MAX_ACK_IDS: usize = 2500;

/// Bound of a `pull`: the service holds a pull open until a message comes (the emulator
/// about 90 s), so this is longer than that; a pull cut short only delays its messages
/// until their deadline ends.
const PULL_TIMEOUT: Duration = Duration::from_secs(120);
/// Bound of an `acknowledge` or `modifyAckDeadline` (and of connecting): a hung
/// service must not hold a pull loop, a settling or a shutdown without end.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// One subscription's client.
#[derive(Debug)]
pub(crate) struct SubscriptionClient {
    http: reqwest::Client,
    url: String,
    token: TokenSource,
}

/// A received message, pulled or streamed.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReceivedMessage {
    pub(crate) ack_id: String,
    #[serde(default)]
    pub(crate) message: PubsubMessage,
    #[serde(default)]
    pub(crate) delivery_attempt: Option<i64>,
}

/// The message itself, its data decoded (REST sends it in base64, gRPC raw).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PubsubMessage {
    #[serde(default, deserialize_with = "base64_data")]
    pub(crate) data: bytes::Bytes,
    #[serde(default)]
    pub(crate) attributes: HashMap<String, String>,
    #[serde(default)]
    pub(crate) message_id: String,
    #[serde(default)]
    pub(crate) publish_time: String,
    #[serde(default)]
    pub(crate) ordering_key: String,
}

/// REST's base64 `data`, decoded; text that is not base64 is kept as it is.
fn base64_data<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bytes::Bytes, D::Error> {
    use base64::Engine;
    let text = String::deserialize(d)?;
    Ok(
        match base64::engine::general_purpose::STANDARD.decode(text.as_bytes()) {
            Ok(raw) => bytes::Bytes::from(raw),
            Err(_) => bytes::Bytes::from(text),
        },
    )
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PullAnswer {
    #[serde(default)]
    received_messages: Vec<ReceivedMessage>,
}

impl SubscriptionClient {
    /// A client of `subscription` (`projects/P/subscriptions/S`) at `base`.
    pub(crate) fn new(base: &str, subscription: &str, token: TokenSource) -> Self {
        SubscriptionClient {
            http: reqwest::Client::builder()
                .connect_timeout(CALL_TIMEOUT)
                .build()
                .unwrap_or_default(),
            url: format!("{base}/v1/{subscription}"),
            token,
        }
    }

    async fn call(
        &self,
        verb: &str,
        body: serde_json::Value,
        timeout: Duration,
    ) -> Result<String, CamelError> {
        let mut request = self
            .http
            .post(format!("{}:{verb}", self.url))
            .timeout(timeout)
            .json(&body);
        if let Some(token) = self.token.bearer().await? {
            request = request.bearer_auth(token);
        }
        let response = request
            .send()
            .await
            .map_err(|e| CamelError::external(format!("Pub/Sub {verb}"), e))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|e| CamelError::external(format!("Pub/Sub {verb}"), e))?;
        if status.is_success() {
            Ok(text)
        } else {
            Err(CamelError::processor(format!(
                "Pub/Sub {verb}: HTTP {status}: {text}"
            )))
        }
    }

    /// Up to `max` messages; waits for the first one as long as the service holds the
    /// request open (the emulator: about 90 seconds; at most [`PULL_TIMEOUT`]) and may
    /// then answer none.
    pub(crate) async fn pull(&self, max: u32) -> Result<Vec<ReceivedMessage>, CamelError> {
        let text = self
            .call("pull", json!({ "maxMessages": max }), PULL_TIMEOUT)
            .await?;
        let answer: PullAnswer = serde_json::from_str(&text)
            .map_err(|e| CamelError::processor(format!("Pub/Sub pull answered {e}")))?;
        Ok(answer.received_messages)
    }

    /// Acknowledges: the messages are done.
    pub(crate) async fn acknowledge(&self, ack_ids: &[String]) -> Result<(), CamelError> {
        for chunk in ack_ids.chunks(MAX_ACK_IDS) {
            self.call("acknowledge", json!({ "ackIds": chunk }), CALL_TIMEOUT)
                .await?;
        }
        Ok(())
    }

    /// Sets the messages' ack deadline to `seconds` from now; 0 hands them back for
    /// redelivery at once (a nack).
    pub(crate) async fn modify_ack_deadline(
        &self,
        ack_ids: &[String],
        seconds: u32,
    ) -> Result<(), CamelError> {
        for chunk in ack_ids.chunks(MAX_ACK_IDS) {
            self.call(
                "modifyAckDeadline",
                json!({ "ackIds": chunk, "ackDeadlineSeconds": seconds }),
                CALL_TIMEOUT,
            )
            .await?;
        }
        Ok(())
    }
}
