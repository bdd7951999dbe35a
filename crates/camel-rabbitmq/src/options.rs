//! The endpoint options, read from the URI.

use std::time::Duration;

use camel_api::{CamelError, EndpointUri, Parameters};

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
    "dead_letter_exchange_type",
    "dead_letter_queue",
    "dead_letter_routing_key",
    "maximum_retry_attempts",
    "retry_delay",
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

/// Where a message the consumer gives up on is dead-lettered, and what the consumer
/// declares for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetter {
    /// The queue's `x-dead-letter-exchange`; declared with `exchange_type`.
    pub exchange: String,
    /// The dead-letter exchange's type (Camel's default: direct).
    pub exchange_type: ExchangeType,
    /// Declared and bound to the exchange, so a dead-lettered message is kept
    /// (default: the consumer's queue name + `.dlq`).
    pub queue: String,
    /// The queue's `x-dead-letter-routing-key` and the dead-letter queue's binding key.
    /// `None` (only for fanout and headers exchanges) keeps each message's own routing
    /// key and binds with an empty key. A direct or topic exchange without an explicit
    /// key uses the consumer's queue name, so that every dead letter matches the binding.
    pub routing_key: Option<String>,
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
    /// What the consumer does with a message once its retries are used up: requeue it
    /// (true) or reject it to the dead-letter exchange (false).
    pub requeue: bool,
    /// The dead-letter exchange and queue, when `dead_letter_exchange` is set.
    pub dead_letter: Option<DeadLetter>,
    /// How many times the consumer runs a failed message through the route again before
    /// it gives up on it (Camel's `maximumRetryAttempts`: retries after the first try).
    pub maximum_retry_attempts: u32,
    /// The wait before each retry, and before a requeue, so that a poison message comes
    /// back at most once per delay instead of in a tight loop.
    pub retry_delay: Duration,
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
        let exchange_type = exchange_type(p, "exchange_type")?;
        let prefetch_count = p.take::<u16>("prefetch_count")?.unwrap_or(250);
        if prefetch_count == 0 {
            return Err(invalid(
                "prefetch_count must be at least 1 (0 would let the broker push without limit)",
            ));
        }
        let auto_ack = p.take_bool("auto_ack")?.unwrap_or(false);
        let dead_letter = dead_letter(p, &queue, &raw)?;
        // Without a dead-letter exchange a rejected message would be dropped, so the
        // default is to requeue it; with one, to dead-letter it.
        let requeue = p.take_bool("requeue")?.unwrap_or(dead_letter.is_none());
        let maximum_retry_attempts = p.take::<u32>("maximum_retry_attempts")?.unwrap_or(5);
        let retry_delay = p
            .take_duration("retry_delay")?
            .unwrap_or(Duration::from_secs(1));
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
            dead_letter,
            maximum_retry_attempts,
            retry_delay,
            auto_declare,
            durable,
            mandatory,
            confirm_timeout,
            connect_timeout,
        })
    }
}

fn exchange_type(p: &mut Parameters, name: &str) -> Result<ExchangeType, CamelError> {
    Ok(
        match p.take_choice(name, &["direct", "fanout", "topic", "headers"])? {
            Some("fanout") => ExchangeType::Fanout,
            Some("topic") => ExchangeType::Topic,
            Some("headers") => ExchangeType::Headers,
            _ => ExchangeType::Direct,
        },
    )
}

/// Reads the `dead_letter_*` parameters of a consumer on `queue`.
fn dead_letter(
    p: &mut Parameters,
    queue: &str,
    raw: &str,
) -> Result<Option<DeadLetter>, CamelError> {
    let exchange = p.take_str("dead_letter_exchange");
    let given_type = p.contains("dead_letter_exchange_type");
    let exchange_type = exchange_type(p, "dead_letter_exchange_type")?;
    let dead_queue = p.take_str("dead_letter_queue");
    let routing_key = p.take_str("dead_letter_routing_key");
    let Some(exchange) = exchange else {
        if let Some(name) = [
            ("dead_letter_exchange_type", given_type),
            ("dead_letter_queue", dead_queue.is_some()),
            ("dead_letter_routing_key", routing_key.is_some()),
        ]
        .iter()
        .find_map(|(name, set)| set.then_some(*name))
        {
            return Err(CamelError::invalid_uri(
                raw,
                format!("{name} needs dead_letter_exchange (the exchange it belongs to)"),
            ));
        }
        return Ok(None);
    };
    if exchange.trim().is_empty() {
        return Err(CamelError::invalid_uri(
            raw,
            "dead_letter_exchange must name an exchange",
        ));
    }
    let routing_key = match (routing_key, exchange_type) {
        (Some(key), _) => Some(key),
        (None, ExchangeType::Fanout | ExchangeType::Headers) => None,
        (None, ExchangeType::Direct | ExchangeType::Topic) => Some(queue.to_string()),
    };
    Ok(Some(DeadLetter {
        exchange,
        exchange_type,
        queue: dead_queue.unwrap_or_else(|| format!("{queue}.dlq")),
        routing_key,
    }))
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
    fn a_dead_letter_exchange_gets_a_queue_and_a_key_that_routes_to_it() {
        let o = options("rabbitmq:orders?queue=billing&deadLetterExchange=dlx").unwrap();
        let dead = o.dead_letter.unwrap();
        assert_eq!(dead.exchange_type, ExchangeType::Direct, "Camel's default");
        assert_eq!(dead.queue, "billing.dlq");
        assert_eq!(dead.routing_key.as_deref(), Some("billing"));
        let o = options(
            "rabbitmq:orders?dead_letter_exchange=dlx&dead_letter_exchange_type=fanout&deadLetterQueue=parked",
        )
        .unwrap();
        let dead = o.dead_letter.unwrap();
        assert_eq!((dead.queue.as_str(), dead.routing_key), ("parked", None));
        let o = options("rabbitmq:orders?dead_letter_exchange=dlx&dead_letter_routing_key=failed")
            .unwrap();
        assert_eq!(
            o.dead_letter.unwrap().routing_key.as_deref(),
            Some("failed")
        );
    }

    #[test]
    fn retries_default_to_five_a_second_apart() {
        let o = options("rabbitmq:orders").unwrap();
        assert_eq!(o.maximum_retry_attempts, 5);
        assert_eq!(o.retry_delay, Duration::from_secs(1));
        let o = options("rabbitmq:orders?maximumRetryAttempts=0&retryDelay=250").unwrap();
        assert_eq!(o.maximum_retry_attempts, 0);
        assert_eq!(o.retry_delay, Duration::from_millis(250));
    }

    #[test]
    fn bad_options_are_refused_with_the_reason() {
        let e = options("rabbitmq:orders?dead_letter_queue=parked").unwrap_err();
        assert!(e.to_string().contains("needs dead_letter_exchange"), "{e}");
        let e = options("rabbitmq:orders?dead_letter_exchange=").unwrap_err();
        assert!(e.to_string().contains("must name an exchange"), "{e}");
        let e = options("rabbitmq:orders?dead_letter_exchange=d&dead_letter_exchange_type=x")
            .unwrap_err();
        assert!(e.to_string().contains("direct, fanout"), "{e}");
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
