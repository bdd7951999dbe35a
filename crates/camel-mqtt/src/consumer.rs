//! The consumer: one connection at a time; each message in its own task, acknowledged
//! only after the route succeeded.
//!
//! MQTT has no negative acknowledgement, and a broker sends an unacknowledged QoS 1/2
//! message again only when the client reconnects to its kept session. So when a route
//! fails (on a persistent session) the consumer stops taking new messages, lets the
//! running ones finish and acknowledges them, disconnects, waits, and reconnects: the
//! broker then redelivers the failed message and every one the consumer did not take.
//! The wait doubles on each cycle without a success in between (up to
//! `max_reconnect_delay`), so a message that always fails comes back at a bounded rate.
//!
//! In-flight messages are bounded by `max_inflight` (`receive_maximum`). On MQTT 5 the
//! broker is told so, but not every broker obeys (Mosquitto 2.0 sends up to its own
//! `max_inflight_messages`), so the consumer enforces the bound itself: with every slot
//! taken it stops reading the connection until a route finishes. Messages the broker
//! already sent then wait in the socket and rumqttc's buffer, which the broker's own
//! window of unacknowledged messages bounds. A route that holds every slot for longer
//! than 1.5 × `keep_alive_interval` lets the connection time out (no ping goes out
//! meanwhile); on a persistent session its messages are then redelivered.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use camel_api::{CamelError, Consumer, ConsumerContext, ProcessorFuture};
use tokio::task::JoinSet;

use crate::link::{self, Client, Event, EventLoop, Incoming};
use crate::message::to_exchange;
use crate::options::MqttOptions;

/// A consumer on one topic filter.
#[derive(Debug)]
pub struct MqttConsumer {
    options: Arc<MqttOptions>,
    client_id: String,
}

/// How one run of a message through the route ended.
#[derive(Debug)]
enum Outcome {
    /// Succeeded: acknowledge it.
    Done(Box<Incoming>),
    /// Failed (or the route stopped): leave it unacknowledged.
    Failed(Box<Incoming>, CamelError),
}

/// How a connection ended.
#[derive(Debug)]
enum SessionEnd {
    /// The route stopped.
    Stopped,
    /// A route failed or a message was refused: reconnect so the broker redelivers.
    Redeliver {
        failed: u64,
        refused: u64,
        succeeded: u64,
    },
    /// The connection failed or closed (`connected`: after it had been up).
    Lost { why: String, connected: bool },
}

static NEXT_CLIENT: AtomicU64 = AtomicU64::new(1);

/// A client id unique in this process and unlikely to meet another process's (two
/// hosts can run the same process id, so the clock's nanoseconds are part of it).
pub(crate) fn generated_client_id(kind: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "camel-{kind}-{}-{nanos}-{}",
        std::process::id(),
        NEXT_CLIENT.fetch_add(1, Ordering::Relaxed)
    )
}

impl MqttConsumer {
    /// A consumer with these options. A persistent session needs a `client_id` that
    /// stays the same across restarts: the broker finds the session by it.
    pub fn new(options: MqttOptions) -> Result<Self, CamelError> {
        let client_id = match (&options.client_id, options.persistent()) {
            (Some(id), _) => id.clone(),
            (None, false) => generated_client_id("consumer"),
            (None, true) => {
                return Err(CamelError::invalid_uri(
                    options.uri.clone(),
                    "a persistent session (clean_start=false / clean_session=false) needs a client_id: the broker keeps the session under it",
                ))
            }
        };
        Ok(MqttConsumer {
            options: Arc::new(options),
            client_id,
        })
    }

    async fn session(&self, ctx: &ConsumerContext) -> SessionEnd {
        let o = &self.options;
        let (client, mut events) = link::open(o, &self.client_id, true);
        let mut running: JoinSet<Outcome> = JoinSet::new();
        let limit = usize::from(o.max_inflight);
        // Set once a message must be redelivered (or the route stops): from then on no
        // message is taken, and the session ends when the running ones are settled.
        let mut closing = false;
        let mut stopping = false;
        let (mut failed, mut refused, mut succeeded) = (0u64, 0u64, 0u64);
        let mut connected = false;
        let mut resumed = false;
        let mut first_error: Option<CamelError> = None;
        // Acks rumqttc's queue had no room for yet. rumqttc takes requests only when it
        // has no received packet left to hand out, so during a burst acks wait; the
        // session never blocks on them (it would stop polling, and nothing would drain
        // the queue). Bounded by the messages the broker sent unacknowledged.
        let mut unsent: VecDeque<Box<Incoming>> = VecDeque::new();
        loop {
            while let Some(m) = unsent.front() {
                if !client.try_ack(m) {
                    break;
                }
                unsent.pop_front();
            }
            if closing && running.is_empty() {
                break;
            }
            tokio::select! {
                biased;
                _ = ctx.cancelled(), if !stopping => {
                    stopping = true;
                    closing = true;
                }
                Some(joined) = running.join_next(), if !running.is_empty() => match joined {
                    Ok(Outcome::Done(m)) => {
                        succeeded += 1;
                        unsent.push_back(m);
                    }
                    Ok(Outcome::Failed(m, error)) => {
                        if o.persistent() && m.qos > 0 {
                            failed += 1;
                            closing = true;
                            first_error.get_or_insert(error);
                        } else {
                            // Nothing would bring it back: QoS 0 is never resent, and a
                            // clean session forgets the message at the next connection
                            // (holding it would use up the broker's window).
                            // Acknowledged (QoS 1/2), and said so.
                            tracing::warn!(topic = %m.topic, qos = m.qos, %error,
                                "route failed; the message cannot be redelivered (QoS 0 or clean_start=true) and is dropped");
                            if m.qos > 0 {
                                unsent.push_back(m);
                            }
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "an MQTT delivery task ended abnormally; its message is redelivered");
                        failed += 1;
                        closing = true;
                    }
                },
                event = events.poll(), if running.len() < limit => match event {
                    Ok(Event::Connected { session_present }) => {
                        connected = true;
                        resumed = session_present;
                        if session_present {
                            announce(ctx, o, &self.client_id, true);
                        } else if let Err(e) = client.subscribe(&o.topic, o.qos).await {
                            return lost(&mut running, e.to_string(), connected).await;
                        }
                    }
                    Ok(Event::Subscribed(true)) => announce(ctx, o, &self.client_id, resumed),
                    Ok(Event::Subscribed(false)) => {
                        let why = format!("the broker refused the subscription to `{}`", o.topic);
                        return lost(&mut running, why, connected).await;
                    }
                    Ok(Event::Message(m)) => {
                        if closing {
                            // Left unacknowledged: the broker sends it again after the
                            // reconnect (on a persistent session).
                            refused += 1;
                            continue;
                        }
                        // A route that completes synchronously is settled here, without
                        // a task; only a pending one gets its own.
                        match ctx.process(to_exchange(&m)) {
                            ProcessorFuture::Ready(Some(Ok(_))) => {
                                succeeded += 1;
                                unsent.push_back(m);
                            }
                            ProcessorFuture::Ready(result) => {
                                let error = match result {
                                    Some(Err(e)) => e,
                                    _ => CamelError::processor("the route's future had already completed"),
                                };
                                running.spawn(async move { Outcome::Failed(m, error) });
                            }
                            pending => {
                                running.spawn(async move {
                                    match pending.await {
                                        Ok(_) => Outcome::Done(m),
                                        Err(e) => Outcome::Failed(m, e),
                                    }
                                });
                            }
                        }
                    }
                    Ok(_) => {}
                    Err(e) => return lost(&mut running, e, connected).await,
                },
            }
        }
        // Everything settled: the acks go out, then the DISCONNECT.
        disconnect(&client, &mut events, unsent, o.connection_timeout).await;
        if stopping {
            return SessionEnd::Stopped;
        }
        if let Some(error) = first_error {
            tracing::warn!(topic = %o.topic, failed, refused, %error,
                "route failed; reconnecting so that the broker redelivers the unacknowledged messages");
        }
        SessionEnd::Redeliver {
            failed,
            refused,
            succeeded,
        }
    }
}

fn announce(ctx: &ConsumerContext, o: &MqttOptions, client_id: &str, session_present: bool) {
    ctx.health().set_healthy();
    tracing::info!(topic = %o.topic, %client_id, broker = %format!("{}:{}", o.host, o.port),
        qos = o.qos, session_present, max_inflight = o.max_inflight, "consuming from MQTT");
}

/// The connection is gone: the running exchanges finish (their acks cannot be sent;
/// the broker redelivers those messages), then the session ends.
async fn lost(running: &mut JoinSet<Outcome>, why: String, connected: bool) -> SessionEnd {
    while running.join_next().await.is_some() {}
    SessionEnd::Lost { why, connected }
}

/// Sends the acks not yet queued, then DISCONNECT, and waits until it left (or the
/// connection ended, or `limit` passed).
async fn disconnect(
    client: &Client,
    events: &mut EventLoop,
    mut unsent: VecDeque<Box<Incoming>>,
    limit: Duration,
) {
    let _ = tokio::time::timeout(limit, async {
        let mut queued = false;
        loop {
            while let Some(m) = unsent.front() {
                if !client.try_ack(m) {
                    break;
                }
                unsent.pop_front();
            }
            if unsent.is_empty() && !queued {
                queued = client.try_disconnect();
            }
            match events.poll().await {
                Ok(Event::Disconnected) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await;
}

#[async_trait]
impl Consumer for MqttConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let o = self.options.clone();
        let first = Duration::from_millis(200).min(o.max_reconnect_delay);
        let mut backoff = first;
        loop {
            let wait = match self.session(&ctx).await {
                SessionEnd::Stopped => return Ok(()),
                SessionEnd::Redeliver {
                    failed,
                    refused,
                    succeeded,
                } => {
                    // The wait grows while cycles bring only failures and starts over
                    // after a success, so a message that always fails comes back at
                    // most once a second while others flow.
                    if succeeded > 0 {
                        backoff = first;
                    }
                    tracing::debug!(failed, refused, "reconnecting for redelivery");
                    let wait = backoff
                        .max(Duration::from_secs(1))
                        .min(o.max_reconnect_delay);
                    backoff = (wait * 2).min(o.max_reconnect_delay);
                    wait
                }
                SessionEnd::Lost { why, connected } => {
                    if connected {
                        backoff = first;
                    }
                    let where_ = format!("{}:{}", o.host, o.port);
                    ctx.health()
                        .set_failing(format!("MQTT broker {where_}: {why}"));
                    if !o.automatic_reconnect {
                        return Err(CamelError::processor(format!(
                            "MQTT connection to {where_} lost ({why}) and automatic_reconnect is false"
                        )));
                    }
                    tracing::warn!(broker = %where_, error = %why, retry_in = ?backoff,
                        "MQTT consumer disconnected; reconnecting");
                    let wait = backoff;
                    backoff = (backoff * 2).min(o.max_reconnect_delay);
                    wait
                }
            };
            tokio::select! {
                _ = ctx.cancelled() => return Ok(()),
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }
}
