//! Amazon SQS as a batching sink: `SendMessageBatch`, 10 entries and 1 MiB per request.
//!
//! The answer of a batch is HTTP 200 even when entries failed: each `Failed[]` item is
//! mapped back to its own caller by the entry id (its index in the request). A refusal
//! of the whole request (a validation error) is bisected to find the entry that caused
//! it. A FIFO queue (name ending in `.fifo`) needs a group (`group_key`) and gets the
//! entry's idempotency key as `MessageDeduplicationId`.
//!
//! URI: `sqs:QUEUE?region=eu-west-1&endpoint=http://127.0.0.1:5000&group_key=${header.k}`,
//! where QUEUE is a queue name (resolved once with `GetQueueUrl`) or a queue URL.
//! Credentials come from `access_key`/`secret_key` or, without them, from the AWS
//! default chain (environment, profile, SSO, web identity, container and instance
//! metadata), resolved at the first request. In `from`, the endpoint is a long-polling,
//! at-least-once consumer ([`SqsConsumer`]). `aws2-sqs:` (Camel's scheme) is the same
//! component ([`Aws2SqsComponent`]).
//!
//! ```
//! use camel_api::Component;
//! use camel_sinks::sqs::SqsComponent;
//! assert_eq!(SqsComponent::new().scheme(), "sqs");
//! ```

mod client;
mod codec;
mod component;
mod consumer;

pub use codec::{SqsCodec, SqsCredentials, MESSAGE_ID_HEADER, SEQUENCE_NUMBER_HEADER};
pub use component::{Aws2SqsComponent, SqsComponent, SQS_PARAMETERS};
pub use consumer::{
    SqsConsumer, SqsConsumerOptions, GROUP_ID_HEADER, RECEIPT_HANDLE_HEADER, RECEIVE_COUNT_HEADER,
    RESERVED_ATTRIBUTE_PREFIXES, SQS_CONSUMER_PARAMETERS,
};
