//! The SQS codec: entries to `SendMessageBatch`, `Successful[]`/`Failed[]` back to
//! entries.

use std::fmt;

use crate::aws::{batch_error, check_group_id, dedup_id, map_batch_answer, BatchFailure};
use aws_sdk_sqs::operation::send_message_batch::SendMessageBatchOutput;
use aws_sdk_sqs::types::{MessageAttributeValue, SendMessageBatchRequestEntry};
use camel_api::{CamelError, Exchange};
use futures::future::BoxFuture;
use tokio::sync::OnceCell;

use crate::attributes::HeaderSelection;
use crate::codec::{
    BatchCodec, BatchIdentity, Entry, EntryMeta, EntryResult, Limits, Receipt, SendOutcome,
};
use crate::producer::OUTBOX_ID_HEADER;

/// SQS limits: 10 entries per batch, 1 MiB per message and per request.
const MAX_ENTRIES: usize = 10;
const MAX_BYTES: usize = 1 << 20;
/// SQS allows at most 10 message attributes.
const MAX_ATTRIBUTES: usize = 10;
/// Header set on the exchange: the `MessageId` SQS gave the message.
pub const MESSAGE_ID_HEADER: &str = "CamelAwsSqsMessageId";
/// Header set on the exchange of a FIFO queue: the message's `SequenceNumber`.
pub const SEQUENCE_NUMBER_HEADER: &str = "CamelAwsSqsSequenceNumber";

/// Error codes of a refused `SendMessageBatch` that no entry caused: credentials and
/// signing, permissions, throttling and account limits, the queue itself, and its KMS
/// key. Splitting such a request cannot isolate a culprit (every half fails the same
/// way), so the request fails whole. docs/sinks.md lists them.
const NOT_ENTRY_CAUSED: &[&str] = &[
    // Credentials, signing, permissions.
    "AccessDenied",
    "AccessDeniedException",
    "ExpiredToken",
    "ExpiredTokenException",
    "IncompleteSignature",
    "InvalidClientTokenId",
    "InvalidSecurity",
    "MissingAuthenticationToken",
    "OptInRequired",
    "RequestExpired",
    "SignatureDoesNotMatch",
    "UnrecognizedClientException",
    // Throttling and account limits.
    "OverLimit",
    "RequestThrottled",
    "Throttling",
    "ThrottlingException",
    // The queue.
    "InvalidAddress",
    "QueueDoesNotExist",
    "AWS.SimpleQueueService.NonExistentQueue",
    "UnsupportedOperation",
    "AWS.SimpleQueueService.UnsupportedOperation",
];

/// Prefixes of codes that are all not entry-caused: the queue's KMS key (`KMS.*` as
/// the query-compatible code, `Kms*` as the JSON error type).
const NOT_ENTRY_CAUSED_PREFIXES: &[&str] = &["KMS.", "Kms"];

/// Whether a 4xx answer with `code` may have been caused by an entry (then the
/// request is bisected) rather than by the credentials, limits or the queue.
fn entry_caused(code: &str) -> bool {
    !(NOT_ENTRY_CAUSED.contains(&code)
        || NOT_ENTRY_CAUSED_PREFIXES
            .iter()
            .any(|p| code.starts_with(p)))
}

/// Static credentials for SQS (the AWS sinks share one type).
pub type SqsCredentials = crate::aws::AwsCredentials;

/// Sends batches to one SQS queue.
pub struct SqsCodec {
    queue: String,
    region: String,
    endpoint: Option<String>,
    credentials: Option<SqsCredentials>,
    headers: HeaderSelection,
    max_message_bytes: usize,
    client: aws_sdk_sqs::Client,
    queue_url: OnceCell<String>,
}

impl fmt::Debug for SqsCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqsCodec")
            .field("queue", &self.queue_name())
            .field("region", &self.region)
            .finish()
    }
}

impl SqsCodec {
    /// A codec for `queue` (a name or a queue URL) in `region`, optionally at a custom
    /// `endpoint` (moto, LocalStack).
    pub fn new(
        queue: &str,
        region: &str,
        endpoint: Option<&str>,
        credentials: SqsCredentials,
    ) -> Self {
        Self::with_credentials(queue, region, endpoint, Some(credentials))
    }

    /// Like [`SqsCodec::new`]; without static credentials the AWS default chain finds
    /// them when the first request is signed (environment, profile, SSO, web identity,
    /// container or instance metadata).
    pub fn with_credentials(
        queue: &str,
        region: &str,
        endpoint: Option<&str>,
        credentials: Option<SqsCredentials>,
    ) -> Self {
        SqsCodec {
            queue: queue.to_string(),
            region: region.to_string(),
            endpoint: endpoint.map(str::to_string),
            client: super::client::client(region, endpoint, credentials.as_ref()),
            credentials,
            headers: HeaderSelection::default(),
            max_message_bytes: MAX_BYTES,
            queue_url: OnceCell::new(),
        }
    }

    /// Copies these exchange headers into message attributes (at most 10).
    pub fn with_headers(mut self, headers: HeaderSelection) -> Self {
        self.headers = headers;
        self
    }

    /// Lowers the per-message limit (a queue's `MaximumMessageSize`).
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes.min(MAX_BYTES);
        self
    }

    /// The queue name (the last path segment of a URL).
    fn queue_name(&self) -> &str {
        self.queue.rsplit('/').next().unwrap_or(&self.queue)
    }

    fn is_fifo(&self) -> bool {
        is_fifo_queue(&self.queue)
    }

    async fn queue_url(&self) -> Result<&str, CamelError> {
        self.queue_url
            .get_or_try_init(|| super::client::queue_url(&self.client, &self.queue))
            .await
            .map(String::as_str)
    }

    fn request_entry(
        &self,
        index: usize,
        entry: &Entry,
    ) -> Result<SendMessageBatchRequestEntry, CamelError> {
        let mut builder = SendMessageBatchRequestEntry::builder()
            .id(index.to_string())
            .message_body(String::from_utf8_lossy(&entry.payload));
        if self.is_fifo() {
            builder = builder
                .set_message_group_id(entry.group.as_deref().map(str::to_string))
                .message_deduplication_id(dedup_id(&entry.idempotency_key));
        }
        for (name, value) in entry.attributes.iter() {
            let attr = MessageAttributeValue::builder()
                .data_type("String")
                .string_value(value.as_ref())
                .build()
                .map_err(|e| CamelError::external("building an SQS attribute", e))?;
            builder = builder.message_attributes(name.as_ref(), attr);
        }
        builder
            .build()
            .map_err(|e| CamelError::external("building an SQS entry", e))
    }

    async fn send(&self, entries: &[Entry]) -> SendOutcome {
        let url = match self.queue_url().await {
            Ok(u) => u.to_string(),
            Err(e) => return SendOutcome::Failed(e),
        };
        let mut request = self.client.send_message_batch().queue_url(url);
        for (i, e) in entries.iter().enumerate() {
            match self.request_entry(i, e) {
                Ok(entry) => request = request.entries(entry),
                Err(err) => return SendOutcome::Refused(err),
            }
        }
        match request.send().await {
            Ok(out) => SendOutcome::Answered(map_answer(out, entries.len())),
            Err(e) => batch_error("SendMessageBatch", e, entry_caused),
        }
    }
}

/// True for a FIFO queue: its name (or a queue URL's last segment) ends in `.fifo`.
pub(crate) fn is_fifo_queue(queue: &str) -> bool {
    queue.rsplit('/').next().unwrap_or(queue).ends_with(".fifo")
}

/// Maps `Successful[]` and `Failed[]` back to entries by id (the entry's index).
fn map_answer(out: SendMessageBatchOutput, n: usize) -> Vec<EntryResult> {
    let successes = out.successful.into_iter().map(|ok| {
        let mut receipt = Receipt::default().with(MESSAGE_ID_HEADER, ok.message_id);
        if let Some(sequence) = ok.sequence_number {
            receipt = receipt.with(SEQUENCE_NUMBER_HEADER, sequence);
        }
        (ok.id, receipt)
    });
    let failures = out.failed.into_iter().map(|f| BatchFailure {
        id: f.id,
        code: f.code,
        sender_fault: f.sender_fault,
        message: f.message,
    });
    map_batch_answer("SQS", n, successes, failures)
}

impl BatchCodec for SqsCodec {
    fn name(&self) -> &'static str {
        "sqs"
    }

    fn destination(&self) -> String {
        self.queue_name().to_string()
    }

    fn identity(&self, identity: &mut BatchIdentity) {
        identity
            .part("queue", &self.queue)
            .part("region", &self.region)
            .part("endpoint", self.endpoint.as_deref().unwrap_or(""))
            .part("headers", self.headers.joined())
            .part("max_message_bytes", self.max_message_bytes)
            .part("default_credentials", self.credentials.is_none());
        if let Some(c) = &self.credentials {
            identity
                .secret("access_key_id", &c.access_key_id)
                .secret("secret_access_key", &c.secret_access_key)
                .secret("session_token", c.session_token.as_deref().unwrap_or(""));
        }
    }

    fn limits(&self) -> Limits {
        Limits {
            max_entries: MAX_ENTRIES,
            max_request_bytes: MAX_BYTES,
            max_entry_bytes: self.max_message_bytes,
        }
    }

    fn encode(&self, exchange: &Exchange, meta: EntryMeta) -> Result<Entry, CamelError> {
        let body = exchange.message.body.as_text().ok_or_else(|| {
            CamelError::conversion("SQS message body", "the body is empty or not UTF-8 text")
        })?;
        if body.is_empty() {
            return Err(CamelError::conversion(
                "SQS message body",
                "the body is empty",
            ));
        }
        let mut meta = meta;
        if self.is_fifo() {
            if meta.group.is_none() && exchange.header(OUTBOX_ID_HEADER).is_some() {
                // An outbox message without a group key is unordered: a group of its own.
                meta.group = Some(meta.idempotency_key.clone());
            }
            let Some(group) = &meta.group else {
                return Err(CamelError::processor(
                    "a FIFO queue needs a message group: set `group_key` on the endpoint (a relayed outbox message brings its group key)",
                ));
            };
            check_group_id("SQS", group)?;
        }
        let mut attributes = self.headers.select(exchange);
        let listed = attributes
            .iter()
            .filter(|(n, _)| !crate::attributes::is_trace_context(n))
            .count();
        if listed > MAX_ATTRIBUTES {
            return Err(CamelError::processor(
                "SQS allows at most 10 message attributes",
            ));
        }
        // The trace context comes last and gives way to the listed headers.
        attributes.truncate(MAX_ATTRIBUTES);
        // SQS counts the body plus each attribute's name, type and value.
        let size = body.len()
            + attributes
                .iter()
                .map(|(k, v)| k.len() + v.len() + "String".len())
                .sum::<usize>();
        let payload = bytes::Bytes::copy_from_slice(body.as_bytes());
        Ok(Entry::new(payload, attributes, meta).with_size(size))
    }

    fn send_batch<'a>(&'a self, entries: &'a [Entry]) -> BoxFuture<'a, SendOutcome> {
        Box::pin(self.send(entries))
    }

    /// A FIFO queue delivers a group in the order it was sent: an entry of a group
    /// after a failed one in the same batch must not succeed ahead of its retry.
    fn strict_group_order(&self) -> bool {
        self.is_fifo()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(status: u16, code: &str) -> bool {
        (400..500).contains(&status) && entry_caused(code)
    }

    #[test]
    fn only_errors_an_entry_can_cause_are_bisected() {
        for code in [
            "InvalidParameterValue",
            "InvalidMessageContents",
            "AWS.SimpleQueueService.BatchRequestTooLong",
            "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
        ] {
            assert!(refused(400, code), "{code}");
        }
        for code in [
            "ExpiredToken",
            "RequestExpired",
            "InvalidSecurity",
            "OverLimit",
            "KMS.DisabledException",
            "KMS.ThrottlingException",
            "KmsAccessDenied",
            "KmsThrottled",
            "AccessDenied",
            "AWS.SimpleQueueService.NonExistentQueue",
        ] {
            assert!(!refused(400, code), "{code}");
            assert!(!refused(403, code), "{code}");
        }
        assert!(!refused(500, "InternalError"), "a server error fails whole");
    }

    #[test]
    fn a_fifo_group_id_sqs_would_refuse_fails_before_queueing() {
        let codec = SqsCodec::new(
            "orders.fifo",
            "us-east-1",
            None,
            SqsCredentials {
                access_key_id: "a".into(),
                secret_access_key: "s".into(),
                session_token: None,
            },
        );
        let encode = |group: &str| {
            let meta = EntryMeta {
                group: Some(group.into()),
                idempotency_key: "k".into(),
            };
            codec.encode(&Exchange::new("body"), meta)
        };
        assert!(encode("customer-42_A.b:c").is_ok());
        assert!(encode(&"g".repeat(128)).is_ok());
        let long = encode(&"g".repeat(129)).unwrap_err().to_string();
        assert!(long.contains("129 characters"), "{long}");
        let space = encode("two words").unwrap_err().to_string();
        assert!(space.contains("' '"), "{space}");
        assert!(encode("café").is_err());
    }

    #[test]
    fn a_fifo_queue_takes_an_ungrouped_outbox_message_as_a_group_of_its_own() {
        let codec = SqsCodec::new(
            "https://sqs.eu-west-1.amazonaws.com/1/orders.fifo",
            "eu-west-1",
            None,
            SqsCredentials {
                access_key_id: "a".into(),
                secret_access_key: "s".into(),
                session_token: None,
            },
        );
        let meta = || EntryMeta {
            group: None,
            idempotency_key: "outbox-orders-7".into(),
        };
        let plain = codec.encode(&Exchange::new("body"), meta()).unwrap_err();
        assert!(plain.to_string().contains("group_key"), "{plain}");
        let relayed = Exchange::new("body").with_header(OUTBOX_ID_HEADER, 7);
        let entry = codec.encode(&relayed, meta()).unwrap();
        assert_eq!(entry.group.as_deref(), Some("outbox-orders-7"));
        assert!(is_fifo_queue("orders.fifo") && !is_fifo_queue("orders"));
        assert!(!is_fifo_queue(
            "https://sqs.eu-west-1.amazonaws.com/1/orders"
        ));
    }

    #[test]
    fn dedup_ids_are_valid_for_sqs() {
        assert_eq!(dedup_id("ID-ab-12"), "ID-ab-12");
        let long = "x".repeat(200);
        assert_eq!(dedup_id(&long).len(), 64);
        assert_eq!(dedup_id("with space").len(), 64);
    }
}
