//! One member of the consumer group: takes records, runs them through the route by
//! partition lanes, stores offsets after success.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use camel_api::{CamelError, ConsumerContext};
use futures::stream::{FuturesUnordered, StreamExt};
use rdkafka::consumer::{Consumer as _, StreamConsumer};
use rdkafka::message::OwnedMessage;
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Message, Offset, TopicPartitionList};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::hook::{RebalanceHook, SharedLanes};
use super::lanes::{Lanes, Start, TopicPartition};
use crate::config::{ConsumerSettings, OnFailure};
use crate::convert::{dead_letter_headers, to_exchange, RecordNames};

/// A record's end: its partition, offset, lane epoch and whether it may be committed.
type Outcome = (TopicPartition, i64, u64, bool);
type Running = FuturesUnordered<Pin<Box<dyn Future<Output = Outcome> + Send>>>;

pub(super) struct Worker {
    settings: Arc<ConsumerSettings>,
    ctx: ConsumerContext,
    stop: CancellationToken,
    dead_letters: Option<FutureProducer>,
    consumer: StreamConsumer<RebalanceHook>,
    lanes: SharedLanes,
    member: usize,
    /// Partitions stopped at a failed record: when to read it again, and its offset.
    blocked: HashMap<TopicPartition, (Instant, i64)>,
    paused: bool,
    names: Arc<RecordNames>,
}

impl Worker {
    pub(super) fn new(
        settings: Arc<ConsumerSettings>,
        ctx: ConsumerContext,
        stop: CancellationToken,
        dead_letters: Option<FutureProducer>,
        member: usize,
    ) -> Result<Self, CamelError> {
        let lanes = SharedLanes::new(std::sync::Mutex::new(Lanes::default()));
        let hook = RebalanceHook {
            lanes: lanes.clone(),
            route_id: ctx.route_id().into(),
        };
        let topic = &settings.common.topic;
        let consumer: StreamConsumer<RebalanceHook> = settings
            .client_config()
            .create_with_context(hook)
            .map_err(|e| {
                CamelError::external(format!("creating the consumer of `kafka:{topic}`"), e)
            })?;
        consumer
            .subscribe(&[topic])
            .map_err(|e| CamelError::external(format!("subscribing to `kafka:{topic}`"), e))?;
        let names = Arc::new(RecordNames::new(&settings.common.topic));
        Ok(Worker {
            settings,
            ctx,
            stop,
            dead_letters,
            consumer,
            lanes,
            member,
            blocked: HashMap::new(),
            paused: false,
            names,
        })
    }

    fn buffered(&self) -> usize {
        self.lanes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .buffered()
    }

    pub(super) async fn run(mut self) -> Result<(), CamelError> {
        let mut running = Running::new();
        let mut failing = false;
        loop {
            let full = self.buffered() >= self.settings.max_poll_records;
            if full != self.paused {
                self.set_paused(full);
            }
            let due = self.blocked.values().map(|(at, _)| *at).min();
            tokio::select! {
                biased;
                _ = self.stop.cancelled() => break,
                Some(outcome) = running.next() => self.finished(outcome, &mut running, true),
                _ = tokio::time::sleep_until(due.unwrap_or_else(Instant::now)), if due.is_some() => {
                    self.read_failed_again();
                }
                received = self.consumer.recv(), if !full => match received {
                    Ok(record) => {
                        if failing {
                            failing = false;
                            self.ctx.health().set_healthy();
                        }
                        let record = record.detach();
                        self.arrived(record, &mut running);
                    }
                    Err(e) => {
                        let error = CamelError::external(
                            format!("reading `kafka:{}`", self.settings.common.topic), e);
                        if !failing {
                            tracing::warn!(route_id = %self.ctx.route_id(), member = self.member,
                                %error, "kafka consumer error; librdkafka keeps retrying");
                        }
                        failing = true;
                        self.ctx.health().set_failing(&error);
                    }
                },
            }
        }
        // Stopping: the route lets running exchanges finish; store what succeeded, then
        // close, which commits the stored offsets and leaves the group.
        while let Some(outcome) = running.next().await {
            self.finished(outcome, &mut running, false);
        }
        let consumer = self.consumer;
        tokio::task::spawn_blocking(move || {
            consumer.unsubscribe();
            drop(consumer);
        })
        .await
        .map_err(|e| CamelError::processor(format!("closing the kafka consumer: {e}")))?;
        Ok(())
    }

    fn arrived(&mut self, record: OwnedMessage, running: &mut Running) {
        let partition: TopicPartition = (record.topic().into(), record.partition());
        let offset = record.offset();
        let pushed = self
            .lanes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(partition, offset, record);
        match pushed {
            Ok(Some(start)) => running.push(self.start(start)),
            Ok(None) => {}
            Err(()) => tracing::trace!(
                offset,
                "record dropped: its partition waits to re-read a failed record"
            ),
        }
    }

    fn finished(&mut self, outcome: Outcome, running: &mut Running, go_on: bool) {
        let (partition, offset, epoch, ok) = outcome;
        let finished = self
            .lanes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .finish(&partition, offset, epoch, ok);
        if let Some(next) = finished.store {
            self.store(&partition, next);
        }
        if let Some(failed) = finished.seek {
            if go_on {
                let delay = match self.settings.on_failure {
                    OnFailure::BreakOnFirstError { delay } => delay,
                    // The dead-letter topic refused it: try again a little later.
                    _ => Duration::from_secs(1),
                };
                self.pause(&partition);
                self.blocked
                    .insert(partition.clone(), (Instant::now() + delay, failed));
            }
        }
        if let Some(next) = finished.next {
            if go_on {
                running.push(self.start(next));
            } else {
                // Stopping: queued records are not started; the broker keeps them.
                self.lanes
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .revoke(&partition);
            }
        }
    }

    fn start(&self, start: Start<OwnedMessage>) -> Pin<Box<dyn Future<Output = Outcome> + Send>> {
        let ctx = self.ctx.clone();
        let settings = self.settings.clone();
        let dead_letters = self.dead_letters.clone();
        let names = self.names.clone();
        Box::pin(async move {
            let Start {
                partition,
                offset,
                epoch,
                record,
            } = start;
            let ok = match ctx.send(to_exchange(&record, &names)).await {
                Ok(_) => true,
                Err(CamelError::Stopping(_)) => false,
                Err(error) => failed(&ctx, &settings, dead_letters.as_ref(), &record, &error).await,
            };
            (partition, offset, epoch, ok)
        })
    }

    fn store(&self, partition: &TopicPartition, next: i64) {
        let mut list = TopicPartitionList::new();
        if list
            .add_partition_offset(&partition.0, partition.1, Offset::Offset(next))
            .is_ok()
        {
            if let Err(e) = self.consumer.store_offsets(&list) {
                // The partition was revoked meanwhile: its new owner reads it again.
                tracing::debug!(topic = %partition.0, partition = partition.1, error = %e,
                    "offset not stored");
            }
        }
    }

    fn list(partitions: &[&TopicPartition]) -> TopicPartitionList {
        let mut list = TopicPartitionList::new();
        for (topic, p) in partitions {
            list.add_partition(topic, *p);
        }
        list
    }

    fn pause(&self, partition: &TopicPartition) {
        if let Err(e) = self.consumer.pause(&Self::list(&[partition])) {
            tracing::debug!(error = %e, "pausing a kafka partition");
        }
    }

    /// Pauses every assigned partition while the lanes are full, resumes them (except the
    /// blocked ones) when there is room: fetching stops while the route is behind.
    fn set_paused(&mut self, pause: bool) {
        let Ok(assignment) = self.consumer.assignment() else {
            return;
        };
        let mut list = TopicPartitionList::new();
        for elem in assignment.elements() {
            let tp: TopicPartition = (elem.topic().into(), elem.partition());
            if pause || !self.blocked.contains_key(&tp) {
                list.add_partition(elem.topic(), elem.partition());
            }
        }
        let result = if pause {
            self.consumer.pause(&list)
        } else {
            self.consumer.resume(&list)
        };
        if let Err(e) = result {
            tracing::debug!(error = %e, pause, "pausing or resuming kafka partitions");
        }
        self.paused = pause;
    }

    /// Seeks each blocked partition whose delay is over back to its failed record.
    fn read_failed_again(&mut self) {
        let now = Instant::now();
        let due: Vec<TopicPartition> = self
            .blocked
            .iter()
            .filter(|(_, (at, _))| *at <= now)
            .map(|(p, _)| p.clone())
            .collect();
        for partition in due {
            let Some((_, offset)) = self.blocked.remove(&partition) else {
                continue;
            };
            let (topic, p) = &partition;
            match self
                .consumer
                .seek(topic, *p, Offset::Offset(offset), Duration::from_secs(2))
            {
                Ok(()) => {
                    if !self.paused {
                        if let Err(e) = self.consumer.resume(&Self::list(&[&partition])) {
                            tracing::debug!(error = %e, "resuming a kafka partition");
                        }
                    }
                }
                Err(e) => {
                    // Most likely revoked meanwhile: the new owner starts at the committed
                    // offset, which is at or before the failed record.
                    tracing::debug!(%topic, partition = p, error = %e, "seek after a failure");
                    self.lanes
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .revoke(&partition);
                }
            }
        }
    }
}

/// A failure the route's error handler left: decides by `on_failure` whether the record
/// may be committed.
async fn failed(
    ctx: &ConsumerContext,
    settings: &ConsumerSettings,
    dead_letters: Option<&FutureProducer>,
    record: &OwnedMessage,
    error: &CamelError,
) -> bool {
    let route_id = ctx.route_id();
    let (topic, partition, offset) = (record.topic(), record.partition(), record.offset());
    match &settings.on_failure {
        OnFailure::Skip => {
            tracing::warn!(%route_id, topic, partition, offset, %error,
                "exchange failed; the record is committed anyway (break_on_first_error: false)");
            true
        }
        OnFailure::BreakOnFirstError { .. } => {
            tracing::warn!(%route_id, topic, partition, offset, %error,
                "exchange failed; the partition is read again from this record");
            false
        }
        OnFailure::DeadLetterTopic(dlt) => {
            let Some(producer) = dead_letters else {
                return false;
            };
            let text = error.to_string();
            let mut out =
                FutureRecord::<[u8], [u8]>::to(dlt).headers(dead_letter_headers(record, &text));
            if let Some(key) = record.key() {
                out = out.key(key);
            }
            if let Some(payload) = record.payload() {
                out = out.payload(payload);
            }
            match producer.send(out, Duration::from_secs(30)).await {
                Ok(_) => {
                    tracing::warn!(%route_id, topic, partition, offset, %error, dead_letter_topic = %dlt,
                        "exchange failed; the record went to the dead-letter topic");
                    true
                }
                Err((e, _)) => {
                    tracing::error!(%route_id, topic, partition, offset, %error, dead_letter_topic = %dlt,
                        publish_error = %e, "exchange failed and the dead-letter topic refused it; the partition is read again from this record");
                    false
                }
            }
        }
    }
}
