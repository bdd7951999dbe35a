//! The consumer: one connection at a time, each delivery in its own task (bounded by
//! `prefetch_count`), settled by [`crate::settle`].

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use camel_api::{CamelError, Consumer, ConsumerContext};
use futures::StreamExt;
use lapin::options::{BasicCancelOptions, BasicConsumeOptions, BasicQosOptions};
use lapin::types::FieldTable;
use tokio::task::JoinSet;

use crate::connection::{declare_queue, open};
use crate::log_budget::LogBudget;
use crate::options::RabbitMqOptions;
use crate::settle::handle;

/// Longest wait between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// A consumer on one queue.
#[derive(Debug)]
pub struct RabbitMqConsumer {
    options: Arc<RabbitMqOptions>,
    /// Shared by the delivery tasks, so that failures of many messages together stay
    /// within one budget of warnings.
    warnings: Arc<LogBudget>,
}

impl RabbitMqConsumer {
    /// A consumer with these options.
    pub fn new(options: RabbitMqOptions) -> Self {
        RabbitMqConsumer {
            options: Arc::new(options),
            warnings: Arc::new(LogBudget::new()),
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
                    let (ctx, o, budget) = (ctx.clone(), o.clone(), self.warnings.clone());
                    running.spawn(async move { handle(&ctx, &o, &budget, delivery).await });
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
