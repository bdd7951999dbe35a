//! The producer: publisher confirms, one result per exchange.

use std::sync::Arc;

use camel_api::inbound::admits_transport_header;
use camel_api::{BoxProcessor, CamelError, Exchange};
use lapin::options::{BasicPublishOptions, ConfirmSelectOptions};
use lapin::publisher_confirm::Confirmation;
use lapin::types::{AMQPValue, FieldTable};
use lapin::{BasicProperties, Channel, Connection};
use tokio::sync::Mutex;

use crate::connection::{declare_exchange, open};
use crate::delivery::{RESERVED_PREFIXES, ROUTING_KEY_HEADER};
use crate::options::RabbitMqOptions;

/// Publishes each exchange and waits for the broker's confirm.
#[derive(Debug)]
pub struct RabbitMqProducer {
    options: Arc<RabbitMqOptions>,
    /// The connection and its confirm-mode channel, opened on first use and again after
    /// it broke.
    link: Mutex<Option<(Connection, Channel)>>,
}

impl RabbitMqProducer {
    /// A producer with these options.
    pub fn new(options: RabbitMqOptions) -> Self {
        RabbitMqProducer {
            options: Arc::new(options),
            link: Mutex::new(None),
        }
    }

    /// The route step.
    pub fn processor(self: Arc<Self>) -> BoxProcessor {
        BoxProcessor::from_fn(move |exchange| {
            let this = self.clone();
            async move { this.publish(exchange).await }
        })
        .named("rabbitmq")
    }

    async fn channel(&self) -> Result<Channel, CamelError> {
        let mut link = self.link.lock().await;
        if let Some((_, channel)) = link.as_ref() {
            if channel.status().connected() {
                return Ok(channel.clone());
            }
        }
        let o = &self.options;
        let (connection, channel) = open(o).await?;
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .map_err(|e| CamelError::external("turning on publisher confirms", e))?;
        if o.auto_declare {
            declare_exchange(&channel, o).await?;
        }
        *link = Some((connection, channel.clone()));
        Ok(channel)
    }

    async fn publish(&self, exchange: Exchange) -> Result<Exchange, CamelError> {
        let o = &self.options;
        let channel = self.channel().await?;
        let routing_key = exchange
            .header(ROUTING_KEY_HEADER)
            .map(|v| v.to_string())
            .unwrap_or_else(|| o.routing_key.clone());
        let mut headers = FieldTable::default();
        // The route's control headers (`CamelSqlQuery`, …) and ours stay in the process.
        for (name, value) in exchange.message.headers.iter() {
            if admits_transport_header(name, RESERVED_PREFIXES) {
                headers.insert(name.into(), AMQPValue::LongString(value.to_string().into()));
            }
        }
        let properties = BasicProperties::default()
            .with_headers(headers)
            .with_delivery_mode(if o.durable { 2 } else { 1 });
        let body = exchange.message.body.to_bytes();
        let confirm = channel
            .basic_publish(
                &o.exchange,
                &routing_key,
                BasicPublishOptions {
                    mandatory: o.mandatory,
                    ..Default::default()
                },
                &body,
                properties,
            )
            .await
            .map_err(|e| CamelError::external(format!("publishing to `{}`", o.exchange), e))?;
        let confirmation = tokio::time::timeout(o.confirm_timeout, confirm)
            .await
            .map_err(|_| {
                CamelError::processor(format!(
                    "RabbitMQ did not confirm the publish to `{}` within {:?}",
                    o.exchange, o.confirm_timeout
                ))
            })?
            .map_err(|e| CamelError::external(format!("publishing to `{}`", o.exchange), e))?;
        match confirmation {
            Confirmation::Ack(None) | Confirmation::NotRequested => Ok(exchange),
            Confirmation::Ack(Some(returned)) => Err(CamelError::processor(format!(
                "RabbitMQ returned the message published to `{}` with routing key `{routing_key}`: {} (no queue is bound for it)",
                o.exchange, returned.reply_text
            ))),
            Confirmation::Nack(_) => Err(CamelError::processor(format!(
                "RabbitMQ refused (nack) the message published to `{}`",
                o.exchange
            ))),
        }
    }
}
