//! The SNS codec: entries to `PublishBatch`, `Successful[]`/`Failed[]` back to entries.

use std::fmt;
use std::sync::Arc;

use aws_sdk_sns::operation::publish_batch::PublishBatchOutput;
use aws_sdk_sns::types::{MessageAttributeValue, PublishBatchRequestEntry};
use camel_api::{CamelError, Exchange};
use futures::future::BoxFuture;
use tokio::sync::OnceCell;

use crate::attributes::HeaderSelection;
use crate::aws::{
    batch_error, check_group_id, dedup_id, map_batch_answer, AwsCredentials, BatchFailure,
};
use crate::codec::{
    BatchCodec, BatchIdentity, Entry, EntryMeta, EntryResult, Limits, Receipt, SendOutcome,
};
use crate::producer::OUTBOX_ID_HEADER;

/// SNS limits: 10 entries per batch, 256 KiB per message and per request.
const MAX_ENTRIES: usize = 10;
const MAX_BYTES: usize = 256 * 1024;
/// SNS allows at most 10 message attributes per message.
const MAX_ATTRIBUTES: usize = 10;
/// Header set on the exchange: the `MessageId` SNS gave the message (Camel's name).
pub const MESSAGE_ID_HEADER: &str = "CamelAwsSnsMessageId";
/// Header set on the exchange of a FIFO topic: the message's `SequenceNumber`.
pub const SEQUENCE_NUMBER_HEADER: &str = "CamelAwsSnsSequenceNumber";
/// Header read from the exchange: the message's subject, over the endpoint's `subject`
/// (Camel's name).
pub const SUBJECT_HEADER: &str = "CamelAwsSnsSubject";

/// Error codes of a refused `PublishBatch` that no entry caused (credentials,
/// permissions, throttling, the topic, its KMS key): split, every half would fail the
/// same way, so the request fails whole.
const NOT_ENTRY_CAUSED: &[&str] = &[
    "AuthorizationError",
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
    "Throttled",
    "Throttling",
    "ThrottlingException",
    "NotFound",
    "EndpointDisabled",
    "PlatformApplicationDisabled",
];

/// Whether a 4xx answer with `code` may have been caused by an entry (then the
/// request is bisected).
fn entry_caused(code: &str) -> bool {
    !(NOT_ENTRY_CAUSED.contains(&code) || code.starts_with("KMS"))
}

/// Sends batches to one SNS topic.
pub struct SnsCodec {
    topic: String,
    region: String,
    endpoint: Option<String>,
    credentials: Option<AwsCredentials>,
    headers: HeaderSelection,
    subject: Option<String>,
    message_structure: Option<String>,
    content_based_deduplication: bool,
    auto_create_topic: bool,
    client: aws_sdk_sns::Client,
    topic_arn: OnceCell<String>,
}

impl fmt::Debug for SnsCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SnsCodec")
            .field("topic", &self.topic_name())
            .field("region", &self.region)
            .finish_non_exhaustive()
    }
}

impl SnsCodec {
    /// A codec for `topic` (a name or an ARN) in `region`, optionally at a custom
    /// `endpoint` (moto, LocalStack); without static credentials the AWS default chain
    /// finds them when the first request is signed.
    pub fn new(
        topic: &str,
        region: &str,
        endpoint: Option<&str>,
        credentials: Option<AwsCredentials>,
    ) -> Self {
        SnsCodec {
            topic: topic.to_string(),
            region: region.to_string(),
            endpoint: endpoint.map(str::to_string),
            client: super::client::client(region, endpoint, credentials.as_ref()),
            credentials,
            headers: HeaderSelection::default(),
            subject: None,
            message_structure: None,
            content_based_deduplication: false,
            auto_create_topic: false,
            topic_arn: OnceCell::new(),
        }
    }

    /// Copies these exchange headers into message attributes (at most 10; never a
    /// `Camel*` header: the component refuses those).
    pub fn with_headers(mut self, headers: HeaderSelection) -> Self {
        self.headers = headers;
        self
    }

    /// The subject of every message without a `CamelAwsSnsSubject` header.
    pub fn with_subject(mut self, subject: Option<String>) -> Self {
        self.subject = subject;
        self
    }

    /// `json`: the body holds one message per protocol (SNS's `MessageStructure`).
    pub fn with_message_structure(mut self, structure: Option<String>) -> Self {
        self.message_structure = structure;
        self
    }

    /// FIFO topics: send no `MessageDeduplicationId` (the topic deduplicates by content).
    pub fn with_content_based_deduplication(mut self, on: bool) -> Self {
        self.content_based_deduplication = on;
        self
    }

    /// Create the topic (`CreateTopic`) rather than look it up.
    pub fn with_auto_create_topic(mut self, on: bool) -> Self {
        self.auto_create_topic = on;
        self
    }

    /// The topic name (the last part of an ARN).
    fn topic_name(&self) -> &str {
        self.topic.rsplit(':').next().unwrap_or(&self.topic)
    }

    fn is_fifo(&self) -> bool {
        is_fifo_topic(&self.topic)
    }

    async fn topic_arn(&self) -> Result<&str, CamelError> {
        self.topic_arn
            .get_or_try_init(|| {
                super::client::topic_arn(&self.client, &self.topic, self.auto_create_topic)
            })
            .await
            .map(String::as_str)
    }

    fn request_entry(
        &self,
        index: usize,
        entry: &Entry,
    ) -> Result<PublishBatchRequestEntry, CamelError> {
        let mut builder = PublishBatchRequestEntry::builder()
            .id(index.to_string())
            .message(String::from_utf8_lossy(&entry.payload))
            .set_message_structure(self.message_structure.clone());
        if self.is_fifo() {
            builder = builder.set_message_group_id(entry.group.as_deref().map(str::to_string));
            if !self.content_based_deduplication {
                builder = builder.message_deduplication_id(dedup_id(&entry.idempotency_key));
            }
        }
        for (name, value) in entry.attributes.iter() {
            // The subject rides with the entry under the one `Camel*` name no message
            // attribute can have (the component refuses such names in `headers`).
            if name.as_ref() == SUBJECT_HEADER {
                builder = builder.subject(value.as_ref());
                continue;
            }
            let attr = MessageAttributeValue::builder()
                .data_type("String")
                .string_value(value.as_ref())
                .build()
                .map_err(|e| CamelError::external("building an SNS attribute", e))?;
            builder = builder.message_attributes(name.as_ref(), attr);
        }
        builder
            .build()
            .map_err(|e| CamelError::external("building an SNS entry", e))
    }

    async fn send(&self, entries: &[Entry]) -> SendOutcome {
        let arn = match self.topic_arn().await {
            Ok(a) => a.to_string(),
            Err(e) => return SendOutcome::Failed(e),
        };
        let mut request = self.client.publish_batch().topic_arn(arn);
        for (i, e) in entries.iter().enumerate() {
            match self.request_entry(i, e) {
                Ok(entry) => request = request.publish_batch_request_entries(entry),
                Err(err) => return SendOutcome::Refused(err),
            }
        }
        match request.send().await {
            Ok(out) => SendOutcome::Answered(map_answer(out, entries.len())),
            Err(e) => batch_error("PublishBatch", e, entry_caused),
        }
    }
}

/// True for a FIFO topic: its name (or an ARN's last part) ends in `.fifo`.
pub(crate) fn is_fifo_topic(topic: &str) -> bool {
    topic.rsplit(':').next().unwrap_or(topic).ends_with(".fifo")
}

/// Maps `Successful[]` and `Failed[]` back to entries by id (the entry's index).
fn map_answer(out: PublishBatchOutput, n: usize) -> Vec<EntryResult> {
    let successes = out.successful.unwrap_or_default().into_iter().map(|ok| {
        let mut receipt = Receipt::default();
        if let Some(id) = ok.message_id {
            receipt = receipt.with(MESSAGE_ID_HEADER, id);
        }
        if let Some(sequence) = ok.sequence_number {
            receipt = receipt.with(SEQUENCE_NUMBER_HEADER, sequence);
        }
        (ok.id.unwrap_or_default(), receipt)
    });
    let failures = out
        .failed
        .unwrap_or_default()
        .into_iter()
        .map(|f| BatchFailure {
            id: f.id,
            code: f.code,
            sender_fault: f.sender_fault,
            message: f.message,
        });
    map_batch_answer("SNS", n, successes, failures)
}

impl BatchCodec for SnsCodec {
    fn name(&self) -> &'static str {
        "sns"
    }

    fn destination(&self) -> String {
        self.topic_name().to_string()
    }

    fn identity(&self, identity: &mut BatchIdentity) {
        identity
            .part("topic", &self.topic)
            .part("region", &self.region)
            .part("endpoint", self.endpoint.as_deref().unwrap_or(""))
            .part("headers", self.headers.joined())
            .part("subject", self.subject.as_deref().unwrap_or(""))
            .part(
                "message_structure",
                self.message_structure.as_deref().unwrap_or(""),
            )
            .part(
                "content_based_deduplication",
                self.content_based_deduplication,
            )
            .part("auto_create_topic", self.auto_create_topic)
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
            max_entry_bytes: MAX_BYTES,
        }
    }

    fn encode(&self, exchange: &Exchange, meta: EntryMeta) -> Result<Entry, CamelError> {
        let body = exchange.message.body.as_text().ok_or_else(|| {
            CamelError::conversion("SNS message body", "the body is empty or not UTF-8 text")
        })?;
        if body.is_empty() {
            return Err(CamelError::conversion(
                "SNS message body",
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
                    "a FIFO topic needs a message group: set `group_key` or `message_group_id_strategy` on the endpoint",
                ));
            };
            check_group_id("SNS", group)?;
        }
        let mut attributes = self.headers.select(exchange);
        let listed = attributes
            .iter()
            .filter(|(n, _)| !crate::attributes::is_trace_context(n))
            .count();
        if listed > MAX_ATTRIBUTES {
            return Err(CamelError::processor(
                "SNS allows at most 10 message attributes",
            ));
        }
        attributes.truncate(MAX_ATTRIBUTES);
        // SNS counts the body plus each attribute's name, type and value.
        let mut size = body.len()
            + attributes
                .iter()
                .map(|(k, v)| k.len() + v.len() + "String".len())
                .sum::<usize>();
        let subject = exchange
            .header(SUBJECT_HEADER)
            .filter(|v| !v.is_null())
            .map(|v| v.to_string())
            .or_else(|| self.subject.clone());
        if let Some(subject) = subject {
            size += subject.len();
            attributes.push((Arc::from(SUBJECT_HEADER), Arc::from(subject)));
        }
        let payload = bytes::Bytes::copy_from_slice(body.as_bytes());
        Ok(Entry::new(payload, attributes, meta).with_size(size))
    }

    fn send_batch<'a>(&'a self, entries: &'a [Entry]) -> BoxFuture<'a, SendOutcome> {
        Box::pin(self.send(entries))
    }

    /// A FIFO topic delivers a group in the order it was published.
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
            "InvalidParameter",
            "InvalidParameterValue",
            "BatchRequestTooLong",
        ] {
            assert!(refused(400, code), "{code}");
        }
        for code in ["AuthorizationError", "NotFound", "Throttled", "KMSDisabled"] {
            assert!(!refused(400, code), "{code}");
        }
        assert!(!refused(500, "InternalError"));
    }

    #[test]
    fn a_fifo_topic_needs_a_group_and_the_subject_rides_with_the_entry() {
        let codec = SnsCodec::new(
            "arn:aws:sns:us-east-1:1:orders.fifo",
            "us-east-1",
            None,
            None,
        )
        .with_subject(Some("default".into()));
        let meta = |group: Option<&str>| EntryMeta {
            group: group.map(Arc::from),
            idempotency_key: "k".into(),
        };
        let e = codec.encode(&Exchange::new("b"), meta(None)).unwrap_err();
        assert!(e.to_string().contains("message group"), "{e}");
        let ex = Exchange::new("b").with_header(SUBJECT_HEADER, "own");
        let entry = codec.encode(&ex, meta(Some("g-1"))).unwrap();
        let request = codec.request_entry(0, &entry).unwrap();
        assert_eq!(request.subject(), Some("own"));
        assert_eq!(request.message_group_id(), Some("g-1"));
        assert!(request.message_attributes().is_none_or(|a| a.is_empty()));
        let plain = codec.encode(&Exchange::new("b"), meta(Some("g"))).unwrap();
        let request = codec.request_entry(0, &plain).unwrap();
        assert_eq!(request.subject(), Some("default"));
        assert!(is_fifo_topic("orders.fifo") && !is_fifo_topic("orders"));
    }
}
