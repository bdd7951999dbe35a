//! `spring-redis:HOST:PORT` (also `redis:`): Redis through the `redis` crate.
//!
//! - In `to`, a producer running one command per exchange (SET, GET, DEL, INCR, HSET,
//!   HGET, LPUSH, RPUSH, PUBLISH, XADD), chosen by Camel's `CamelRedis.Command` header or
//!   the `command` option, with Camel's `CamelRedis.Key`/`Field`/`Value`/`Channel`/
//!   `Message` headers; the reply becomes the body.
//! - In `from`, either a pub/sub consumer (`channels`, SUBSCRIBE or PSUBSCRIBE: at most
//!   once, as Redis pub/sub is) or a Redis Streams consumer group (`stream`, `group`: at
//!   least once, XACK after the route, XAUTOCLAIM of entries a dead consumer left
//!   pending). Stream fields come in as headers, never `Camel*` ones.
//!
//! - With the `repositories` feature, Redis repositories for `idempotent_consumer` and
//!   `aggregate` ([`repositories`]).
//!
//! Options follow Camel's `spring-redis` names in snake_case (camelCase is accepted);
//! the stream options are ours. The guide is `docs/components.md`; ADR 0139 says why.
//!
//! ```
//! use camel_api::Component;
//! assert_eq!(camel_redis::RedisComponent::spring_redis().scheme(), "spring-redis");
//! ```

mod component;
mod connection;
mod consumer;
mod message;
mod options;
mod producer;
mod pubsub;
#[cfg(feature = "repositories")]
pub mod repositories;
mod streams;

pub use component::RedisComponent;
pub use consumer::RedisConsumer;
pub use message::{
    BODY_FIELD, CHANNEL_HEADER, CLAIMED_HEADER, COMMAND_HEADER, FIELD_HEADER, KEY_HEADER,
    MESSAGE_HEADER, PATTERN_HEADER, STREAM_HEADER, STREAM_ID_HEADER, VALUE_HEADER,
};
pub use options::{ConsumerMode, Password, RedisOptions, PRODUCER_COMMANDS, REDIS_PARAMETERS};
pub use producer::RedisProducer;
