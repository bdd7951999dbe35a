//! The producer: each exchange completes when the broker acknowledged its message
//! (PUBACK for QoS 1, PUBCOMP for QoS 2; at once for QoS 0, when it left).
//!
//! One task owns the connection. Exchanges hand it their message over a bounded
//! channel; it queues each to rumqttc and keeps the exchange's reply, first in a FIFO
//! (rumqttc sends requests in order and reports each publish's packet id as it leaves)
//! and then under its packet id until the broker's acknowledgement. At most
//! `max_inflight` messages wait for an acknowledgement; more wait in the channel. When
//! the connection breaks, every exchange still waiting fails (the broker may or may not
//! have the message: a retry may duplicate it), and the next message connects again.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use camel_api::{BoxProcessor, CamelError, Exchange};
use tokio::sync::{mpsc, oneshot, Mutex};

use crate::consumer::generated_client_id;
use crate::link::{self, Event};
use crate::message::{user_properties, OVERRIDE_TOPIC_HEADER};
use crate::options::{MqttOptions, Protocol};

type Reply = oneshot::Sender<Result<(), CamelError>>;

/// One message to publish.
#[derive(Debug)]
struct Request {
    topic: String,
    payload: Bytes,
    user_properties: Vec<(String, String)>,
    reply: Reply,
}

/// Publishes each exchange and waits for the broker's acknowledgement.
#[derive(Debug)]
pub struct MqttProducer {
    options: Arc<MqttOptions>,
    /// The connection task's inbox, started on first use (and again if it ended).
    inbox: Mutex<Option<mpsc::Sender<Request>>>,
}

impl MqttProducer {
    /// A producer with these options.
    pub fn new(options: MqttOptions) -> Self {
        MqttProducer {
            options: Arc::new(options),
            inbox: Mutex::new(None),
        }
    }

    /// The route step.
    pub fn processor(self: Arc<Self>) -> BoxProcessor {
        BoxProcessor::from_fn(move |exchange| {
            let this = self.clone();
            async move { this.publish(exchange).await }
        })
        .named("mqtt")
    }

    async fn inbox(&self) -> mpsc::Sender<Request> {
        let mut inbox = self.inbox.lock().await;
        if let Some(tx) = inbox.as_ref().filter(|tx| !tx.is_closed()) {
            return tx.clone();
        }
        let (tx, rx) = mpsc::channel(usize::from(self.options.max_inflight));
        let client_id = self
            .options
            .client_id
            .clone()
            .unwrap_or_else(|| generated_client_id("producer"));
        tokio::spawn(drive(self.options.clone(), client_id, rx));
        *inbox = Some(tx.clone());
        tx
    }

    async fn publish(&self, exchange: Exchange) -> Result<Exchange, CamelError> {
        let o = &self.options;
        let topic = exchange
            .header(OVERRIDE_TOPIC_HEADER)
            .map(|v| v.to_string())
            .unwrap_or_else(|| o.topic.clone());
        let properties = match o.protocol {
            Protocol::V5 => user_properties(&exchange),
            Protocol::V311 => Vec::new(),
        };
        let (reply, answer) = oneshot::channel();
        let request = Request {
            topic: topic.clone(),
            payload: exchange.message.body.to_bytes(),
            user_properties: properties,
            reply,
        };
        let gone = || CamelError::processor("the MQTT producer's connection task ended");
        self.inbox().await.send(request).await.map_err(|_| gone())?;
        // Waiting for the acknowledgement is bounded: a broker that never answers fails
        // the exchange instead of holding it forever.
        match tokio::time::timeout(o.connection_timeout, answer).await {
            Ok(Ok(Ok(()))) => Ok(exchange),
            Ok(Ok(Err(e))) => Err(e),
            Ok(Err(_)) => Err(gone()),
            Err(_) => Err(CamelError::processor(format!(
                "the MQTT broker did not acknowledge the message to `{topic}` within {:?}",
                o.connection_timeout
            ))),
        }
    }
}

/// The connection task: connects when a message comes, publishes, matches
/// acknowledgements to replies; ends when the producer is dropped.
async fn drive(o: Arc<MqttOptions>, client_id: String, mut inbox: mpsc::Receiver<Request>) {
    let limit = usize::from(o.max_inflight);
    while let Some(first) = inbox.recv().await {
        let (client, mut events) = link::open(&o, &client_id, false);
        // Queued to rumqttc, packet id not known yet (in the order they were queued).
        let mut queued: VecDeque<Reply> = VecDeque::new();
        // Sent, waiting for the broker.
        let mut sent: HashMap<u16, Reply> = HashMap::new();
        let mut next = Some(first);
        let closed = loop {
            if let Some(r) = next.take() {
                match client.try_publish(&r.topic, o.qos, o.retained, r.payload, r.user_properties)
                {
                    Ok(()) => queued.push_back(r.reply),
                    Err(e) => {
                        let _ = r.reply.send(Err(e));
                    }
                }
            }
            tokio::select! {
                event = events.poll() => match event {
                    Ok(Event::Sent(0)) => {
                        if let Some(reply) = queued.pop_front() {
                            let _ = reply.send(Ok(()));
                        }
                    }
                    Ok(Event::Sent(pkid)) => {
                        if let Some(reply) = queued.pop_front() {
                            sent.insert(pkid, reply);
                        }
                    }
                    Ok(Event::Acknowledged(pkid, outcome)) => {
                        if let Some(reply) = sent.remove(&pkid) {
                            let _ = reply.send(outcome.map_err(|why| {
                                CamelError::processor(format!("the MQTT broker refused the message: {why}"))
                            }));
                        }
                    }
                    Ok(_) => {}
                    Err(why) => {
                        let broker = format!("{}:{}", o.host, o.port);
                        tracing::warn!(%broker, error = %why, "MQTT producer connection failed");
                        for reply in queued.drain(..).chain(sent.drain().map(|(_, r)| r)) {
                            let _ = reply.send(Err(CamelError::processor(format!(
                                "MQTT connection to {broker} failed before the broker acknowledged the message: {why}"
                            ))));
                        }
                        break false;
                    }
                },
                request = inbox.recv(), if queued.len() + sent.len() < limit => match request {
                    Some(r) => next = Some(r),
                    None => break true,
                },
            }
        };
        if closed {
            // Dropped producer: let what is queued go, then say goodbye.
            while !(queued.is_empty() && sent.is_empty()) {
                match tokio::time::timeout(o.connection_timeout, events.poll()).await {
                    Ok(Ok(Event::Sent(0))) => {
                        queued.pop_front();
                    }
                    Ok(Ok(Event::Sent(pkid))) => {
                        if let Some(reply) = queued.pop_front() {
                            sent.insert(pkid, reply);
                        }
                    }
                    Ok(Ok(Event::Acknowledged(pkid, _))) => {
                        sent.remove(&pkid);
                    }
                    Ok(Ok(_)) => {}
                    _ => break,
                }
            }
            let _ = tokio::time::timeout(o.connection_timeout, async {
                let mut queued = false;
                loop {
                    if !queued {
                        queued = client.try_disconnect();
                    }
                    match events.poll().await {
                        Ok(Event::Disconnected) | Err(_) => break,
                        Ok(_) => {}
                    }
                }
            })
            .await;
            return;
        }
    }
}
