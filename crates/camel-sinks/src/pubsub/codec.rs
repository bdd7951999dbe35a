//! The Pub/Sub codec: each entry is the JSON of one `PubsubMessage`; a batch is those
//! objects joined into one `publish` body.

use std::fmt;
use std::sync::Arc;

use base64::Engine;
use bytes::Bytes;
use camel_api::{CamelError, Exchange};
use futures::future::BoxFuture;
use serde_json::{json, Map, Value as Json};

use super::credentials::AdcEnvironment;
use super::pause::{Gate, PausedKeys};
use super::token::{TokenOrigin, TokenSource};
use crate::attributes::HeaderSelection;
use crate::batcher::BatcherRegistry;
use crate::codec::{
    BatchCodec, BatchIdentity, Entry, EntryMeta, EntryResult, Limits, Receipt, SendOutcome,
};

/// Pub/Sub limits: 1000 messages and 10 MB per publish request.
const MAX_MESSAGES: usize = 1000;
const MAX_REQUEST_BYTES: usize = 10_000_000;
/// Room for `{"messages":[` … `]}`.
const ENVELOPE: usize = 32;

/// Header set on the exchange: the `messageId` Pub/Sub gave the message.
pub const MESSAGE_ID_HEADER: &str = "CamelGooglePubsubMessageId";

/// Publishes batches to one topic.
pub struct PubSubCodec {
    topic: String,
    base_url: String,
    token: TokenSource,
    headers: HeaderSelection,
    http: reqwest::Client,
    paused: Arc<PausedKeys>,
}

impl fmt::Debug for PubSubCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PubSubCodec")
            .field("topic", &self.topic)
            .field("base_url", &self.base_url)
            .finish()
    }
}

impl PubSubCodec {
    /// A codec for `topic` (`projects/P/topics/T`) at `base_url` (`http://127.0.0.1:8085`
    /// for the emulator), with an optional OAuth bearer token.
    pub fn new(topic: &str, base_url: &str, token: Option<String>) -> Self {
        PubSubCodec {
            topic: topic.to_string(),
            base_url: base_url.trim_end_matches('/').to_string(),
            token: token.map_or(TokenSource::None, TokenSource::Fixed),
            headers: HeaderSelection::default(),
            http: reqwest::Client::new(),
            paused: Arc::default(),
        }
    }

    /// Shares the topic's paused ordering keys kept in `registry` (what the component
    /// does): a pause then holds for every route and codec instance publishing to the
    /// topic through that registry, across idle stops and swaps. Without it the pause
    /// is this codec's own.
    pub fn with_registry(mut self, registry: &BatcherRegistry) -> Self {
        self.paused = registry.destination_state::<PausedKeys>(&self.topic);
        self
    }

    /// Takes its bearer tokens from `token` (the component's choice, see `connection`).
    pub(crate) fn with_token(mut self, token: TokenSource) -> Self {
        self.token = token;
        self
    }

    /// Takes its bearer token from the metadata server at `host` (Google's runtimes:
    /// `metadata.google.internal`) instead of a fixed one, and fetches a new one five
    /// minutes before the one it holds expires.
    pub fn with_metadata_token(mut self, host: &str) -> Self {
        let host = host.trim_end_matches('/').to_string();
        self.token = TokenSource::refreshing(TokenOrigin::Metadata(host));
        self
    }

    /// Takes its bearer tokens from a credentials file (a service-account key or an
    /// `authorized_user` file), read at the first publish, refreshed before expiry.
    pub fn with_credentials_file(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.token = TokenSource::refreshing(TokenOrigin::File(path.into()));
        self
    }

    /// Takes its bearer tokens from Application Default Credentials, as this process's
    /// environment finds them (`GOOGLE_APPLICATION_CREDENTIALS`, gcloud's well-known file,
    /// the metadata server at `metadata_host` or `GCE_METADATA_HOST`), looked up at the
    /// first publish.
    pub fn with_default_credentials(mut self, metadata_host: Option<&str>) -> Self {
        let env = AdcEnvironment::from_process(metadata_host.map(str::to_string));
        self.token = TokenSource::refreshing(TokenOrigin::Adc(env));
        self
    }

    /// Like [`PubSubCodec::with_default_credentials`], looking in the given places
    /// instead of this process's environment (tests; a host that keeps its credentials
    /// elsewhere).
    pub fn with_default_credentials_at(
        mut self,
        credentials_file: Option<std::path::PathBuf>,
        well_known_file: Option<std::path::PathBuf>,
        metadata_host: &str,
    ) -> Self {
        let env = AdcEnvironment {
            credentials_file,
            well_known_file,
            metadata_host: metadata_host.to_string(),
        };
        self.token = TokenSource::refreshing(TokenOrigin::Adc(env));
        self
    }

    /// Copies these exchange headers into message attributes.
    pub fn with_headers(mut self, headers: HeaderSelection) -> Self {
        self.headers = headers;
        self
    }

    /// Resumes a paused ordering key of this codec's topic; true if it was paused.
    pub fn resume(&self, ordering_key: &str) -> bool {
        self.paused.resume(ordering_key)
    }

    async fn publish(&self, entries: &[Entry]) -> SendOutcome {
        let size: usize = entries.iter().map(|e| e.size).sum();
        let mut body = Vec::with_capacity(size + ENVELOPE);
        body.extend_from_slice(b"{\"messages\":[");
        for (i, e) in entries.iter().enumerate() {
            if i > 0 {
                body.push(b',');
            }
            body.extend_from_slice(&e.payload);
        }
        body.extend_from_slice(b"]}");
        let url = format!("{}/v1/{}:publish", self.base_url, self.topic);
        let mut request = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        match self.token.bearer().await {
            Ok(Some(token)) => request = request.bearer_auth(token),
            Ok(None) => {}
            Err(e) => return SendOutcome::Failed(e),
        }
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) => return SendOutcome::Failed(CamelError::external("Pub/Sub publish", e)),
        };
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if status.is_success() {
            // The ids come in the order of the messages.
            let ids: Vec<String> = serde_json::from_str::<Json>(&text)
                .ok()
                .and_then(|j| {
                    j["messageIds"].as_array().map(|ids| {
                        ids.iter()
                            .map(|id| id.as_str().unwrap_or_default().to_string())
                            .collect()
                    })
                })
                .unwrap_or_default();
            if ids.len() == entries.len() {
                return SendOutcome::Answered(
                    ids.into_iter()
                        .map(|id| Ok(Receipt::default().with(MESSAGE_ID_HEADER, id)))
                        .collect(),
                );
            }
            return SendOutcome::Failed(CamelError::processor(format!(
                "Pub/Sub publish answered {} ids for {} messages",
                ids.len(),
                entries.len()
            )));
        }
        let error = CamelError::processor(format!("Pub/Sub publish: HTTP {status}: {text}"));
        if status == reqwest::StatusCode::BAD_REQUEST {
            SendOutcome::Refused(error)
        } else {
            SendOutcome::Failed(error)
        }
    }

    async fn send(&self, entries: &[Entry]) -> SendOutcome {
        let key = entries.first().and_then(|e| e.group.clone());
        let from = match self.paused.gate(key.as_ref(), entries) {
            Gate::Paused => {
                return SendOutcome::Answered(
                    entries
                        .iter()
                        .map(|_| Err(paused_error(key.as_deref())))
                        .collect(),
                )
            }
            Gate::PublishFrom(at) => at,
        };
        let outcome = self.publish(&entries[from..]).await;
        let failed = !matches!(&outcome, SendOutcome::Answered(r) if r.iter().all(Result::is_ok));
        if let (true, Some(k)) = (failed, &key) {
            self.paused.pause(k, &entries[from].idempotency_key);
        }
        if from == 0 {
            return outcome;
        }
        let mut results: Vec<EntryResult> = (0..from)
            .map(|_| Err(paused_error(key.as_deref())))
            .collect();
        match outcome {
            SendOutcome::Answered(rest) => results.extend(rest),
            SendOutcome::Refused(e) | SendOutcome::Failed(e) => {
                results.extend((from..entries.len()).map(|_| Err(e.clone())))
            }
        }
        SendOutcome::Answered(results)
    }
}

fn paused_error(key: Option<&str>) -> CamelError {
    CamelError::processor(format!(
        "ordering key `{}` is paused after a failed publish; it resumes when the failed message is retried",
        key.unwrap_or("")
    ))
}

impl BatchCodec for PubSubCodec {
    fn name(&self) -> &'static str {
        "pubsub"
    }

    fn destination(&self) -> String {
        self.topic.clone()
    }

    fn identity(&self, identity: &mut BatchIdentity) {
        identity
            .part("topic", &self.topic)
            .part("base_url", &self.base_url)
            .part("headers", self.headers.joined());
        match &self.token {
            TokenSource::None => identity.secret("token", ""),
            TokenSource::Fixed(t) => identity.secret("token", t),
            TokenSource::Refreshing(r) => identity.part("token_source", r.origin.label()),
        };
    }

    fn limits(&self) -> Limits {
        Limits {
            max_entries: MAX_MESSAGES,
            max_request_bytes: MAX_REQUEST_BYTES - ENVELOPE,
            max_entry_bytes: MAX_REQUEST_BYTES - ENVELOPE,
        }
    }

    fn encode(&self, exchange: &Exchange, meta: EntryMeta) -> Result<Entry, CamelError> {
        let data =
            base64::engine::general_purpose::STANDARD.encode(exchange.message.body.to_bytes());
        let attributes = self.headers.select(exchange);
        let mut message = Map::new();
        if !data.is_empty() {
            message.insert("data".into(), Json::String(data));
        }
        if !attributes.is_empty() {
            let map: Map<String, Json> = attributes
                .iter()
                .map(|(k, v)| (k.to_string(), Json::String(v.to_string())))
                .collect();
            message.insert("attributes".into(), Json::Object(map));
        }
        if let Some(key) = &meta.group {
            message.insert("orderingKey".into(), json!(key.as_ref()));
        }
        let payload = Bytes::from(Json::Object(message).to_string());
        // One comma joins it to the others in a request.
        let size = payload.len() + 1;
        Ok(Entry::new(payload, attributes, meta).with_size(size))
    }

    fn send_batch<'a>(&'a self, entries: &'a [Entry]) -> BoxFuture<'a, SendOutcome> {
        Box::pin(self.send(entries))
    }

    fn group_forms_batch(&self) -> bool {
        true
    }
}
