//! One member of the consumer group: takes records, runs them through the route by
//! partition lanes, stores offsets after success.

use std::collections::HashMap;
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use camel_api::{CamelError, ConsumerContext, Exchange, ProcessorFuture};
use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt as _;
use rdkafka::consumer::{Consumer as _, StreamConsumer};
use rdkafka::message::{BorrowedMessage, OwnedMessage};
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

/// At most this many records are taken from librdkafka's queue in one go (when it already
/// holds them) before the consumer looks at its other events again.
const BURST: usize = 256;

/// A record waiting in its lane: already an exchange, plus a copy of the record itself when
/// a failure may have to send it to the dead-letter topic.
#[derive(Debug)]
pub(crate) struct Pending {
    exchange: Exchange,
    original: Option<OwnedMessage>,
}

pub(super) struct Worker {
    settings: Arc<ConsumerSettings>,
    ctx: ConsumerContext,
    stop: CancellationToken,
    dead_letters: Option<FutureProducer>,
    consumer: Arc<StreamConsumer<RebalanceHook>>,
    lanes: SharedLanes,
    member: usize,
    /// Partitions stopped at a failed record: when to read it again, and its offset.
    blocked: HashMap<TopicPartition, (Instant, i64)>,
    paused: bool,
    /// True while librdkafka reports errors (the route's health says so).
    failing: bool,
    names: Arc<RecordNames>,
    /// The subscribed topic, shared by every lane key.
    topic: Arc<str>,
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
        let topic = names.topic().clone();
        Ok(Worker {
            settings,
            ctx,
            stop,
            dead_letters,
            consumer: Arc::new(consumer),
            lanes,
            member,
            blocked: HashMap::new(),
            paused: false,
            failing: false,
            names,
            topic,
        })
    }

    fn buffered(&self) -> usize {
        self.lanes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .buffered()
    }

    pub(super) async fn run(mut self) -> Result<(), CamelError> {
        let consumer = self.consumer.clone();
        // One stream for the consumer's life: its waker slot is registered once.
        let mut records = consumer.stream();
        let stop = self.stop.clone();
        let mut stopped = pin!(stop.cancelled());
        let mut running = Running::new();
        loop {
            self.store_successes();
            let full = self.buffered() >= self.settings.max_poll_records;
            if full != self.paused {
                self.set_paused(full);
            }
            // While the lanes are full every partition is paused: a due re-read waits for
            // room, then resumes and seeks its partition in one go (a resume alone would
            // not wake librdkafka's fetcher, see `read_failed_again`).
            let due = if self.paused {
                None
            } else {
                self.blocked.values().map(|(at, _)| *at).min()
            };
            tokio::select! {
                biased;
                () = &mut stopped => break,
                Some(outcome) = running.next() => {
                    if let Some(next) = self.finished(outcome, true) {
                        self.run_lane(next, &mut running);
                    }
                }
                _ = tokio::time::sleep_until(due.unwrap_or_else(Instant::now)), if due.is_some() => {
                    self.read_failed_again();
                }
                received = records.next(), if !full => {
                    let mut next = received;
                    let mut taken = 0;
                    // What librdkafka already holds is taken without going round the loop.
                    while let Some(result) = next {
                        taken += 1;
                        if !self.received(result, &mut running) || taken == BURST {
                            break;
                        }
                        next = records.next().now_or_never().flatten();
                    }
                }
            }
        }
        // Stopping: the route lets running exchanges finish; store what succeeded, then
        // close, which commits the stored offsets and leaves the group.
        while let Some(outcome) = running.next().await {
            self.finished(outcome, false);
        }
        self.store_successes();
        drop(records);
        drop(consumer);
        let consumer = self.consumer;
        tokio::task::spawn_blocking(move || {
            consumer.unsubscribe();
            drop(consumer);
        })
        .await
        .map_err(|e| CamelError::processor(format!("closing the kafka consumer: {e}")))?;
        Ok(())
    }

    /// A record or an error from librdkafka. Returns true when the consumer may take the
    /// next one at once: a record arrived and the lanes have room.
    fn received(
        &mut self,
        result: rdkafka::error::KafkaResult<BorrowedMessage<'_>>,
        running: &mut Running,
    ) -> bool {
        match result {
            Ok(record) => {
                if self.failing {
                    self.failing = false;
                    self.ctx.health().set_healthy();
                }
                self.arrived(&record, running)
            }
            Err(e) => {
                let error = CamelError::external(
                    format!("reading `kafka:{}`", self.settings.common.topic),
                    e,
                );
                if !self.failing {
                    tracing::warn!(route_id = %self.ctx.route_id(), member = self.member,
                        %error, "kafka consumer error; librdkafka keeps retrying");
                }
                self.failing = true;
                self.ctx.health().set_failing(&error);
                false
            }
        }
    }

    /// Takes a record into its lane and runs it when the lane is idle. Returns false when
    /// the lanes are full (`max_poll_records`).
    fn arrived(&mut self, record: &BorrowedMessage<'_>, running: &mut Running) -> bool {
        let name = record.topic();
        let topic = if name == &*self.topic {
            self.topic.clone()
        } else {
            name.into()
        };
        let partition: TopicPartition = (topic, record.partition());
        let offset = record.offset();
        let pending = Pending {
            exchange: to_exchange(record, name, &self.names),
            original: matches!(self.settings.on_failure, OnFailure::DeadLetterTopic(_))
                .then(|| record.detach()),
        };
        let mut lanes = self.lanes.lock().unwrap_or_else(PoisonError::into_inner);
        let pushed = lanes.push(partition, offset, pending);
        let room = lanes.buffered() < self.settings.max_poll_records;
        drop(lanes);
        match pushed {
            Ok(Some(start)) => self.run_lane(start, running),
            Ok(None) => {}
            Err(()) => tracing::trace!(
                offset,
                "record dropped: its partition waits to re-read a failed record"
            ),
        }
        room
    }

    /// Runs `start`, and while the route completes at once, the lane's next records: a
    /// synchronous route costs no allocation and no poll per record. A route that has to
    /// wait (or a failure) goes to `running`.
    fn run_lane(&mut self, start: Start<Pending>, running: &mut Running) {
        let mut next = Some(start);
        while let Some(Start {
            partition,
            offset,
            epoch,
            record,
        }) = next.take()
        {
            match self.ctx.process(record.exchange) {
                ProcessorFuture::Ready(Some(Ok(_))) => {
                    next = self.finished((partition, offset, epoch, true), true);
                }
                ProcessorFuture::Ready(result) => {
                    let error = match result {
                        Some(Err(error)) => error,
                        _ => CamelError::processor("the route returned no result"),
                    };
                    let at = (partition, offset, epoch);
                    running.push(self.settle(at, record.original, std::future::ready(Err(error))));
                }
                pending @ ProcessorFuture::Pending(_) => {
                    running.push(self.settle((partition, offset, epoch), record.original, pending));
                }
            }
        }
    }

    /// A record's end once its result is known: a success may be committed, a failure
    /// follows `on_failure`.
    fn settle(
        &self,
        (partition, offset, epoch): (TopicPartition, i64, u64),
        original: Option<OwnedMessage>,
        result: impl Future<Output = Result<Exchange, CamelError>> + Send + 'static,
    ) -> Pin<Box<dyn Future<Output = Outcome> + Send>> {
        let ctx = self.ctx.clone();
        let settings = self.settings.clone();
        let dead_letters = self.dead_letters.clone();
        Box::pin(async move {
            let ok = match result.await {
                Ok(_) => true,
                Err(CamelError::Stopping(_)) => false,
                Err(error) => {
                    let record = Failed {
                        partition: &partition,
                        offset,
                        original: original.as_ref(),
                    };
                    failed(&ctx, &settings, dead_letters.as_ref(), record, &error).await
                }
            };
            (partition, offset, epoch, ok)
        })
    }

    /// Notes a record's end; returns its lane's next record to run (unless stopping).
    fn finished(&mut self, outcome: Outcome, go_on: bool) -> Option<Start<Pending>> {
        let (partition, offset, epoch, ok) = outcome;
        let finished = self
            .lanes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .finish(&partition, offset, epoch, ok);
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
        let next = finished.next?;
        if go_on {
            return Some(next);
        }
        // Stopping: queued records are not started; the broker keeps them.
        self.forget(partition);
        None
    }

    /// Forgets a partition's lane, storing the offset of its last success first.
    fn forget(&self, partition: TopicPartition) {
        let unstored = self
            .lanes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .revoke(&partition);
        if let Some(next) = unstored {
            self.store(&[(partition, next)]);
        }
    }

    /// Hands librdkafka the offsets of the records that succeeded since the last call (the
    /// latest per partition); it commits them on its timer, on revoke and on close.
    fn store_successes(&self) {
        let unstored = self
            .lanes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take_unstored();
        if !unstored.is_empty() {
            self.store(&unstored);
        }
    }

    fn store(&self, offsets: &[(TopicPartition, i64)]) {
        let mut list = TopicPartitionList::with_capacity(offsets.len());
        for ((topic, partition), next) in offsets {
            let _ = list.add_partition_offset(topic, *partition, Offset::Offset(*next));
        }
        if let Err(e) = self.consumer.store_offsets(&list) {
            // A partition was revoked meanwhile: its new owner reads it again.
            tracing::debug!(error = %e, "offsets not stored");
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

    /// Seeks each blocked partition whose delay is over back to its failed record (called
    /// only while the consumer is not paused as a whole).
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
            // Resume first, then seek: librdkafka wakes its fetcher on a seek but not on
            // a resume, so a seek of a paused partition followed by a resume leaves the
            // re-read to the fetcher's next idle round, up to a second later.
            if let Err(e) = self.consumer.resume(&Self::list(&[&partition])) {
                tracing::debug!(error = %e, "resuming a kafka partition");
            }
            if let Err(e) =
                self.consumer
                    .seek(topic, *p, Offset::Offset(offset), Duration::from_secs(2))
            {
                // Most likely revoked meanwhile: the new owner starts at the committed
                // offset, which is at or before the failed record.
                tracing::debug!(%topic, partition = p, error = %e, "seek after a failure");
                self.forget(partition);
            }
        }
    }
}

/// Where a failed record came from, and the record itself when it may go to the
/// dead-letter topic.
struct Failed<'a> {
    partition: &'a TopicPartition,
    offset: i64,
    original: Option<&'a OwnedMessage>,
}

/// A failure the route's error handler left: decides by `on_failure` whether the record
/// may be committed.
async fn failed(
    ctx: &ConsumerContext,
    settings: &ConsumerSettings,
    dead_letters: Option<&FutureProducer>,
    record: Failed<'_>,
    error: &CamelError,
) -> bool {
    let route_id = ctx.route_id();
    let ((topic, partition), offset) = (record.partition, record.offset);
    let (topic, partition): (&str, i32) = (topic, *partition);
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
            let (Some(producer), Some(record)) = (dead_letters, record.original) else {
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
