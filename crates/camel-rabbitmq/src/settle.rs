//! One delivery's life: run it through the route, retry it after `retry_delay` up to
//! `maximum_retry_attempts` times, then settle it with the broker.
//!
//! The retries happen here, while the consumer holds the delivery unacknowledged: a
//! classic queue does not count deliveries, so this is the one place that can count
//! them exactly, and no other consumer takes the message meanwhile. When the retries
//! are used up the delivery is rejected with `requeue`: `false` dead-letters it (to the
//! declared dead-letter exchange and queue), `true` puts it back in the queue after one
//! more `retry_delay`. Either way a poison message reaches the route at most once per
//! `retry_delay`, and every failure is logged at WARN within the consumer's
//! [`LogBudget`].

use camel_api::{CamelError, ConsumerContext};
use lapin::message::Delivery;
use lapin::options::{BasicAckOptions, BasicRejectOptions};

use crate::delivery::to_exchange;
use crate::log_budget::LogBudget;
use crate::options::RabbitMqOptions;

/// Runs one delivery through the route and settles it with the broker.
pub(crate) async fn handle(
    ctx: &ConsumerContext,
    o: &RabbitMqOptions,
    budget: &LogBudget,
    delivery: Delivery,
) {
    let max_attempts = o.maximum_retry_attempts.saturating_add(1);
    let mut attempt = 1;
    let error = loop {
        let error = match ctx.send(to_exchange(&delivery, attempt)).await {
            Ok(_) => {
                if !o.auto_ack {
                    settle(o, delivery.ack(BasicAckOptions::default()).await);
                }
                return;
            }
            Err(CamelError::Stopping(_)) => return requeue_now(o, &delivery).await,
            Err(error) => error,
        };
        if o.auto_ack {
            warn(
                budget,
                o,
                attempt,
                max_attempts,
                &error,
                "route failed; the message was acknowledged on delivery (auto_ack) and is lost",
            );
            return;
        }
        if attempt >= max_attempts {
            break error;
        }
        warn(
            budget,
            o,
            attempt,
            max_attempts,
            &error,
            "route failed; the consumer runs the message again after retry_delay",
        );
        if !pause(ctx, o).await {
            return requeue_now(o, &delivery).await;
        }
        attempt += 1;
    };
    if o.requeue {
        warn(budget, o, attempt, max_attempts, &error,
            "route failed on every attempt; the message goes back to the queue after retry_delay and will be delivered again (set dead_letter_exchange to park it)");
        // Even without retries, a requeued message waits: the broker would hand it
        // straight back, thousands of times a second.
        let _ = pause(ctx, o).await;
        return requeue_now(o, &delivery).await;
    }
    let outcome = match &o.dead_letter {
        Some(_) => "route failed on every attempt; the message is dead-lettered",
        None => "route failed on every attempt; the message is rejected without requeue and, unless a broker policy dead-letters it, discarded",
    };
    warn(budget, o, attempt, max_attempts, &error, outcome);
    settle(
        o,
        delivery.reject(BasicRejectOptions { requeue: false }).await,
    );
}

/// Waits `retry_delay`; false when the consumer stops first.
async fn pause(ctx: &ConsumerContext, o: &RabbitMqOptions) -> bool {
    tokio::select! {
        _ = ctx.cancelled() => false,
        _ = tokio::time::sleep(o.retry_delay) => true,
    }
}

/// Gives the delivery back to the broker for this or another consumer.
async fn requeue_now(o: &RabbitMqOptions, delivery: &Delivery) {
    settle(
        o,
        delivery.reject(BasicRejectOptions { requeue: true }).await,
    );
}

fn settle(o: &RabbitMqOptions, settled: Result<(), lapin::Error>) {
    if let Err(e) = settled {
        tracing::warn!(queue = %o.queue, error = %e,
            "settling a RabbitMQ delivery failed; the broker redelivers it");
    }
}

fn warn(
    budget: &LogBudget,
    o: &RabbitMqOptions,
    attempt: u32,
    max_attempts: u32,
    error: &CamelError,
    what: &str,
) {
    let Some(left_out) = budget.admit() else {
        return;
    };
    let dead_letter_exchange = o.dead_letter.as_ref().map(|d| d.exchange.as_str());
    tracing::warn!(queue = %o.queue, attempt, max_attempts, retry_delay = ?o.retry_delay,
        dead_letter_exchange = dead_letter_exchange.unwrap_or("(none)"), %error,
        warnings_left_out = left_out, "{what}");
}
