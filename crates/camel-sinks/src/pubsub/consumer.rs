//! `from: google-pubsub:PROJECT:SUBSCRIPTION` (or `pubsub:projects/P/subscriptions/S`):
//! REST pull, at least once.
//!
//! Each of `concurrent_consumers` pull loops takes up to `max_messages_per_poll`
//! messages, runs them through the route, then acknowledges the ones whose exchange
//! succeeded in one `acknowledge` and hands the failed ones back at once
//! (`modifyAckDeadline` to 0) for redelivery. So at most `max_messages_per_poll ×
//! concurrent_consumers` messages are in flight. While an exchange runs, its deadline is
//! pushed forward (`ack_deadline` seconds at a time, for at most
//! `max_ack_extension_period`). Messages with the same ordering key never run at the
//! same time in this consumer: one key's messages of a pull run one after another (and
//! wait for another loop's run of that key), and after a failure the rest of that key's
//! messages are handed back unrun, so Pub/Sub redelivers them after the failed one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use base64::Engine;
use camel_api::inbound::admits_transport_header;
use camel_api::{CamelError, Consumer, ConsumerContext, Exchange};
use futures::future::join_all;
use serde_json::{Map, Value as Json};
use tokio::time::Instant;

use super::codec::MESSAGE_ID_HEADER;
use super::options::{AckMode, PubSubConsumerOptions};
use super::pull::{ReceivedMessage, SubscriptionClient};

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

/// The Pub/Sub subscription consumer.
#[derive(Debug)]
pub struct PubSubConsumer {
    client: Arc<SubscriptionClient>,
    options: Arc<PubSubConsumerOptions>,
}

impl PubSubConsumer {
    pub(crate) fn new(client: SubscriptionClient, options: PubSubConsumerOptions) -> Self {
        PubSubConsumer {
            client: Arc::new(client),
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
            keys: Arc::default(),
            blocked: Arc::default(),
        });
        let loops = (0..self.options.concurrent_consumers).map(|_| {
            let (puller, ctx) = (puller.clone(), ctx.clone());
            tokio::spawn(async move { puller.pull_loop(&ctx).await })
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

/// The locks of the ordering keys running now. An entry lives while some run holds or
/// waits for it, so the map holds at most the messages in flight.
type KeyLocks = Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>;

/// A key whose message failed: until that message comes back (or `ack_deadline` passes,
/// should it never come back here), the key's other messages are handed back unrun.
/// Pub/Sub (the emulator, at least) may hand out a key's later messages while an
/// earlier one is outstanding; running them would overtake the failed one.
#[derive(Debug)]
struct Blocked {
    message_id: String,
    since: Instant,
}

struct Puller {
    client: Arc<SubscriptionClient>,
    options: Arc<PubSubConsumerOptions>,
    keys: Arc<KeyLocks>,
    blocked: Arc<Mutex<HashMap<String, Blocked>>>,
}

/// What became of a pull's messages.
#[derive(Default)]
struct Settled {
    ack: Vec<String>,
    nack: Vec<String>,
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
            let settled = self.run_pull(ctx, messages).await;
            self.settle(settled).await;
        }
    }

    /// Runs one pull's messages: those without an ordering key side by side, each key's
    /// in order under the key's lock.
    async fn run_pull(&self, ctx: &ConsumerContext, messages: Vec<ReceivedMessage>) -> Settled {
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
            .map(|(key, list)| self.run_group(ctx, key, list));
        let mut settled = Settled::default();
        for s in join_all(runs).await {
            settled.ack.extend(s.ack);
            settled.nack.extend(s.nack);
        }
        settled
    }

    async fn run_group(
        &self,
        ctx: &ConsumerContext,
        key: String,
        list: Vec<ReceivedMessage>,
    ) -> Settled {
        let mut settled = Settled::default();
        let lock = (!key.is_empty()).then(|| self.key_lock(&key));
        let held = match &lock {
            Some(l) => Some(l.lock().await),
            None => None,
        };
        let first = list.first().map(|m| m.message.message_id.as_str());
        let runnable = key.is_empty() || self.unblocked(&key, first.unwrap_or_default());
        let mut rest = list.into_iter();
        if runnable {
            for m in rest.by_ref() {
                let (ack_id, message_id) = (m.ack_id.clone(), m.message.message_id.clone());
                if self.run_one(ctx, m).await {
                    settled.ack.push(ack_id);
                } else {
                    settled.nack.push(ack_id);
                    if !key.is_empty() {
                        self.block(&key, message_id);
                    }
                    break;
                }
            }
        }
        // Not run because an earlier message of the key failed: back with it.
        settled.nack.extend(rest.map(|m| m.ack_id));
        drop(held);
        if let Some(l) = lock {
            self.release_key(&key, l);
        }
        settled
    }

    /// Whether `key`'s messages may run, the first of them being `first`: yes unless the
    /// key is blocked by another message that has not come back yet.
    fn unblocked(&self, key: &str, first: &str) -> bool {
        let mut blocked = self.blocked.lock().unwrap_or_else(|e| e.into_inner());
        let waiting = Duration::from_secs(u64::from(self.options.ack_deadline));
        match blocked.get(key) {
            None => true,
            Some(b) if b.message_id == first || b.since.elapsed() >= waiting => {
                blocked.remove(key);
                true
            }
            Some(_) => false,
        }
    }

    fn block(&self, key: &str, message_id: String) {
        let mut blocked = self.blocked.lock().unwrap_or_else(|e| e.into_inner());
        let since = Instant::now();
        blocked.insert(key.to_string(), Blocked { message_id, since });
    }

    fn key_lock(&self, key: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        keys.entry(key.to_string()).or_default().clone()
    }

    /// Forgets a key's lock once no run holds or waits for it.
    fn release_key(&self, key: &str, lock: Arc<tokio::sync::Mutex<()>>) {
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        drop(lock);
        if keys.get(key).is_some_and(|l| Arc::strong_count(l) == 1) {
            keys.remove(key);
        }
    }

    /// Runs one message, pushing its deadline forward while it runs; true when the
    /// exchange succeeded.
    async fn run_one(&self, ctx: &ConsumerContext, message: ReceivedMessage) -> bool {
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
                    if let Err(e) = self.client.modify_ack_deadline(&ack_id, o.ack_deadline).await {
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

    async fn settle(&self, settled: Settled) {
        let o = &self.options;
        if o.ack_mode == AckMode::None {
            return;
        }
        if !settled.ack.is_empty() {
            if let Err(e) = self.client.acknowledge(&settled.ack).await {
                tracing::warn!(subscription = %o.subscription, error = %e, count = settled.ack.len(),
                    "acknowledging failed; Pub/Sub will deliver the messages again");
            }
        }
        if !settled.nack.is_empty() {
            if let Err(e) = self.client.modify_ack_deadline(&settled.nack, 0).await {
                tracing::debug!(subscription = %o.subscription, error = %e,
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
    let body = base64::engine::general_purpose::STANDARD
        .decode(m.data.as_bytes())
        .unwrap_or_else(|_| m.data.as_bytes().to_vec());
    let mut exchange = Exchange::new(bytes::Bytes::from(body));
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
                data: "aGk=".into(),
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
