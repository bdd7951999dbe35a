//! Connecting and declaring.

use lapin::options::{ExchangeDeclareOptions, QueueBindOptions, QueueDeclareOptions};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{Channel, Connection, ConnectionProperties, ExchangeKind};

use camel_api::CamelError;

use crate::options::{ExchangeType, RabbitMqOptions};

/// Opens a connection and a channel.
pub(crate) async fn open(o: &RabbitMqOptions) -> Result<(Connection, Channel), CamelError> {
    let properties = ConnectionProperties::default()
        .with_executor(tokio_executor_trait::Tokio::current())
        .with_reactor(tokio_reactor_trait::Tokio);
    let where_ = camel_api::redact_url(&o.addresses);
    let connection = tokio::time::timeout(
        o.connect_timeout,
        Connection::connect(&o.addresses, properties),
    )
    .await
    .map_err(|_| {
        CamelError::processor(format!(
            "connecting to RabbitMQ at {where_} took longer than {:?}",
            o.connect_timeout
        ))
    })?
    .map_err(|e| CamelError::external(format!("connecting to RabbitMQ at {where_}"), e))?;
    let channel = connection
        .create_channel()
        .await
        .map_err(|e| CamelError::external("opening a RabbitMQ channel", e))?;
    Ok((connection, channel))
}

/// Declares the endpoint's exchange (unless it is the default one).
pub(crate) async fn declare_exchange(
    channel: &Channel,
    o: &RabbitMqOptions,
) -> Result<(), CamelError> {
    if o.exchange.is_empty() {
        return Ok(());
    }
    exchange(channel, &o.exchange, o.exchange_type, o.durable).await
}

async fn exchange(
    channel: &Channel,
    name: &str,
    kind: ExchangeType,
    durable: bool,
) -> Result<(), CamelError> {
    let kind = match kind {
        ExchangeType::Direct => ExchangeKind::Direct,
        ExchangeType::Fanout => ExchangeKind::Fanout,
        ExchangeType::Topic => ExchangeKind::Topic,
        ExchangeType::Headers => ExchangeKind::Headers,
    };
    channel
        .exchange_declare(
            name,
            kind,
            ExchangeDeclareOptions {
                durable,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await
        .map_err(|e| CamelError::external(format!("declaring exchange `{name}`"), e))
}

async fn queue(
    channel: &Channel,
    name: &str,
    durable: bool,
    arguments: FieldTable,
) -> Result<(), CamelError> {
    channel
        .queue_declare(
            name,
            QueueDeclareOptions {
                durable,
                ..Default::default()
            },
            arguments,
        )
        .await
        .map(|_| ())
        .map_err(|e| CamelError::external(format!("declaring queue `{name}`"), e))
}

async fn bind(channel: &Channel, name: &str, to: &str, key: &str) -> Result<(), CamelError> {
    channel
        .queue_bind(
            name,
            to,
            key,
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await
        .map_err(|e| CamelError::external(format!("binding queue `{name}` to exchange `{to}`"), e))
}

/// Declares the dead-letter exchange, its queue and their binding (so a dead-lettered
/// message is kept, not dropped as unroutable), then the endpoint's exchange, its queue
/// (with the dead-letter arguments) and their binding.
pub(crate) async fn declare_queue(
    channel: &Channel,
    o: &RabbitMqOptions,
) -> Result<(), CamelError> {
    let mut arguments = FieldTable::default();
    if let Some(dead) = &o.dead_letter {
        exchange(channel, &dead.exchange, dead.exchange_type, o.durable).await?;
        queue(channel, &dead.queue, o.durable, FieldTable::default()).await?;
        let key = dead.routing_key.as_deref().unwrap_or_default();
        bind(channel, &dead.queue, &dead.exchange, key).await?;
        arguments.insert(
            "x-dead-letter-exchange".into(),
            AMQPValue::LongString(dead.exchange.as_str().into()),
        );
        if let Some(key) = &dead.routing_key {
            arguments.insert(
                "x-dead-letter-routing-key".into(),
                AMQPValue::LongString(key.as_str().into()),
            );
        }
    }
    declare_exchange(channel, o).await?;
    queue(channel, &o.queue, o.durable, arguments).await?;
    if !o.exchange.is_empty() {
        bind(channel, &o.queue, &o.exchange, &o.routing_key).await?;
    }
    Ok(())
}
