//! Amazon SNS as a batching sink: `PublishBatch`, 10 entries and 256 KiB per request.
//!
//! Like the SQS sink: each caller gets its own entry's result (mapped back from
//! `Successful[]`/`Failed[]` by the entry's index), a refusal of the whole request is
//! bisected to find the entry that caused it, and a FIFO topic (name ending in `.fifo`)
//! keeps each message group's order, with the group from `group_key` or Camel's
//! `message_group_id_strategy`, and the entry's idempotency key as
//! `MessageDeduplicationId`.
//!
//! URI: `aws2-sns:TOPIC?region=eu-west-1&autoCreateTopic=true&subject=Orders`, where
//! TOPIC is a topic name (its ARN found once with `ListTopics`, or made with
//! `CreateTopic` when `auto_create_topic`) or an ARN. Credentials as for `sqs:`.
//!
//! ```
//! use camel_api::Component;
//! use camel_sinks::sns::SnsComponent;
//! assert_eq!(SnsComponent::new().scheme(), "aws2-sns");
//! ```

mod client;
mod codec;
mod component;

pub use codec::{SnsCodec, MESSAGE_ID_HEADER, SEQUENCE_NUMBER_HEADER, SUBJECT_HEADER};
pub use component::{SnsComponent, SNS_PARAMETERS};
