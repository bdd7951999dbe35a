//! `from: kafka:TOPIC`: an at-least-once consumer in a Kafka consumer group.
//!
//! `consumers_count` members of `group_id` run in this process, each a librdkafka
//! consumer of its own. A member hands each partition's records to the route one at a
//! time, in offset order, partitions side by side; an offset is stored only after the
//! route succeeded and librdkafka commits stored offsets every `auto_commit_interval_ms`,
//! on revoke and on close. A failed exchange (one the route's error handler did not
//! handle) follows `break_on_first_error` (the default: the partition is read again from
//! the failed record) or `dead_letter_topic`. See ADR 0071.

mod hook;
pub(crate) mod lanes;
mod worker;

use std::sync::Arc;

use async_trait::async_trait;
use camel_api::{CamelError, Consumer, ConsumerContext};
use rdkafka::producer::FutureProducer;
use tokio::task::JoinSet;

use crate::config::{ConsumerSettings, OnFailure};
use worker::Worker;

/// The `from: kafka:TOPIC` consumer.
#[derive(Debug)]
pub(crate) struct KafkaConsumer {
    settings: Arc<ConsumerSettings>,
}

impl KafkaConsumer {
    pub(crate) fn new(settings: ConsumerSettings) -> Self {
        KafkaConsumer {
            settings: Arc::new(settings),
        }
    }
}

#[async_trait]
impl Consumer for KafkaConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let dead_letters = match &self.settings.on_failure {
            OnFailure::DeadLetterTopic(_) => Some(dead_letter_producer(&self.settings)?),
            _ => None,
        };
        // A child token: one member failing stops the others, not the route.
        let stop = ctx.cancellation().child_token();
        let mut members = JoinSet::new();
        for member in 0..self.settings.consumers_count {
            let worker = Worker::new(
                self.settings.clone(),
                ctx.clone(),
                stop.clone(),
                dead_letters.clone(),
                member,
            )?;
            members.spawn(worker.run());
        }
        let mut first_error = None;
        while let Some(done) = members.join_next().await {
            let result = done.map_err(|e| CamelError::processor(format!("kafka consumer: {e}")));
            if let Err(e) = result.and_then(|r| r) {
                ctx.health().set_failing(&e);
                stop.cancel();
                first_error.get_or_insert(e);
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

fn dead_letter_producer(settings: &ConsumerSettings) -> Result<FutureProducer, CamelError> {
    let mut config = rdkafka::ClientConfig::new();
    config
        .set("bootstrap.servers", &settings.common.brokers)
        .set("enable.idempotence", "true")
        .set("acks", "all");
    config.create().map_err(|e| {
        CamelError::external(
            format!(
                "creating the dead-letter producer for `kafka:{}`",
                settings.common.topic
            ),
            e,
        )
    })
}
