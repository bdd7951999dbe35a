//! `rabbitmq:EXCHANGE`: RabbitMQ through lapin, at least once.
//!
//! - In `from`, a consumer on `queue` (declared and bound to the exchange with
//!   `routing_key` unless `auto_declare=false`) with `prefetch_count` deliveries
//!   unacknowledged at most. Each delivery is acknowledged after the route succeeded;
//!   a failed one is run again `maximum_retry_attempts` times, `retry_delay` apart, then
//!   requeued or dead-lettered (`requeue`, `dead_letter_exchange`, which the consumer
//!   declares together with its `dead_letter_queue`). Only the message's own AMQP
//!   headers come in, never `Camel*` or `rabbitmq.*` ones.
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
mod delivery;
mod log_budget;
mod options;
mod producer;
mod settle;

pub use component::RabbitMqComponent;
pub use consumer::RabbitMqConsumer;
pub use delivery::{
    DELIVERY_ATTEMPT_HEADER, DELIVERY_TAG_HEADER, EXCHANGE_NAME_HEADER, REDELIVERED_HEADER,
    ROUTING_KEY_HEADER,
};
pub use options::{
    DeadLetter, ExchangeType, RabbitMqOptions, DEFAULT_ADDRESS, RABBITMQ_PARAMETERS,
};
pub use producer::RabbitMqProducer;
