//! The contract between the generic batcher and one kind of destination.
//!
//! A codec knows three things the batcher does not: what makes two deliveries share a
//! request (the [`BatchIdentity`]), how one exchange becomes the bytes a single send
//! would carry ([`BatchCodec::encode`]), and how a list of entries becomes one request
//! whose answer is mapped back to each entry ([`BatchCodec::send_batch`]). Everything
//! else — queueing, fairness, ordering, bounds, bisection — lives in the batcher, once.
//!
//! ```
//! use camel_sinks::BatchIdentity;
//! let mut a = BatchIdentity::new("sqs");
//! a.part("queue", "orders").secret("secret_key", "k1");
//! let mut b = BatchIdentity::new("sqs");
//! b.part("queue", "orders").secret("secret_key", "k2");
//! // Different credentials, different batchers; the secret itself is never kept.
//! assert_ne!(a.digest(), b.digest());
//! ```

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use camel_api::{CamelError, Exchange, Value};
use futures::future::BoxFuture;
use sha2::{Digest, Sha256};

/// The hard limits of one request to a destination, as the service defines them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most entries one request may carry.
    pub max_entries: usize,
    /// Most bytes one request may carry (the sum of the entries' encoded sizes).
    pub max_request_bytes: usize,
    /// Most bytes one entry may carry.
    pub max_entry_bytes: usize,
}

/// What the producer knows about an entry before the codec encodes it.
#[derive(Clone, Debug)]
pub struct EntryMeta {
    /// The ordering group (SQS `MessageGroupId`, Pub/Sub ordering key, a NATS key).
    pub group: Option<Arc<str>>,
    /// The deduplication key: stable across retries of the same exchange.
    pub idempotency_key: Arc<str>,
}

/// One encoded delivery, ready to be put in a request.
///
/// Cheap to clone (the payload and strings are reference counted), because a refused
/// request is bisected and its halves are sent again.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The message bytes, exactly as a single send would carry them.
    pub payload: Bytes,
    /// Message attributes (SQS message attributes, Pub/Sub attributes, NATS headers).
    pub attributes: Arc<[(Arc<str>, Arc<str>)]>,
    /// The ordering group, if any.
    pub group: Option<Arc<str>>,
    /// The deduplication key.
    pub idempotency_key: Arc<str>,
    /// The bytes this entry adds to a request, as the destination counts them.
    pub size: usize,
}

impl Entry {
    /// An entry whose size is its payload plus its attributes' names and values.
    pub fn new(payload: Bytes, attributes: Vec<(Arc<str>, Arc<str>)>, meta: EntryMeta) -> Self {
        let size = payload.len()
            + attributes
                .iter()
                .map(|(k, v)| k.len() + v.len())
                .sum::<usize>();
        Entry {
            payload,
            attributes: attributes.into(),
            group: meta.group,
            idempotency_key: meta.idempotency_key,
            size,
        }
    }

    /// Replaces the size with the codec's own measure (base64 growth, fixed overheads).
    pub fn with_size(mut self, size: usize) -> Self {
        self.size = size;
        self
    }
}

/// What the destination said about one accepted entry (its message id, a sequence
/// number): set as headers on the entry's exchange once the sink step returns.
///
/// ```
/// use camel_api::Exchange;
/// use camel_sinks::Receipt;
/// let mut ex = Exchange::new("x");
/// Receipt::default().with("CamelAwsSqsMessageId", "m-1").apply_to(&mut ex);
/// assert_eq!(ex.header("CamelAwsSqsMessageId").unwrap().to_string(), "m-1");
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Receipt {
    headers: Vec<(&'static str, Value)>,
}

impl Receipt {
    /// Adds a header.
    pub fn with(mut self, name: &'static str, value: impl Into<Value>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// The headers, in the order they were added.
    pub fn headers(&self) -> &[(&'static str, Value)] {
        &self.headers
    }

    /// Sets the headers on `exchange`.
    pub fn apply_to(self, exchange: &mut Exchange) {
        for (name, value) in self.headers {
            exchange.message.headers.insert(name, value);
        }
    }
}

/// One entry's result: its receipt, or why it failed.
pub type EntryResult = Result<Receipt, CamelError>;

/// The answer to one request.
#[derive(Debug)]
pub enum SendOutcome {
    /// The destination answered: one result per entry, in the order they were given.
    Answered(Vec<EntryResult>),
    /// The destination refused the whole request because of what it carried (a
    /// validation error): the batcher may bisect it to isolate the culprit.
    Refused(CamelError),
    /// The request failed as a whole for a reason no entry caused (transport, server
    /// error, credentials): every entry fails with it and nothing is bisected.
    Failed(CamelError),
}

/// A destination's request format: the one thing a new sink type implements.
///
/// `send_batch` runs in a task the batcher supervises, never in the batcher loop; a
/// send that panics or overruns the send timeout fails its own entries only.
pub trait BatchCodec: Send + Sync + fmt::Debug + 'static {
    /// Short name of the codec (`sqs`, `pubsub`, `nats`): part of the registry key and
    /// of the `sink` label.
    fn name(&self) -> &'static str;

    /// A name for the destination that is safe to log (a queue or topic name; never
    /// a credential).
    fn destination(&self) -> String;

    /// Adds everything that shapes a request to `identity`: two codecs with different
    /// identities never share a request. Secrets go in with [`BatchIdentity::secret`];
    /// only their digest is ever kept.
    fn identity(&self, identity: &mut BatchIdentity);

    /// The request limits of the destination.
    fn limits(&self) -> Limits;

    /// Encodes one exchange into the entry a single send would carry.
    fn encode(&self, exchange: &Exchange, meta: EntryMeta) -> Result<Entry, CamelError>;

    /// Sends `entries` as one request and maps the answer back to each entry.
    fn send_batch<'a>(&'a self, entries: &'a [Entry]) -> BoxFuture<'a, SendOutcome>;

    /// Whether a [`SendOutcome::Refused`] request is split in halves and sent again
    /// until the refused entry is isolated.
    fn bisect_refused(&self) -> bool {
        true
    }

    /// Whether a failed entry fails the entries of its group that follow it in the same
    /// batch ([`SinkError::EarlierEntryFailed`](crate::SinkError::EarlierEntryFailed)):
    /// those the destination answered in the same request, and those of a bisected
    /// batch's later requests (which are then not sent). For destinations that keep a
    /// group's order strictly (an SQS FIFO queue); elsewhere a later success is kept.
    fn strict_group_order(&self) -> bool {
        false
    }

    /// Whether all entries of one request must share one group (Pub/Sub ordering keys).
    fn group_forms_batch(&self) -> bool {
        false
    }
}

/// Everything that shapes a request, reduced to a digest.
///
/// Parts are written in order with their names, so `("a", "bc")` and `("ab", "c")`
/// differ. Only the SHA-256 digest is kept: a credential that shapes the identity
/// never appears in a registered name, a log line or a metric label.
#[derive(Clone)]
pub struct BatchIdentity {
    hasher: Sha256,
}

impl fmt::Debug for BatchIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BatchIdentity(..)")
    }
}

impl BatchIdentity {
    /// An empty identity for codec `codec`.
    pub fn new(codec: &str) -> Self {
        let mut identity = BatchIdentity {
            hasher: Sha256::new(),
        };
        identity.part("codec", codec);
        identity
    }

    /// Adds a named part that is not secret.
    pub fn part(&mut self, name: &str, value: impl fmt::Display) -> &mut Self {
        let value = value.to_string();
        self.write(name, value.as_bytes())
    }

    /// Adds a named secret part (a credential): only its digest contributes.
    pub fn secret(&mut self, name: &str, value: &str) -> &mut Self {
        let inner = Sha256::digest(value.as_bytes());
        self.write(name, &inner)
    }

    fn write(&mut self, name: &str, value: &[u8]) -> &mut Self {
        for bytes in [name.as_bytes(), value] {
            self.hasher.update((bytes.len() as u64).to_le_bytes());
            self.hasher.update(bytes);
        }
        self
    }

    /// The digest of all parts.
    pub fn digest(&self) -> [u8; 32] {
        self.hasher.clone().finalize().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_depends_on_every_part_and_its_boundaries() {
        let mut a = BatchIdentity::new("sqs");
        a.part("q", "ab").part("r", "c");
        let mut b = BatchIdentity::new("sqs");
        b.part("q", "a").part("r", "bc");
        assert_ne!(a.digest(), b.digest());
        let mut c = BatchIdentity::new("sqs");
        c.part("q", "ab").part("r", "c");
        assert_eq!(a.digest(), c.digest());
    }

    #[test]
    fn secrets_change_the_digest_but_are_not_kept() {
        let mut a = BatchIdentity::new("sqs");
        a.secret("key", "s3cret-one");
        let mut b = BatchIdentity::new("sqs");
        b.secret("key", "s3cret-two");
        assert_ne!(a.digest(), b.digest());
        assert!(!format!("{a:?}").contains("s3cret"));
    }

    #[test]
    fn entry_size_counts_payload_and_attributes() {
        let meta = EntryMeta {
            group: None,
            idempotency_key: "k".into(),
        };
        let e = Entry::new(
            Bytes::from_static(b"hello"),
            vec![("ab".into(), "cde".into())],
            meta,
        );
        assert_eq!(e.size, 10);
        assert_eq!(e.with_size(3).size, 3);
    }
}
