//! The endpoint options, read from the URI.

use std::time::Duration;

use camel_api::{CamelError, EndpointUri};

/// Parameters `rabbitmq:` takes (snake_case; Camel's camelCase spelling is accepted).
pub const RABBITMQ_PARAMETERS: &[&str] = &[
    "addresses",
    "queue",
    "queues",
    "routing_key",
    "exchange_type",
    "prefetch_count",
    "auto_ack",
    "requeue",
    "dead_letter_exchange",
    "dead_letter_routing_key",
    "auto_declare",
    "durable",
    "mandatory",
    "publisher_acknowledgements_timeout",
    "connect_timeout",
];

/// Default broker address (the local RabbitMQ, default virtual host).
pub const DEFAULT_ADDRESS: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";

/// The AMQP exchange types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExchangeType {
    /// Routing key equals binding key.
    Direct,
    /// Every bound queue.
    Fanout,
    /// Binding keys with `*` and `#` wildcards.
    Topic,
    /// Matching on message headers.
    Headers,
}

/// A `rabbitmq:` endpoint's options.
#[derive(Debug, Clone)]
pub struct RabbitMqOptions {
    /// The URI as written (for messages).
    pub uri: String,
    /// The exchange (the URI path); empty is the default exchange.
    pub exchange: String,
    /// The broker (`amqp://user:pass@host:port/vhost`).
    pub addresses: String,
    /// The queue a consumer reads (default: the exchange name).
    pub queue: String,
    /// Binding key for the consumer's queue; the routing key a producer publishes with.
    pub routing_key: String,
    /// The exchange's type when it is declared.
    pub exchange_type: ExchangeType,
    /// Most unacknowledged deliveries the broker hands this consumer.
    pub prefetch_count: u16,
    /// Acknowledge on delivery (at most once) instead of after the route.
    pub auto_ack: bool,
    /// Requeue a failed delivery (true) or reject it to the dead-letter exchange (false).
    pub requeue: bool,
    /// Declared as the queue's `x-dead-letter-exchange`.
    pub dead_letter_exchange: Option<String>,
    /// Declared as the queue's `x-dead-letter-routing-key`.
    pub dead_letter_routing_key: Option<String>,
    /// Declare the exchange, the queue and the binding on start.
    pub auto_declare: bool,
    /// Declared exchanges and queues survive a broker restart.
    pub durable: bool,
    /// Publish as mandatory: an unroutable message fails the exchange.
    pub mandatory: bool,
    /// How long a producer waits for the broker's confirm.
    pub confirm_timeout: Duration,
    /// How long connecting may take.
    pub connect_timeout: Duration,
}

impl RabbitMqOptions {
    /// Reads the options from a `rabbitmq:` URI, rejecting unknown parameters.
    pub fn from_uri(mut uri: EndpointUri) -> Result<Self, CamelError> {
        let raw = uri.as_str().to_string();
        let exchange = uri.path().trim().to_string();
        let p = &mut uri.parameters;
        let invalid = |why: &str| CamelError::invalid_uri(raw.clone(), why);
        let addresses = p
            .take_str("addresses")
            .unwrap_or_else(|| DEFAULT_ADDRESS.to_string());
        if !(addresses.starts_with("amqp://") || addresses.starts_with("amqps://")) {
            return Err(invalid(
                "addresses must be an AMQP URL, as in amqp://guest:guest@127.0.0.1:5672/%2f",
            ));
        }
        let queue = p
            .take_str("queue")
            .or_else(|| p.take_str("queues"))
            .unwrap_or_else(|| exchange.clone());
        let routing_key = p.take_str("routing_key").unwrap_or_default();
        let exchange_type =
            match p.take_choice("exchange_type", &["direct", "fanout", "topic", "headers"])? {
                Some("fanout") => ExchangeType::Fanout,
                Some("topic") => ExchangeType::Topic,
                Some("headers") => ExchangeType::Headers,
                _ => ExchangeType::Direct,
            };
        let prefetch_count = p.take::<u16>("prefetch_count")?.unwrap_or(250);
        if prefetch_count == 0 {
            return Err(invalid(
                "prefetch_count must be at least 1 (0 would let the broker push without limit)",
            ));
        }
        let auto_ack = p.take_bool("auto_ack")?.unwrap_or(false);
        let dead_letter_exchange = p.take_str("dead_letter_exchange");
        let dead_letter_routing_key = p.take_str("dead_letter_routing_key");
        // Without a dead-letter exchange a rejected message would be dropped, so the
        // default is to requeue it; with one, to dead-letter it.
        let requeue = p
            .take_bool("requeue")?
            .unwrap_or(dead_letter_exchange.is_none());
        let auto_declare = p.take_bool("auto_declare")?.unwrap_or(true);
        let durable = p.take_bool("durable")?.unwrap_or(true);
        let mandatory = p.take_bool("mandatory")?.unwrap_or(false);
        let confirm_timeout = p
            .take_duration("publisher_acknowledgements_timeout")?
            .unwrap_or(Duration::from_secs(20));
        let connect_timeout = p
            .take_duration("connect_timeout")?
            .unwrap_or(Duration::from_secs(5));
        if queue.is_empty() && exchange.is_empty() {
            return Err(invalid(
                "the URI needs an exchange (rabbitmq:orders) or a queue (rabbitmq:?queue=orders)",
            ));
        }
        uri.parameters.finish(RABBITMQ_PARAMETERS)?;
        Ok(RabbitMqOptions {
            uri: raw,
            exchange,
            addresses,
            queue,
            routing_key,
            exchange_type,
            prefetch_count,
            auto_ack,
            requeue,
            dead_letter_exchange,
            dead_letter_routing_key,
            auto_declare,
            durable,
            mandatory,
            confirm_timeout,
            connect_timeout,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(uri: &str) -> Result<RabbitMqOptions, CamelError> {
        RabbitMqOptions::from_uri(EndpointUri::parse(uri)?)
    }

    #[test]
    fn defaults_ack_after_the_route_and_requeue_without_a_dead_letter_exchange() {
        let o = options("rabbitmq:orders").unwrap();
        assert_eq!(o.queue, "orders");
        assert!(!o.auto_ack);
        assert!(o.requeue);
        assert_eq!(o.prefetch_count, 250);
        let o = options("rabbitmq:orders?deadLetterExchange=dlx&queue=q&prefetchCount=5").unwrap();
        assert!(!o.requeue);
        assert_eq!(o.queue, "q");
        assert_eq!(o.prefetch_count, 5);
    }

    #[test]
    fn bad_options_are_refused_with_the_reason() {
        let e = options("rabbitmq:orders?prefetch_count=0").unwrap_err();
        assert!(e.to_string().contains("prefetch_count"), "{e}");
        let e = options("rabbitmq:orders?exchange_type=round").unwrap_err();
        assert!(e.to_string().contains("direct, fanout"), "{e}");
        let e = options("rabbitmq:orders?routingkey=x").unwrap_err();
        assert!(e.to_string().contains("unknown parameter"), "{e}");
        let e = options("rabbitmq:orders?addresses=http://x").unwrap_err();
        assert!(e.to_string().contains("AMQP URL"), "{e}");
    }
}
