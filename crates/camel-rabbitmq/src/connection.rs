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

/// Declares the exchange (unless it is the default one).
pub(crate) async fn declare_exchange(
    channel: &Channel,
    o: &RabbitMqOptions,
) -> Result<(), CamelError> {
    if o.exchange.is_empty() {
        return Ok(());
    }
    let kind = match o.exchange_type {
        ExchangeType::Direct => ExchangeKind::Direct,
        ExchangeType::Fanout => ExchangeKind::Fanout,
        ExchangeType::Topic => ExchangeKind::Topic,
        ExchangeType::Headers => ExchangeKind::Headers,
    };
    channel
        .exchange_declare(
            &o.exchange,
            kind,
            ExchangeDeclareOptions {
                durable: o.durable,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await
        .map_err(|e| CamelError::external(format!("declaring exchange `{}`", o.exchange), e))
}

/// Declares the exchange, the queue (with its dead-letter arguments) and the binding.
pub(crate) async fn declare_queue(
    channel: &Channel,
    o: &RabbitMqOptions,
) -> Result<(), CamelError> {
    declare_exchange(channel, o).await?;
    let mut arguments = FieldTable::default();
    if let Some(dlx) = &o.dead_letter_exchange {
        arguments.insert(
            "x-dead-letter-exchange".into(),
            AMQPValue::LongString(dlx.as_str().into()),
        );
    }
    if let Some(key) = &o.dead_letter_routing_key {
        arguments.insert(
            "x-dead-letter-routing-key".into(),
            AMQPValue::LongString(key.as_str().into()),
        );
    }
    channel
        .queue_declare(
            &o.queue,
            QueueDeclareOptions {
                durable: o.durable,
                ..Default::default()
            },
            arguments,
        )
        .await
        .map_err(|e| CamelError::external(format!("declaring queue `{}`", o.queue), e))?;
    if !o.exchange.is_empty() {
        channel
            .queue_bind(
                &o.queue,
                &o.exchange,
                &o.routing_key,
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
            .map_err(|e| {
                CamelError::external(
                    format!("binding queue `{}` to exchange `{}`", o.queue, o.exchange),
                    e,
                )
            })?;
    }
    Ok(())
}
