//! Google Cloud Pub/Sub as a batching sink: the REST `publish` call, up to 1000
//! messages and 10 MB per request.
//!
//! All messages of one request share one ordering key (the group), so for this codec
//! the group is part of what forms a batch. The 10 MB limit is enforced here, on the
//! encoded JSON, because the emulator never answers a larger request. After a failed
//! publish on an ordering key, later messages of that key fail fast — as Google's own
//! clients do — until the key is resumed: by the retry of the message that failed
//! (same idempotency key), or by [`resume_ordering_key`] / [`PubSubComponent::resume`].
//! The pause belongs to the topic (kept in the batcher registry), not to one route.
//!
//! URI: `pubsub:projects/P/topics/T?emulator_host=127.0.0.1:8085&group_key=${header.k}`.
//! In `from`, `pubsub:projects/P/subscriptions/S` is an at-least-once subscription
//! consumer ([`PubSubConsumer`]: gRPC streaming pull, or REST pull with
//! `synchronous_pull=true`; acknowledged after the route succeeded).
//! `google-pubsub:PROJECT:DESTINATION` (Camel's scheme, [`GooglePubsubComponent`]) is a
//! topic in `to` and a subscription in `from`.
//! Without `emulator_host` (or `PUBSUB_EMULATOR_HOST`) it calls
//! `https://pubsub.googleapis.com` with a bearer token: from `service_account_key` (a
//! credentials file) when given, else from the environment variable named by `token_env`
//! (default `GOOGLE_OAUTH_ACCESS_TOKEN`) when it is set, else from Google's Application
//! Default Credentials (`GOOGLE_APPLICATION_CREDENTIALS`, gcloud's well-known file, the
//! metadata server), refreshed before they expire.
//!
//! ```
//! use camel_api::Component;
//! use camel_sinks::pubsub::PubSubComponent;
//! assert_eq!(PubSubComponent::new().scheme(), "pubsub");
//! ```

mod codec;
mod component;
mod connection;
mod consumer;
mod credentials;
mod options;
mod ordering;
mod pause;
mod pull;
mod stream;
mod token;

pub use codec::{PubSubCodec, MESSAGE_ID_HEADER};
pub use component::{GooglePubsubComponent, PubSubComponent, PUBSUB_PARAMETERS};
pub use connection::CONNECTION_PARAMETERS;
pub use consumer::{
    PubSubConsumer, ACK_ID_HEADER, ATTRIBUTES_HEADER, DELIVERY_ATTEMPT_HEADER, ORDERING_KEY_HEADER,
    PUBLISH_TIME_HEADER, RESERVED_ATTRIBUTE_PREFIXES,
};
pub use options::{AckMode, PubSubConsumerOptions, PUBSUB_CONSUMER_PARAMETERS};
pub use pause::{paused_ordering_keys, resume_ordering_key, PausedKeys};
#[doc(hidden)]
pub use stream::wire;
