//! `from: google-pubsub:PROJECT:SUBSCRIPTION` (or `pubsub:projects/P/subscriptions/S`):
//! at least once, by gRPC streaming pull (the default, ADR 0171) or REST pull
//! (`synchronous_pull=true`, ADR 0159).
//!
//! Each of `concurrent_consumers` loops takes a batch of up to `max_messages_per_poll`
//! messages (a pull's answer, or what a stream sends under that flow-control bound), runs
//! them through the route, then acknowledges the ones whose exchange succeeded at once
//! and hands the failed ones back (deadline 0) for redelivery: on the stream when
//! streaming (by REST when the stream broke meanwhile or the consumer is stopping, so
//! that nothing settled is lost with the stream). So at most `max_messages_per_poll ×
//! concurrent_consumers` messages are in flight. While an exchange runs, its deadline is
//! pushed forward (`ack_deadline` seconds at a time, for at most
//! `max_ack_extension_period`). Messages with the same ordering key never run at the
//! same time in this consumer: one key's messages of a pull run one after another (and
//! wait for another loop's run of that key), and after a failure the rest of that key's
//! messages are handed back unrun and run only after the failed one
//! ([`super::ordering`]).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use camel_api::inbound::admits_transport_header;
use camel_api::{CamelError, Consumer, ConsumerContext, Exchange};
use futures::future::join_all;
use serde_json::{Map, Value as Json};
use tokio::time::Instant;

use super::codec::MESSAGE_ID_HEADER;
use super::options::{AckMode, PubSubConsumerOptions};
use super::ordering::OrderingKeys;
use super::pull::{ReceivedMessage, SubscriptionClient};
use super::stream::{PullStream, StreamClient, StreamSettler};

/// Header: the ack id of the message (Camel's `GooglePubsubConstants.ACK_ID`).
pub const ACK_ID_HEADER: &str = "CamelGooglePubsubMsgAckId";
/// Header: when Pub/Sub received the message (RFC 3339 text).
pub const PUBLISH_TIME_HEADER: &str = "CamelGooglePubsubPublishTime";
/// Header: all attributes of the message as one JSON object, `Camel*` ones included.
pub const ATTRIBUTES_HEADER: &str = "CamelGooglePubsubAttributes";
/// Header: the ordering key, when the message has one.
pub const ORDERING_KEY_HEADER: &str = "CamelGooglePubsubOrderingKey";
/// Header: the delivery attempt (only on subscriptions with a dead-letter policy).
pub const DELIVERY_ATTEMPT_HEADER: &str = "CamelGooglePubsubDeliveryAttempt";

/// Attribute prefix Google keeps for itself: such attributes stay in
/// [`ATTRIBUTES_HEADER`] but never become headers of their own.
pub const RESERVED_ATTRIBUTE_PREFIXES: &[&str] = &["goog"];

/// How long a stopping stream waits for the service to end it.
const CLOSE_WITHIN: Duration = Duration::from_secs(5);

/// How long a pull loop waits after a pull whose messages were all handed back.
const HAND_BACK_PAUSE: Duration = Duration::from_millis(100);

/// The Pub/Sub subscription consumer.
#[derive(Debug)]
pub struct PubSubConsumer {
    client: Arc<SubscriptionClient>,
    /// None with `synchronous_pull=true`.
    stream: Option<Arc<StreamClient>>,
    options: Arc<PubSubConsumerOptions>,
}

impl PubSubConsumer {
    pub(crate) fn new(
        client: SubscriptionClient,
        stream: Option<StreamClient>,
        options: PubSubConsumerOptions,
    ) -> Self {
        PubSubConsumer {
            client: Arc::new(client),
            stream: stream.map(Arc::new),
            options: Arc::new(options),
        }
    }
}

#[async_trait]
impl Consumer for PubSubConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let puller = Arc::new(Puller {
            client: self.client.clone(),
            options: self.options.clone(),
            keys: OrderingKeys::new(Duration::from_secs(u64::from(self.options.ack_deadline))),
        });
        let loops = (0..self.options.concurrent_consumers).map(|_| {
            let (puller, ctx, stream) = (puller.clone(), ctx.clone(), self.stream.clone());
            tokio::spawn(async move {
                match stream {
                    Some(stream) => puller.stream_loop(&ctx, &stream).await,
                    None => puller.pull_loop(&ctx).await,
                }
            })
        });
        for r in join_all(loops).await {
            if let Err(e) = r {
                tracing::error!(subscription = %self.options.subscription, error = %e,
                    "a Pub/Sub pull loop panicked");
            }
        }
        Ok(())
    }
}

struct Puller {
    client: Arc<SubscriptionClient>,
    options: Arc<PubSubConsumerOptions>,
    keys: OrderingKeys,
}

/// What became of a pull's messages.
#[derive(Default)]
struct Settled {
    ack: Vec<String>,
    nack: Vec<String>,
    /// How many exchanges ran (failed ones included).
    ran: usize,
}

impl Puller {
    async fn pull_loop(&self, ctx: &ConsumerContext) {
        let o = &self.options;
        let mut backoff = Duration::from_millis(200);
        while !ctx.is_cancelled() {
            let pulled = tokio::select! {
                _ = ctx.cancelled() => return,
                r = self.client.pull(o.max_messages_per_poll) => r,
            };
            let messages = match pulled {
                Ok(m) => {
                    ctx.health().set_healthy();
                    backoff = Duration::from_millis(200);
                    m
                }
                Err(e) => {
                    tracing::warn!(subscription = %o.subscription, error = %e, retry_in = ?backoff,
                        "Pub/Sub pull failed; retrying");
                    ctx.health().set_failing(&e);
                    tokio::select! {
                        _ = ctx.cancelled() => return,
                        _ = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(30));
                    continue;
                }
            };
            if messages.is_empty() {
                continue;
            }
            // The exchanges that started finish and are settled even when cancelled
            // meanwhile: each settling call is bounded by the client's timeout.
            let settled = self.run_pull(ctx, messages, None).await;
            let ran = settled.ran;
            self.settle(settled, None).await;
            if ran == 0 {
                // All handed back (their keys wait for a failed message that is still
                // on its way): Pub/Sub may offer the same ones at once, so breathe.
                tokio::select! {
                    _ = ctx.cancelled() => return,
                    _ = tokio::time::sleep(HAND_BACK_PAUSE) => {}
                }
            }
        }
    }

    /// Streams until cancelled: one stream at a time, opened again (after a backoff when
    /// it failed) when the service ends it.
    async fn stream_loop(&self, ctx: &ConsumerContext, client: &StreamClient) {
        let o = &self.options;
        let mut backoff = Duration::from_millis(200);
        while !ctx.is_cancelled() {
            let opened = tokio::select! {
                _ = ctx.cancelled() => return,
                r = client.open(o.ack_deadline, o.max_messages_per_poll) => r,
            };
            if opened.is_ok() {
                tracing::debug!(subscription = %o.subscription, "Pub/Sub stream opened");
            }
            let failure = match opened {
                Ok(mut stream) => loop {
                    let next = tokio::select! {
                        _ = ctx.cancelled() => return self.close_stream(stream).await,
                        r = stream.next() => r,
                    };
                    let messages = match next {
                        Ok(Some(m)) => m,
                        Ok(None) => break None,
                        Err(e) => break Some(e),
                    };
                    ctx.health().set_healthy();
                    backoff = Duration::from_millis(200);
                    if messages.is_empty() {
                        continue;
                    }
                    let settler = stream.settler();
                    let ran = self.run_batch(ctx, messages, &settler).await;
                    if ctx.is_cancelled() {
                        return self.close_stream(stream).await;
                    }
                    if ran == 0 {
                        tokio::select! {
                            _ = ctx.cancelled() => return self.close_stream(stream).await,
                            _ = tokio::time::sleep(HAND_BACK_PAUSE) => {}
                        }
                    }
                },
                Err(e) => Some(e),
            };
            match failure {
                // The service closes streams from time to time; open the next at once.
                None => {
                    tracing::debug!(subscription = %o.subscription, "Pub/Sub ended the stream; opening another")
                }
                Some(e) => {
                    tracing::warn!(subscription = %o.subscription, error = %e, retry_in = ?backoff,
                        "Pub/Sub streaming pull failed; retrying");
                    ctx.health().set_failing(&e);
                    tokio::select! {
                        _ = ctx.cancelled() => return,
                        _ = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(30));
                }
            }
        }
    }

    /// Runs a streamed batch `max_messages_per_poll` messages at a time, each part
    /// settled before the next starts: the service may send more than the flow-control
    /// bound (the emulator ignores it), and the bound on what runs at once holds anyway.
    /// Once stopping, the parts not yet started are handed back unrun. Returns how many
    /// exchanges ran.
    async fn run_batch(
        &self,
        ctx: &ConsumerContext,
        messages: Vec<ReceivedMessage>,
        settler: &StreamSettler,
    ) -> usize {
        let per_part = self.options.max_messages_per_poll as usize;
        let mut rest = messages.into_iter().peekable();
        let mut ran = 0;
        while rest.peek().is_some() {
            if ctx.is_cancelled() {
                let unrun: Vec<String> = rest.map(|m| m.ack_id).collect();
                self.settle(
                    Settled {
                        nack: unrun,
                        ..Settled::default()
                    },
                    None,
                )
                .await;
                break;
            }
            let part: Vec<ReceivedMessage> = rest.by_ref().take(per_part).collect();
            let settled = self.run_pull(ctx, part, Some(settler)).await;
            ran += settled.ran;
            // Stopping: settle by REST, whose answer says it was done; the stream is
            // closed next and may take queued requests with it.
            let via = (!ctx.is_cancelled()).then_some(settler);
            self.settle(settled, via).await;
        }
        ran
    }

    /// Half-closes `stream` at a stop and hands back (by REST) what it still sent.
    async fn close_stream(&self, stream: PullStream) {
        let unrun = stream.close(CLOSE_WITHIN).await;
        if unrun.is_empty() || self.options.ack_mode == AckMode::None {
            return;
        }
        if let Err(e) = self.client.modify_ack_deadline(&unrun, 0).await {
            tracing::warn!(subscription = %self.options.subscription, error = %e,
                count = unrun.len(), "handing back messages that arrived while stopping failed; they come back after their deadline");
        }
    }

    /// Runs one pull's messages: those without an ordering key side by side, each key's
    /// in order under the key's lock. `via`: the stream they came on, if any.
    async fn run_pull(
        &self,
        ctx: &ConsumerContext,
        messages: Vec<ReceivedMessage>,
        via: Option<&StreamSettler>,
    ) -> Settled {
        let mut groups: Vec<(String, Vec<ReceivedMessage>)> = Vec::new();
        for m in messages {
            let key = m.message.ordering_key.clone();
            match groups.iter_mut().find(|(k, _)| !k.is_empty() && *k == key) {
                Some((_, list)) => list.push(m),
                None => groups.push((key, vec![m])),
            }
        }
        let runs = groups
            .into_iter()
            .map(|(key, list)| self.run_group(ctx, key, list, via));
        let mut settled = Settled::default();
        for s in join_all(runs).await {
            settled.ack.extend(s.ack);
            settled.nack.extend(s.nack);
            settled.ran += s.ran;
        }
        settled
    }

    /// Runs one key's messages of a pull (or one message without a key) in the key's
    /// order ([`OrderingKeys::plan`]); after a failure the rest go back unrun.
    async fn run_group(
        &self,
        ctx: &ConsumerContext,
        key: String,
        list: Vec<ReceivedMessage>,
        via: Option<&StreamSettler>,
    ) -> Settled {
        let mut settled = Settled::default();
        if key.is_empty() {
            for m in list {
                settled.ran += 1;
                let ack_id = m.ack_id.clone();
                match self.run_one(ctx, m, via).await {
                    true => settled.ack.push(ack_id),
                    false => settled.nack.push(ack_id),
                }
            }
            return settled;
        }
        let lock = self.keys.lock(&key);
        let held = lock.lock().await;
        let (run, hand_back) = self.keys.plan(&key, list, |m| &m.message.message_id);
        if !hand_back.is_empty() {
            tracing::debug!(subscription = %self.options.subscription, ordering_key = %key,
                count = hand_back.len(), "handing back messages delivered out of the key's order");
        }
        let mut run = run.into_iter();
        while let Some(m) = run.next() {
            settled.ran += 1;
            let (ack_id, message_id) = (m.ack_id.clone(), m.message.message_id.clone());
            if self.run_one(ctx, m, via).await {
                self.keys.done(&key, &message_id);
                settled.ack.push(ack_id);
                continue;
            }
            let unrun: Vec<ReceivedMessage> = run.by_ref().collect();
            let ids = unrun.iter().map(|m| m.message.message_id.clone());
            self.keys
                .failed(&key, std::iter::once(message_id).chain(ids));
            settled.nack.push(ack_id);
            settled.nack.extend(unrun.into_iter().map(|m| m.ack_id));
        }
        settled.nack.extend(hand_back.into_iter().map(|m| m.ack_id));
        drop(held);
        self.keys.release(&key, lock);
        settled
    }

    /// Runs one message, pushing its deadline forward while it runs; true when the
    /// exchange succeeded.
    async fn run_one(
        &self,
        ctx: &ConsumerContext,
        message: ReceivedMessage,
        via: Option<&StreamSettler>,
    ) -> bool {
        let o = &self.options;
        let ack_id = vec![message.ack_id.clone()];
        let send = ctx.send(to_exchange(&message));
        tokio::pin!(send);
        let started = Instant::now();
        let every = Duration::from_secs(u64::from(o.ack_deadline / 2).max(1));
        // The first extension comes before the shortest deadline a subscription can
        // have (10 s) ends.
        let mut extend =
            tokio::time::interval_at(started + every.min(Duration::from_secs(5)), every);
        let result = loop {
            tokio::select! {
                r = &mut send => break r,
                _ = extend.tick(), if o.ack_mode == AckMode::Auto
                    && started.elapsed() < o.max_ack_extension_period => {
                    if let Err(e) = self.modify_ack_deadline(via, &ack_id, o.ack_deadline).await {
                        tracing::warn!(subscription = %o.subscription, error = %e,
                            "extending the ack deadline failed; the message may be redelivered while its exchange still runs");
                    }
                }
            }
        };
        match result {
            Ok(_) => true,
            Err(error) => {
                tracing::debug!(subscription = %o.subscription, %error,
                    "route failed; the message goes back to Pub/Sub for redelivery");
                false
            }
        }
    }

    /// Acknowledges on the stream `via`, or by REST when there is none or it is gone.
    async fn acknowledge(
        &self,
        via: Option<&StreamSettler>,
        ack_ids: &[String],
    ) -> Result<(), CamelError> {
        if let Some(stream) = via {
            if stream.acknowledge(ack_ids).await {
                return Ok(());
            }
        }
        self.client.acknowledge(ack_ids).await
    }

    /// Moves deadlines on the stream `via`, or by REST when there is none or it is gone.
    async fn modify_ack_deadline(
        &self,
        via: Option<&StreamSettler>,
        ack_ids: &[String],
        seconds: u32,
    ) -> Result<(), CamelError> {
        if let Some(stream) = via {
            if stream.modify_ack_deadline(ack_ids, seconds).await {
                return Ok(());
            }
        }
        self.client.modify_ack_deadline(ack_ids, seconds).await
    }

    async fn settle(&self, settled: Settled, via: Option<&StreamSettler>) {
        let o = &self.options;
        if o.ack_mode == AckMode::None {
            return;
        }
        if !settled.ack.is_empty() {
            if let Err(e) = self.acknowledge(via, &settled.ack).await {
                tracing::warn!(subscription = %o.subscription, error = %e, count = settled.ack.len(),
                    "acknowledging failed; Pub/Sub will deliver the messages again");
            }
        }
        if !settled.nack.is_empty() {
            if let Err(e) = self.modify_ack_deadline(via, &settled.nack, 0).await {
                tracing::warn!(subscription = %o.subscription, error = %e,
                    "handing messages back failed; they come back after their deadline");
            }
        }
    }
}

/// The exchange of one message: the decoded data as body; the `CamelGooglePubsub*`
/// headers; all attributes as one JSON object in [`ATTRIBUTES_HEADER`]; and each attribute
/// that [`admits_transport_header`] admits as a header of its own (a `Camel*` attribute
/// never is one, so a publisher cannot set a control header such as `CamelSqlQuery` nor
/// this consumer's ack id).
pub(crate) fn to_exchange(received: &ReceivedMessage) -> Exchange {
    let m = &received.message;
    let mut exchange = Exchange::new(m.data.clone());
    let headers = &mut exchange.message.headers;
    headers.insert(MESSAGE_ID_HEADER, m.message_id.as_str());
    headers.insert(ACK_ID_HEADER, received.ack_id.as_str());
    if !m.publish_time.is_empty() {
        headers.insert(PUBLISH_TIME_HEADER, m.publish_time.as_str());
    }
    if !m.ordering_key.is_empty() {
        headers.insert(ORDERING_KEY_HEADER, m.ordering_key.as_str());
    }
    if let Some(attempt) = received.delivery_attempt {
        headers.insert(DELIVERY_ATTEMPT_HEADER, attempt);
    }
    let all: Map<String, Json> = m
        .attributes
        .iter()
        .map(|(k, v)| (k.clone(), Json::String(v.clone())))
        .collect();
    headers.insert(ATTRIBUTES_HEADER, Json::Object(all));
    for (name, value) in &m.attributes {
        if admits_transport_header(name, RESERVED_ATTRIBUTE_PREFIXES) {
            headers.insert(name.clone(), value.as_str());
        }
    }
    if received.delivery_attempt.is_some_and(|a| a > 1) {
        exchange
            .properties
            .insert(camel_api::error_kind::EXTERNAL_REDELIVERED, true);
    }
    exchange
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pubsub::pull::PubsubMessage;

    #[test]
    fn attributes_never_set_control_or_consumer_headers() {
        let attributes = [
            ("CamelSqlQuery", "DROP TABLE orders"),
            (ACK_ID_HEADER, "forged"),
            ("googclient_schema", "x"),
            ("order-id", "42"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let received = ReceivedMessage {
            ack_id: "real".into(),
            message: PubsubMessage {
                data: bytes::Bytes::from_static(b"hi"),
                attributes,
                message_id: "7".into(),
                publish_time: "2026-01-01T00:00:00Z".into(),
                ordering_key: "k".into(),
            },
            delivery_attempt: Some(2),
        };
        let ex = to_exchange(&received);
        let text = |name: &str| ex.header(name).map(|v| v.to_string());
        assert_eq!(ex.message.body.to_bytes().as_ref(), b"hi");
        assert!(ex.header("CamelSqlQuery").is_none());
        assert!(ex.header("googclient_schema").is_none());
        assert_eq!(text(ACK_ID_HEADER).as_deref(), Some("real"));
        assert_eq!(text("order-id").as_deref(), Some("42"));
        assert_eq!(text(ORDERING_KEY_HEADER).as_deref(), Some("k"));
        assert_eq!(text(MESSAGE_ID_HEADER).as_deref(), Some("7"));
        let all = ex.header(ATTRIBUTES_HEADER).map(|v| v.to_string());
        assert!(
            all.is_some_and(|a| a.contains("DROP TABLE")),
            "kept in the map"
        );
        assert!(ex
            .property(camel_api::error_kind::EXTERNAL_REDELIVERED)
            .is_some());
    }
}
