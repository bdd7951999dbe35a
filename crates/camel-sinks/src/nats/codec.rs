//! The NATS codec: pipelined publishes, acknowledgements awaited together.

use std::fmt;
use std::time::Duration;

use async_nats::jetstream::context::Publish;
use async_nats::HeaderMap;
use camel_api::{CamelError, Exchange};
use futures::future::{join_all, BoxFuture};
use tokio::sync::OnceCell;

use crate::attributes::HeaderSelection;
use crate::codec::{BatchCodec, BatchIdentity, Entry, EntryMeta, Limits, Receipt, SendOutcome};

/// Header JetStream deduplicates on.
const MSG_ID: &str = "Nats-Msg-Id";

/// NATS header carrying the entry's ordering group (the `group_key` expression, else the
/// relayed outbox message's group key). NATS has no group concept of its own (nor does
/// Camel's nats component): a consumer that keeps a group's order reads it from here.
pub const GROUP_KEY_HEADER: &str = "CamelNatsGroupKey";

/// Header set on a JetStream publish's exchange: the stream that stored it.
pub const STREAM_HEADER: &str = "CamelNatsJetStreamStream";
/// Header set on a JetStream publish's exchange: its sequence number in the stream.
pub const SEQUENCE_HEADER: &str = "CamelNatsJetStreamSequence";
/// Header set on a JetStream publish's exchange: true when the stream had already stored
/// a message with the same `Nats-Msg-Id` (the idempotency key) and dropped this one.
pub const DUPLICATE_HEADER: &str = "CamelNatsJetStreamDuplicate";

/// Publishes batches to one subject.
pub struct NatsCodec {
    subject: String,
    servers: String,
    jetstream: bool,
    connect_timeout: Duration,
    headers: HeaderSelection,
    limits: Limits,
    /// A stream to create (in memory) when none captures the subject yet.
    stream: Option<String>,
    client: OnceCell<async_nats::Client>,
}

impl fmt::Debug for NatsCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NatsCodec")
            .field("subject", &self.subject)
            .field("jetstream", &self.jetstream)
            .finish()
    }
}

impl NatsCodec {
    /// A codec publishing to `subject` on `servers` (comma-separated URLs).
    pub fn new(subject: &str, servers: &str, jetstream: bool) -> Self {
        NatsCodec {
            subject: subject.to_string(),
            servers: servers.to_string(),
            jetstream,
            connect_timeout: Duration::from_secs(5),
            headers: HeaderSelection::default(),
            limits: Limits {
                max_entries: 100,
                max_request_bytes: 8 << 20,
                max_entry_bytes: 1 << 20,
            },
            stream: None,
            client: OnceCell::new(),
        }
    }

    /// Creates the JetStream stream `name` (memory storage, capturing the subject) on
    /// first use if it does not exist: for development and examples.
    pub fn with_stream(mut self, name: &str) -> Self {
        self.stream = Some(name.to_string());
        self
    }

    /// Copies these exchange headers into NATS headers.
    pub fn with_headers(mut self, headers: HeaderSelection) -> Self {
        self.headers = headers;
        self
    }

    /// Sets how long the first connection attempt may take.
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    async fn client(&self) -> Result<&async_nats::Client, CamelError> {
        self.client
            .get_or_try_init(|| async {
                let servers: Vec<&str> = self.servers.split(',').map(str::trim).collect();
                let client = async_nats::ConnectOptions::new()
                    .connection_timeout(self.connect_timeout)
                    .connect(servers)
                    .await
                    .map_err(|e| {
                        CamelError::external(
                            format!("connecting to NATS for `{}`", self.subject),
                            e,
                        )
                    })?;
                if let (true, Some(name)) = (self.jetstream, &self.stream) {
                    let config = async_nats::jetstream::stream::Config {
                        name: name.clone(),
                        subjects: vec![self.subject.clone()],
                        storage: async_nats::jetstream::stream::StorageType::Memory,
                        ..Default::default()
                    };
                    async_nats::jetstream::new(client.clone())
                        .get_or_create_stream(config)
                        .await
                        .map_err(|e| {
                            CamelError::external(format!("creating stream `{name}`"), e)
                        })?;
                }
                Ok(client)
            })
            .await
    }

    fn header_map(entry: &Entry) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (k, v) in entry.attributes.iter() {
            headers.insert(k.as_ref(), v.as_ref());
        }
        headers.insert(MSG_ID, entry.idempotency_key.as_ref());
        if let Some(group) = &entry.group {
            headers.insert(GROUP_KEY_HEADER, group.as_ref());
        }
        headers
    }

    async fn send_jetstream(&self, client: &async_nats::Client, entries: &[Entry]) -> SendOutcome {
        let js = async_nats::jetstream::new(client.clone());
        let mut pending = Vec::with_capacity(entries.len());
        for entry in entries {
            let publish = Publish::build()
                .payload(entry.payload.clone())
                .headers(Self::header_map(entry));
            pending.push(js.send_publish(self.subject.clone(), publish).await);
        }
        let acks = pending.into_iter().map(|p| async move {
            match p {
                Ok(ack) => ack
                    .await
                    .map(|ack| {
                        Receipt::default()
                            .with(STREAM_HEADER, ack.stream)
                            .with(SEQUENCE_HEADER, ack.sequence)
                            .with(DUPLICATE_HEADER, ack.duplicate)
                    })
                    .map_err(|e| CamelError::external("JetStream publish", e)),
                Err(e) => Err(CamelError::external("JetStream publish", e)),
            }
        });
        SendOutcome::Answered(join_all(acks).await)
    }

    async fn send_core(&self, client: &async_nats::Client, entries: &[Entry]) -> SendOutcome {
        let mut results = Vec::with_capacity(entries.len());
        for entry in entries {
            let r = client
                .publish_with_headers(
                    self.subject.clone(),
                    Self::header_map(entry),
                    entry.payload.clone(),
                )
                .await
                .map(|()| Receipt::default())
                .map_err(|e| CamelError::external("NATS publish", e));
            results.push(r);
        }
        if let Err(e) = client.flush().await {
            return SendOutcome::Failed(CamelError::external("NATS flush", e));
        }
        SendOutcome::Answered(results)
    }
}

impl BatchCodec for NatsCodec {
    fn name(&self) -> &'static str {
        "nats"
    }

    fn destination(&self) -> String {
        self.subject.clone()
    }

    fn identity(&self, identity: &mut BatchIdentity) {
        identity
            .part("subject", &self.subject)
            .part("jetstream", self.jetstream)
            .part("headers", self.headers.joined())
            .part("connect_timeout", self.connect_timeout.as_millis())
            .part("stream", self.stream.as_deref().unwrap_or(""))
            // Server URLs may carry a user and password.
            .secret("servers", &self.servers);
    }

    fn limits(&self) -> Limits {
        self.limits
    }

    fn encode(&self, exchange: &Exchange, meta: EntryMeta) -> Result<Entry, CamelError> {
        Ok(Entry::new(
            exchange.message.body.to_bytes(),
            self.headers.select(exchange),
            meta,
        ))
    }

    fn send_batch<'a>(&'a self, entries: &'a [Entry]) -> BoxFuture<'a, SendOutcome> {
        Box::pin(async move {
            let client = match self.client().await {
                Ok(c) => c,
                Err(e) => return SendOutcome::Failed(e),
            };
            if self.jetstream {
                self.send_jetstream(client, entries).await
            } else {
                self.send_core(client, entries).await
            }
        })
    }

    fn bisect_refused(&self) -> bool {
        // Every publish is answered on its own: there is no whole-request refusal.
        false
    }
}
