//! One connection to the broker, the same to the consumer and the producer whichever
//! protocol it speaks: rumqttc has a client and an event loop per protocol version, and
//! this module folds the two into [`Client`], [`EventLoop`] and a few [`Event`]s.

use bytes::Bytes;
use camel_api::CamelError;
use rumqttc::v5::mqttbytes::v5 as p5;
use rumqttc::v5::mqttbytes::QoS as QoS5;
use rumqttc::{mqttbytes::v4 as p4, QoS as QoS4};

use crate::options::{MqttOptions, Protocol};

/// A message from the broker, whichever the protocol.
#[derive(Debug, Clone)]
pub(crate) struct Incoming {
    pub(crate) topic: String,
    pub(crate) payload: Bytes,
    pub(crate) qos: u8,
    pub(crate) retain: bool,
    pub(crate) dup: bool,
    /// MQTT 5 user properties (empty on 3.1.1).
    pub(crate) user_properties: Vec<(String, String)>,
    /// The packet as rumqttc gave it, for the acknowledgement.
    packet: Packet,
}

#[cfg(test)]
impl Incoming {
    /// An MQTT 5 message with these user properties.
    pub(crate) fn for_test(
        topic: &str,
        payload: &[u8],
        properties: &[(&str, &str)],
        dup: bool,
    ) -> Self {
        let user_properties: Vec<(String, String)> = properties
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut publish = p5::Publish::new(topic, QoS5::AtLeastOnce, payload.to_vec(), None);
        publish.dup = dup;
        Incoming {
            topic: topic.to_string(),
            payload: Bytes::copy_from_slice(payload),
            qos: 1,
            retain: false,
            dup,
            user_properties,
            packet: Packet::V5(publish),
        }
    }
}

#[derive(Debug, Clone)]
enum Packet {
    V4(p4::Publish),
    V5(p5::Publish),
}

/// What the event loop reports that the consumer or the producer acts on.
#[derive(Debug)]
pub(crate) enum Event {
    /// Connected; `session_present` when the broker resumed a kept session.
    Connected { session_present: bool },
    /// A message.
    Message(Box<Incoming>),
    /// The broker answered a subscription; false when it refused it.
    Subscribed(bool),
    /// A publish of ours left, with this packet id (0 for QoS 0).
    Sent(u16),
    /// The broker acknowledged our publish with this id (PUBACK, or PUBCOMP for QoS 2);
    /// `Err` holds its refusal (MQTT 5 reason codes).
    Acknowledged(u16, Result<(), String>),
    /// Our DISCONNECT left.
    Disconnected,
    /// Anything else (pings, our own acks, …).
    Other,
}

/// The handle requests go through.
#[derive(Debug, Clone)]
pub(crate) enum Client {
    V4(rumqttc::AsyncClient),
    V5(rumqttc::v5::AsyncClient),
}

/// The connection itself: nothing happens on it unless it is polled.
pub(crate) enum EventLoop {
    V4(Box<rumqttc::EventLoop>),
    V5(Box<rumqttc::v5::EventLoop>),
}

impl std::fmt::Debug for EventLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventLoop")
    }
}

/// A client and its event loop for `o`, with `client_id`. `manual_acks` for consumers.
pub(crate) fn open(o: &MqttOptions, client_id: &str, manual_acks: bool) -> (Client, EventLoop) {
    // Requests wait in rumqttc's channel until the event loop sends them; the bound
    // covers every ack the consumer can owe plus its subscribe and disconnect.
    let capacity = usize::from(o.max_inflight) + 16;
    let packet = o.maximum_packet_size as usize;
    match o.protocol {
        Protocol::V311 => {
            let mut m = rumqttc::MqttOptions::new(client_id, o.host.clone(), o.port);
            m.set_keep_alive(o.keep_alive.max(std::time::Duration::from_secs(5)))
                .set_clean_session(o.clean_start)
                .set_manual_acks(manual_acks)
                .set_max_packet_size(packet, packet)
                .set_inflight(o.max_inflight);
            if let Some(user) = &o.user_name {
                let password = o.password.as_ref().map(|p| p.0.clone()).unwrap_or_default();
                m.set_credentials(user.clone(), password);
            }
            let (client, mut events) = rumqttc::AsyncClient::new(m, capacity);
            events
                .network_options
                .set_connection_timeout(o.connection_timeout.as_secs());
            (Client::V4(client), EventLoop::V4(Box::new(events)))
        }
        Protocol::V5 => {
            let mut m = rumqttc::v5::MqttOptions::new(client_id, o.host.clone(), o.port);
            m.set_keep_alive(o.keep_alive.max(std::time::Duration::from_secs(5)))
                .set_clean_start(o.clean_start)
                .set_manual_acks(manual_acks)
                .set_max_packet_size(Some(o.maximum_packet_size))
                .set_session_expiry_interval(o.session_expiry_interval)
                .set_receive_maximum(Some(o.max_inflight))
                .set_outgoing_inflight_upper_limit(o.max_inflight)
                .set_connection_timeout(o.connection_timeout.as_secs());
            if let Some(user) = &o.user_name {
                let password = o.password.as_ref().map(|p| p.0.clone()).unwrap_or_default();
                m.set_credentials(user.clone(), password);
            }
            let (client, events) = rumqttc::v5::AsyncClient::new(m, capacity);
            (Client::V5(client), EventLoop::V5(Box::new(events)))
        }
    }
}

fn qos4(q: u8) -> QoS4 {
    match q {
        0 => QoS4::AtMostOnce,
        1 => QoS4::AtLeastOnce,
        _ => QoS4::ExactlyOnce,
    }
}

fn qos5(q: u8) -> QoS5 {
    match q {
        0 => QoS5::AtMostOnce,
        1 => QoS5::AtLeastOnce,
        _ => QoS5::ExactlyOnce,
    }
}

fn failed(what: &str, e: impl std::fmt::Display) -> CamelError {
    CamelError::processor(format!("MQTT {what}: {e}"))
}

impl Client {
    /// Queues a subscription to `filter`.
    pub(crate) async fn subscribe(&self, filter: &str, qos: u8) -> Result<(), CamelError> {
        match self {
            Client::V4(c) => c
                .subscribe(filter, qos4(qos))
                .await
                .map_err(|e| failed("subscribe", e)),
            Client::V5(c) => c
                .subscribe(filter, qos5(qos))
                .await
                .map_err(|e| failed("subscribe", e)),
        }
    }

    /// Queues the acknowledgement of `m` (PUBACK, or PUBREC for QoS 2) without waiting;
    /// false when rumqttc's queue is full (the event loop empties it as it is polled).
    pub(crate) fn try_ack(&self, m: &Incoming) -> bool {
        match (self, &m.packet) {
            (Client::V4(c), Packet::V4(p)) => c.try_ack(p).is_ok(),
            (Client::V5(c), Packet::V5(p)) => c.try_ack(p).is_ok(),
            // A message is only ever acknowledged on the connection it came from, so
            // the protocols always match; a mismatch acknowledges nothing.
            _ => true,
        }
    }

    /// Queues a publish; fails at once when rumqttc's queue is full or the topic invalid.
    pub(crate) fn try_publish(
        &self,
        topic: &str,
        qos: u8,
        retain: bool,
        payload: Bytes,
        user_properties: Vec<(String, String)>,
    ) -> Result<(), CamelError> {
        match self {
            Client::V4(c) => c
                .try_publish(topic, qos4(qos), retain, payload.to_vec())
                .map_err(|e| failed("publish", e)),
            Client::V5(c) => {
                let properties = p5::PublishProperties {
                    user_properties,
                    ..Default::default()
                };
                c.try_publish_with_properties(topic, qos5(qos), retain, payload, properties)
                    .map_err(|e| failed("publish", e))
            }
        }
    }

    /// Queues a DISCONNECT without waiting; false when rumqttc's queue is full.
    pub(crate) fn try_disconnect(&self) -> bool {
        match self {
            Client::V4(c) => c.try_disconnect().is_ok(),
            Client::V5(c) => c.try_disconnect().is_ok(),
        }
    }
}

impl EventLoop {
    /// The next event; `Err` when the connection failed or closed (the loop is then
    /// dropped: a new connection is a new `open`).
    pub(crate) async fn poll(&mut self) -> Result<Event, String> {
        match self {
            EventLoop::V4(l) => {
                use rumqttc::{Event as E, Outgoing as O, Packet as P};
                Ok(match l.poll().await.map_err(|e| e.to_string())? {
                    E::Incoming(P::ConnAck(c)) => Event::Connected {
                        session_present: c.session_present,
                    },
                    E::Incoming(P::Publish(p)) => Event::Message(Box::new(Incoming {
                        topic: p.topic.clone(),
                        payload: p.payload.clone(),
                        qos: p.qos as u8,
                        retain: p.retain,
                        dup: p.dup,
                        user_properties: Vec::new(),
                        packet: Packet::V4(p),
                    })),
                    E::Incoming(P::SubAck(s)) => Event::Subscribed(
                        s.return_codes
                            .iter()
                            .all(|c| !matches!(c, p4::SubscribeReasonCode::Failure)),
                    ),
                    E::Incoming(P::PubAck(a)) => Event::Acknowledged(a.pkid, Ok(())),
                    E::Incoming(P::PubComp(a)) => Event::Acknowledged(a.pkid, Ok(())),
                    E::Outgoing(O::Publish(pkid)) => Event::Sent(pkid),
                    E::Outgoing(O::Disconnect) => Event::Disconnected,
                    _ => Event::Other,
                })
            }
            EventLoop::V5(l) => {
                use p5::Packet as P;
                use rumqttc::v5::Event as E;
                use rumqttc::Outgoing as O;
                Ok(match l.poll().await.map_err(|e| e.to_string())? {
                    E::Incoming(P::ConnAck(c)) => Event::Connected {
                        session_present: c.session_present,
                    },
                    E::Incoming(P::Publish(p)) => Event::Message(Box::new(Incoming {
                        topic: String::from_utf8_lossy(&p.topic).into_owned(),
                        payload: p.payload.clone(),
                        qos: p.qos as u8,
                        retain: p.retain,
                        dup: p.dup,
                        user_properties: p
                            .properties
                            .as_ref()
                            .map(|pr| pr.user_properties.clone())
                            .unwrap_or_default(),
                        packet: Packet::V5(p),
                    })),
                    E::Incoming(P::SubAck(s)) => Event::Subscribed(
                        s.return_codes
                            .iter()
                            .all(|c| matches!(c, p5::SubscribeReasonCode::Success(_))),
                    ),
                    E::Incoming(P::PubAck(a)) => Event::Acknowledged(
                        a.pkid,
                        match a.reason {
                            p5::PubAckReason::Success | p5::PubAckReason::NoMatchingSubscribers => {
                                Ok(())
                            }
                            other => Err(format!("{other:?}")),
                        },
                    ),
                    E::Incoming(P::PubComp(a)) => Event::Acknowledged(a.pkid, Ok(())),
                    E::Outgoing(O::Publish(pkid)) => Event::Sent(pkid),
                    E::Outgoing(O::Disconnect) => Event::Disconnected,
                    _ => Event::Other,
                })
            }
        }
    }
}
