//! gRPC streaming pull: `google.pubsub.v1.Subscriber/StreamingPull`, the way Google's
//! own clients receive (ADR 0171).
//!
//! One stream per pull loop. The first request names the subscription, the stream's ack
//! deadline and the flow control bound (`max_outstanding_messages`: the server sends no
//! more while that many are unsettled); later requests carry acknowledgements and
//! deadline changes, and an empty request every [`HEARTBEAT`] keeps an idle stream from
//! being cut by proxies. The server answers with batches of messages.
//!
//! Only the few messages this needs are declared here ([`wire`]), with prost's derive
//! and the field numbers of Google's `pubsub.proto`; no code generation, no protoc.

use std::sync::OnceLock;
use std::time::Duration;

use camel_api::CamelError;
use http::uri::PathAndQuery;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};

use super::pull::{PubsubMessage, ReceivedMessage};
use super::token::TokenSource;

/// How often an idle stream sends an empty request.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(30);
/// Bound of connecting (TCP and TLS) to the service.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Requests queued for one stream before a sender waits.
const REQUEST_QUEUE: usize = 64;

const STREAMING_PULL: &str = "/google.pubsub.v1.Subscriber/StreamingPull";

/// The Pub/Sub v1 messages streaming pull exchanges, as prost structs with the field
/// numbers of `google/pubsub/v1/pubsub.proto`. Public for the benches' raw baseline;
/// not an API of this crate.
#[doc(hidden)]
pub mod wire {
    use std::collections::HashMap;

    /// `StreamingPullRequest`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct StreamingPullRequest {
        /// Only in the first request: `projects/P/subscriptions/S`.
        #[prost(string, tag = "1")]
        pub subscription: String,
        /// Messages done.
        #[prost(string, repeated, tag = "2")]
        pub ack_ids: Vec<String>,
        /// New deadlines, one per entry of `modify_deadline_ack_ids` (0 = hand back).
        #[prost(int32, repeated, tag = "3")]
        pub modify_deadline_seconds: Vec<i32>,
        /// The messages whose deadline changes.
        #[prost(string, repeated, tag = "4")]
        pub modify_deadline_ack_ids: Vec<String>,
        /// The deadline of messages sent on this stream (10–600 s); required first.
        #[prost(int32, tag = "5")]
        pub stream_ack_deadline_seconds: i32,
        /// Same value on every stream of one consumer.
        #[prost(string, tag = "6")]
        pub client_id: String,
        /// Flow control: no more messages while this many are unsettled.
        #[prost(int64, tag = "7")]
        pub max_outstanding_messages: i64,
        /// Flow control in bytes (0: none).
        #[prost(int64, tag = "8")]
        pub max_outstanding_bytes: i64,
    }

    /// `StreamingPullResponse` (the fields used here).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct StreamingPullResponse {
        /// The batch.
        #[prost(message, repeated, tag = "1")]
        pub received_messages: Vec<ReceivedMessage>,
    }

    /// `ReceivedMessage`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ReceivedMessage {
        /// Settles this delivery.
        #[prost(string, tag = "1")]
        pub ack_id: String,
        /// The message.
        #[prost(message, optional, tag = "2")]
        pub message: Option<PubsubMessage>,
        /// Set on subscriptions with a dead-letter policy (0 otherwise).
        #[prost(int32, tag = "3")]
        pub delivery_attempt: i32,
    }

    /// `PubsubMessage`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct PubsubMessage {
        /// The payload, raw (REST spells it in base64).
        #[prost(bytes = "bytes", tag = "1")]
        pub data: bytes::Bytes,
        /// The attributes.
        #[prost(map = "string, string", tag = "2")]
        pub attributes: HashMap<String, String>,
        /// Assigned by the service.
        #[prost(string, tag = "3")]
        pub message_id: String,
        /// When the service took it.
        #[prost(message, optional, tag = "4")]
        pub publish_time: Option<Timestamp>,
        /// The ordering key, empty when none.
        #[prost(string, tag = "5")]
        pub ordering_key: String,
    }

    /// `google.protobuf.Timestamp`.
    #[derive(Clone, Copy, PartialEq, prost::Message)]
    pub struct Timestamp {
        /// Seconds since the Unix epoch.
        #[prost(int64, tag = "1")]
        pub seconds: i64,
        /// Nanoseconds within the second.
        #[prost(int32, tag = "2")]
        pub nanos: i32,
    }
}

/// A gRPC channel to the service (one per consumer; its streams share the connection).
#[derive(Debug)]
pub(crate) struct StreamClient {
    endpoint: Endpoint,
    /// Made at the first stream: tonic spawns the channel's worker on the runtime.
    channel: OnceLock<Channel>,
    subscription: String,
    client_id: String,
    token: TokenSource,
}

/// One open stream: batches come from `inbound`, settlements go through `outbound`.
pub(crate) struct PullStream {
    outbound: mpsc::Sender<wire::StreamingPullRequest>,
    inbound: tonic::Streaming<wire::StreamingPullResponse>,
}

impl StreamClient {
    /// A client of `subscription` at `base` (`http://host:port` for the emulator, in
    /// plain text; `https://…` over TLS with the system's trusted roots). Connects at the
    /// first stream, not here (so validating a route opens no connection).
    pub(crate) fn new(
        base: &str,
        subscription: &str,
        token: TokenSource,
    ) -> Result<Self, CamelError> {
        let bad = |e: tonic::transport::Error| {
            CamelError::invalid_uri(base.to_string(), format!("not a Pub/Sub gRPC address: {e}"))
        };
        let mut endpoint = Endpoint::from_shared(base.to_string())
            .map_err(bad)?
            .connect_timeout(CONNECT_TIMEOUT)
            .tcp_nodelay(true)
            // A connection that died silently is found within about a minute.
            .http2_keep_alive_interval(HEARTBEAT)
            .keep_alive_timeout(Duration::from_secs(20))
            .keep_alive_while_idle(true);
        if base.starts_with("https://") {
            endpoint = endpoint
                .tls_config(ClientTlsConfig::new().with_native_roots())
                .map_err(bad)?;
        }
        let client_id = format!(
            "camel-rs-{}-{:016x}",
            std::process::id(),
            rand::random::<u64>()
        );
        Ok(StreamClient {
            endpoint,
            channel: OnceLock::new(),
            subscription: subscription.to_string(),
            client_id,
            token,
        })
    }

    /// Opens a stream whose messages keep `ack_deadline` seconds each and of which at
    /// most `max_outstanding` are unsettled at once.
    ///
    /// Waits until the service answers the stream's headers, which a server may delay
    /// until it has a first message: callers race it against their cancellation.
    pub(crate) async fn open(
        &self,
        ack_deadline: u32,
        max_outstanding: u32,
    ) -> Result<PullStream, CamelError> {
        let (outbound, requests) = mpsc::channel(REQUEST_QUEUE);
        let first = wire::StreamingPullRequest {
            subscription: self.subscription.clone(),
            stream_ack_deadline_seconds: i32::try_from(ack_deadline).unwrap_or(600),
            client_id: self.client_id.clone(),
            max_outstanding_messages: i64::from(max_outstanding),
            ..Default::default()
        };
        // The queue is empty and its receiver alive: this cannot fail.
        let _ = outbound.try_send(first);
        let mut request = tonic::Request::new(ReceiverStream::new(requests));
        request
            .metadata_mut()
            .insert("x-goog-request-params", routing_header(&self.subscription)?);
        if let Some(token) = self.token.bearer().await? {
            let value = format!("Bearer {token}").parse().map_err(|_| {
                CamelError::processor("the Pub/Sub access token is not a valid header value")
            })?;
            request.metadata_mut().insert("authorization", value);
        }
        let channel = self
            .channel
            .get_or_init(|| self.endpoint.connect_lazy())
            .clone();
        let mut grpc = tonic::client::Grpc::new(channel);
        grpc.ready()
            .await
            .map_err(|e| CamelError::external("Pub/Sub streaming pull: connecting", e))?;
        let response = grpc
            .streaming(
                request,
                PathAndQuery::from_static(STREAMING_PULL),
                tonic_prost::ProstCodec::default(),
            )
            .await
            .map_err(status_error)?;
        Ok(PullStream {
            outbound,
            inbound: response.into_inner(),
        })
    }
}

impl PullStream {
    /// The next batch; `Ok(None)` when the service ended the stream. An empty request
    /// goes out every [`HEARTBEAT`] while nothing arrives.
    pub(crate) async fn next(&mut self) -> Result<Option<Vec<ReceivedMessage>>, CamelError> {
        loop {
            tokio::select! {
                r = self.inbound.message() => {
                    return match r {
                        Ok(Some(batch)) => Ok(Some(
                            batch.received_messages.into_iter().map(from_wire).collect(),
                        )),
                        Ok(None) => Ok(None),
                        Err(status) => Err(status_error(status)),
                    };
                }
                _ = tokio::time::sleep(HEARTBEAT) => {
                    // A closed stream shows up in `inbound` next.
                    let _ = self.outbound.try_send(wire::StreamingPullRequest::default());
                }
            }
        }
    }

    /// Ends the stream the polite way: half-closes it (no more requests), then reads
    /// what the service still sends until it ends the stream too, for at most
    /// `within`. Returns the ack ids of the messages that arrived meanwhile: they were
    /// not run and are the caller's to hand back. A stream dropped instead is reset,
    /// which Google answers by redelivering its messages after their deadline (and on
    /// which the emulator loses track of them, ADR 0171).
    pub(crate) async fn close(self, within: Duration) -> Vec<String> {
        let PullStream {
            outbound,
            mut inbound,
        } = self;
        drop(outbound);
        let mut unrun = Vec::new();
        let drain = async {
            while let Ok(Some(batch)) = inbound.message().await {
                unrun.extend(batch.received_messages.into_iter().map(|m| m.ack_id));
            }
        };
        let _ = tokio::time::timeout(within, drain).await;
        unrun
    }

    /// A sender of this stream's settlements, usable while the batch runs.
    pub(crate) fn settler(&self) -> StreamSettler {
        StreamSettler(self.outbound.clone())
    }
}

/// Sends acknowledgements and deadline changes on one stream.
#[derive(Clone)]
pub(crate) struct StreamSettler(mpsc::Sender<wire::StreamingPullRequest>);

impl StreamSettler {
    /// Acknowledges on the stream; false when the stream is gone (the caller settles
    /// another way).
    pub(crate) async fn acknowledge(&self, ack_ids: &[String]) -> bool {
        self.send(wire::StreamingPullRequest {
            ack_ids: ack_ids.to_vec(),
            ..Default::default()
        })
        .await
    }

    /// Moves the deadlines to `seconds` from now (0: hands the messages back); false
    /// when the stream is gone.
    pub(crate) async fn modify_ack_deadline(&self, ack_ids: &[String], seconds: u32) -> bool {
        let seconds = i32::try_from(seconds).unwrap_or(600);
        self.send(wire::StreamingPullRequest {
            modify_deadline_seconds: vec![seconds; ack_ids.len()],
            modify_deadline_ack_ids: ack_ids.to_vec(),
            ..Default::default()
        })
        .await
    }

    async fn send(&self, request: wire::StreamingPullRequest) -> bool {
        // Bounded: a stream whose queue does not move within the call timeout is as
        // good as gone.
        matches!(
            tokio::time::timeout(Duration::from_secs(30), self.0.send(request)).await,
            Ok(Ok(()))
        )
    }
}

/// Google routes a stream by its subscription: `subscription=<url-encoded name>`.
fn routing_header(
    subscription: &str,
) -> Result<tonic::metadata::MetadataValue<tonic::metadata::Ascii>, CamelError> {
    format!("subscription={}", camel_api::percent_encode(subscription))
        .parse()
        .map_err(|_| CamelError::processor("the subscription name is not a valid header value"))
}

fn status_error(status: tonic::Status) -> CamelError {
    CamelError::processor(format!(
        "Pub/Sub streaming pull: {:?}: {}",
        status.code(),
        status.message()
    ))
}

/// The shared form of a streamed message.
fn from_wire(m: wire::ReceivedMessage) -> ReceivedMessage {
    let message = m.message.unwrap_or_default();
    ReceivedMessage {
        ack_id: m.ack_id,
        message: PubsubMessage {
            data: message.data,
            attributes: message.attributes,
            message_id: message.message_id,
            publish_time: message.publish_time.map(rfc3339).unwrap_or_default(),
            ordering_key: message.ordering_key,
        },
        delivery_attempt: (m.delivery_attempt > 0).then_some(i64::from(m.delivery_attempt)),
    }
}

/// A timestamp in RFC 3339 (UTC), as the REST API spells publish times.
fn rfc3339(t: wire::Timestamp) -> String {
    let nanos = u32::try_from(t.nanos).unwrap_or(0);
    match chrono::DateTime::from_timestamp(t.seconds, nanos) {
        Some(at) => at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn a_streamed_message_reads_as_a_pulled_one() {
        let wire_message = wire::ReceivedMessage {
            ack_id: "a1".into(),
            message: Some(wire::PubsubMessage {
                data: bytes::Bytes::from_static(b"hi"),
                attributes: [("k".to_string(), "v".to_string())].into(),
                message_id: "7".into(),
                publish_time: Some(wire::Timestamp {
                    seconds: 1_767_225_600,
                    nanos: 5_000_000,
                }),
                ordering_key: "g".into(),
            }),
            delivery_attempt: 0,
        };
        // Through the wire and back, as the service would send it.
        let response = wire::StreamingPullResponse {
            received_messages: vec![wire_message],
        };
        let decoded =
            wire::StreamingPullResponse::decode(response.encode_to_vec().as_slice()).unwrap();
        let m = from_wire(decoded.received_messages[0].clone());
        assert_eq!(m.ack_id, "a1");
        assert_eq!(m.message.data.as_ref(), b"hi");
        assert_eq!(m.message.publish_time, "2026-01-01T00:00:00.005Z");
        assert_eq!(m.message.ordering_key, "g");
        assert_eq!(m.delivery_attempt, None, "0 means no dead-letter policy");
    }

    #[test]
    fn the_routing_header_encodes_the_subscription() {
        let v = routing_header("projects/p/subscriptions/s").unwrap();
        assert_eq!(
            v.to_str().unwrap(),
            "subscription=projects%2Fp%2Fsubscriptions%2Fs"
        );
    }
}
