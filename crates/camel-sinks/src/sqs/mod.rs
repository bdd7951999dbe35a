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
//! Credentials come from `access_key`/`secret_key` or, without them, from the
//! `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN` variables.
//!
//! ```
//! use camel_api::Component;
//! use camel_sinks::sqs::SqsComponent;
//! assert_eq!(SqsComponent::new().scheme(), "sqs");
//! ```

mod codec;
mod component;

pub use codec::{SqsCodec, SqsCredentials, MESSAGE_ID_HEADER, SEQUENCE_NUMBER_HEADER};
pub use component::{SqsComponent, SQS_PARAMETERS};
