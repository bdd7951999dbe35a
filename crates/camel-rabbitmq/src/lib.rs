//! `rabbitmq:EXCHANGE`: RabbitMQ through lapin, at least once.
//!
//! - In `from`, a consumer on `queue` (declared and bound to the exchange with
//!   `routing_key` unless `auto_declare=false`) with `prefetch_count` deliveries
//!   unacknowledged at most. Each delivery is acknowledged after the route succeeded;
//!   a failed exchange is rejected, requeued or dead-lettered (`requeue`,
//!   `dead_letter_exchange`).
//! - In `to`, a producer with publisher confirms: the exchange completes when the broker
//!   confirmed the message, and fails when it refused it (or, with `mandatory=true`,
//!   returned it unroutable).
//!
//! Option names follow Camel's `rabbitmq`/`spring-rabbitmq` components in snake_case
//! (camelCase is accepted). The guide is `docs/brokers.md` at the repository root.
//!
//! ```
//! use camel_api::Component;
//! let component = camel_rabbitmq::RabbitMqComponent::new();
//! assert_eq!(component.scheme(), "rabbitmq");
//! ```

mod component;
mod connection;
mod consumer;
mod options;
mod producer;

pub use component::RabbitMqComponent;
pub use consumer::{
    RabbitMqConsumer, DELIVERY_TAG_HEADER, EXCHANGE_NAME_HEADER, REDELIVERED_HEADER,
    ROUTING_KEY_HEADER,
};
pub use options::{ExchangeType, RabbitMqOptions, DEFAULT_ADDRESS, RABBITMQ_PARAMETERS};
pub use producer::RabbitMqProducer;
