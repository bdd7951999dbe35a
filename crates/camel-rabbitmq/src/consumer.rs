//! The consumer: manual acknowledgements after the route, reject/requeue on failure.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use camel_api::{Body, CamelError, Consumer, ConsumerContext, Exchange};
use futures::StreamExt;
use lapin::message::Delivery;
use lapin::options::{
    BasicAckOptions, BasicCancelOptions, BasicConsumeOptions, BasicQosOptions, BasicRejectOptions,
};
use lapin::types::{AMQPValue, FieldTable};
use tokio::task::JoinSet;

use crate::connection::{declare_queue, open};
use crate::options::RabbitMqOptions;

/// Header: the routing key the message was published with (Camel's name).
pub const ROUTING_KEY_HEADER: &str = "CamelRabbitmqRoutingKey";
/// Header: the exchange the message was published to (Camel's name).
pub const EXCHANGE_NAME_HEADER: &str = "CamelRabbitmqExchangeName";
/// Header: the delivery tag on this consumer's channel (Camel's name).
pub const DELIVERY_TAG_HEADER: &str = "CamelRabbitmqDeliveryTag";
/// Header: true when the broker delivered the message before (Camel's name).
pub const REDELIVERED_HEADER: &str = "CamelRabbitmqRedeliveryTag";

/// Longest wait between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// A consumer on one queue.
#[derive(Debug)]
pub struct RabbitMqConsumer {
    options: Arc<RabbitMqOptions>,
}

impl RabbitMqConsumer {
    /// A consumer with these options.
    pub fn new(options: RabbitMqOptions) -> Self {
        RabbitMqConsumer {
            options: Arc::new(options),
        }
    }

    /// One connection's life: consume until cancelled (`Ok(true)`), the connection
    /// drops (`Ok(false)`), or setting up fails (`Err`).
    async fn session(&self, ctx: &ConsumerContext) -> Result<bool, CamelError> {
        let o = &self.options;
        let (connection, channel) = open(o).await?;
        if o.auto_declare {
            declare_queue(&channel, o).await?;
        }
        channel
            .basic_qos(o.prefetch_count, BasicQosOptions::default())
            .await
            .map_err(|e| CamelError::external("setting the prefetch count", e))?;
        let tag = format!("camel-{}-{}", ctx.route_id(), std::process::id());
        let mut deliveries = channel
            .basic_consume(
                &o.queue,
                &tag,
                BasicConsumeOptions {
                    no_ack: o.auto_ack,
                    ..Default::default()
                },
                FieldTable::default(),
            )
            .await
            .map_err(|e| CamelError::external(format!("consuming queue `{}`", o.queue), e))?;
        ctx.health().set_healthy();
        // The broker never has more than `prefetch_count` deliveries unacknowledged on
        // this channel, so the tasks below are bounded by it.
        let mut running = JoinSet::new();
        let cancelled = loop {
            let next = tokio::select! {
                _ = ctx.cancelled() => break true,
                d = deliveries.next() => d,
            };
            match next {
                Some(Ok(delivery)) => {
                    let (ctx, o) = (ctx.clone(), o.clone());
                    running.spawn(async move { handle(&ctx, &o, delivery).await });
                }
                Some(Err(e)) => {
                    tracing::warn!(queue = %o.queue, error = %e, "RabbitMQ consumer failed");
                    ctx.health()
                        .set_failing(format!("consuming `{}`: {e}", o.queue));
                    break false;
                }
                None => break false,
            }
            while running.try_join_next().is_some() {}
        };
        if cancelled {
            let _ = channel
                .basic_cancel(&tag, BasicCancelOptions::default())
                .await;
        }
        // Exchanges already running finish and are settled; deliveries the broker sent
        // but nobody started are requeued when the channel closes.
        while running.join_next().await.is_some() {}
        let _ = channel.close(200, "bye").await;
        let _ = connection.close(200, "bye").await;
        Ok(cancelled)
    }
}

#[async_trait]
impl Consumer for RabbitMqConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let mut backoff = Duration::from_millis(200);
        loop {
            match self.session(&ctx).await {
                Ok(true) => return Ok(()),
                Ok(false) => backoff = Duration::from_millis(200),
                Err(e) => {
                    tracing::warn!(uri = %camel_api::redact_url(&self.options.uri), error = %e,
                        retry_in = ?backoff, "RabbitMQ consumer cannot start; retrying");
                    ctx.health().set_failing(&e);
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
            tokio::select! {
                _ = ctx.cancelled() => return Ok(()),
                _ = tokio::time::sleep(backoff) => {}
            }
        }
    }
}

fn to_exchange(delivery: &Delivery) -> Exchange {
    let body = match std::str::from_utf8(&delivery.data) {
        Ok(text) => Body::from(text),
        Err(_) => Body::Bytes(delivery.data.clone().into()),
    };
    let mut exchange = Exchange::new(body)
        .with_header(ROUTING_KEY_HEADER, delivery.routing_key.as_str())
        .with_header(EXCHANGE_NAME_HEADER, delivery.exchange.as_str())
        .with_header(DELIVERY_TAG_HEADER, delivery.delivery_tag)
        .with_header(REDELIVERED_HEADER, delivery.redelivered);
    if let Some(headers) = delivery.properties.headers() {
        for (name, value) in headers.inner() {
            let text = match value {
                AMQPValue::LongString(s) => s.to_string(),
                AMQPValue::ShortString(s) => s.to_string(),
                AMQPValue::Boolean(b) => b.to_string(),
                AMQPValue::LongLongInt(i) => i.to_string(),
                AMQPValue::LongInt(i) => i.to_string(),
                AMQPValue::ShortInt(i) => i.to_string(),
                _ => continue,
            };
            exchange.message.headers.insert(name.as_str(), text);
        }
    }
    exchange
}

/// Runs one delivery through the route and settles it with the broker.
async fn handle(ctx: &ConsumerContext, o: &RabbitMqOptions, delivery: Delivery) {
    let result = ctx.send(to_exchange(&delivery)).await;
    if o.auto_ack {
        return;
    }
    let settled = match result {
        Ok(_) => delivery.ack(BasicAckOptions::default()).await,
        // Stopping: give it back for another consumer.
        Err(CamelError::Stopping(_)) => delivery.reject(BasicRejectOptions { requeue: true }).await,
        Err(error) => {
            tracing::debug!(queue = %o.queue, %error, requeue = o.requeue,
                "route failed; rejecting the delivery");
            delivery
                .reject(BasicRejectOptions { requeue: o.requeue })
                .await
        }
    };
    if let Err(e) = settled {
        tracing::warn!(queue = %o.queue, error = %e,
            "settling a RabbitMQ delivery failed; the broker redelivers it");
    }
}
