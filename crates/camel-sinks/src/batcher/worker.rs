//! The batcher task: one per destination, the single owner of its queue.
//!
//! It admits entries, decides when a batch goes out (size, bytes, linger), spawns each
//! request as a supervised task (at most `max_inflight`), answers every caller from the
//! request's report, and stops when idle or told to.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use camel_api::CamelError;
use tokio::sync::mpsc;
use tokio::task::{Id, JoinError, JoinSet};
use tokio::time::{Instant, Sleep};
use tokio_util::sync::CancellationToken;

use super::config::BatchConfig;
use super::error::SinkError;
use super::handle::Shared;
use super::queue::{Answer, BatchQueue, Pending, Reply, Take};
use super::registry::{BatcherKey, BatcherRegistry};
use super::send::{drive, Report};
use super::telemetry::{Flush, Telemetry};
use crate::codec::BatchCodec;

/// Most entries taken from the channel per loop turn: amortises the turn's bookkeeping
/// (flush check, gauges) over many admissions under load.
const INBOX: usize = 64;

/// A request in flight: whom to answer and which groups it holds.
#[derive(Debug)]
struct InFlight {
    replies: Vec<Reply>,
    groups: Vec<Arc<str>>,
    bytes: usize,
    started: Instant,
}

/// Where a batcher unregisters itself when it ends.
#[derive(Debug)]
pub(crate) struct Registration {
    pub(crate) registry: Weak<BatcherRegistry>,
    pub(crate) key: BatcherKey,
    pub(crate) generation: u64,
}

pub(crate) struct Worker<C: BatchCodec> {
    codec: Arc<C>,
    shared: Arc<Shared>,
    rx: mpsc::UnboundedReceiver<Pending>,
    config: BatchConfig,
    take: Take,
    queue: BatchQueue,
    sends: JoinSet<Report>,
    in_flight: HashMap<Id, InFlight>,
    /// When the current linger ends (armed while the queue is non-empty).
    deadline: Option<Instant>,
    linger_expired: bool,
    /// Timers kept across loop turns (re-created each turn they would be registered and
    /// cancelled in the timer wheel per admitted entry). The idle timer is re-armed
    /// lazily when it fires early.
    linger_timer: Pin<Box<Sleep>>,
    idle_timer: Pin<Box<Sleep>>,
    /// Nothing eligible could be taken; set until a group is released or a new one
    /// arrives, so a blocked queue is not rescanned on every admission.
    stalled: bool,
    last_activity: Instant,
    /// Intake is closed (idle or shut down): what is left goes out without lingering.
    closing: bool,
    stop: CancellationToken,
    telemetry: Telemetry,
    registration: Registration,
}

impl<C: BatchCodec> Worker<C> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        codec: Arc<C>,
        shared: Arc<Shared>,
        rx: mpsc::UnboundedReceiver<Pending>,
        config: BatchConfig,
        stop: CancellationToken,
        registration: Registration,
    ) -> Self {
        let limits = codec.limits();
        let take = Take {
            max_entries: config.entries_per_request(&limits),
            max_bytes: config.bytes_per_request(&limits),
            one_group: codec.group_forms_batch(),
        };
        let (linger, idle_timeout) = (config.linger, config.idle_timeout);
        Worker {
            telemetry: Telemetry::new(shared.label.clone()),
            codec,
            shared,
            rx,
            config,
            take,
            queue: BatchQueue::default(),
            sends: JoinSet::new(),
            in_flight: HashMap::new(),
            deadline: None,
            linger_expired: false,
            linger_timer: Box::pin(tokio::time::sleep(linger)),
            idle_timer: Box::pin(tokio::time::sleep(idle_timeout)),
            stalled: false,
            last_activity: Instant::now(),
            closing: false,
            stop,
            registration,
        }
    }

    /// Runs until idle for `idle_timeout` or stopped, then drains what was admitted.
    pub(crate) async fn run(mut self) {
        let mut intake_open = true;
        let mut inbox = Vec::with_capacity(INBOX);
        loop {
            let idle = self.queue.is_empty() && self.in_flight.is_empty();
            tokio::select! {
                biased;
                Some(done) = self.sends.join_next_with_id(), if !self.in_flight.is_empty() => {
                    self.complete(done);
                }
                received = self.rx.recv_many(&mut inbox, INBOX), if intake_open => {
                    if received == 0 {
                        intake_open = false;
                    }
                    for pending in inbox.drain(..) {
                        self.admit(pending);
                    }
                }
                _ = &mut self.linger_timer, if self.deadline.is_some() && !self.linger_expired => {
                    self.linger_expired = true;
                    self.stalled = false;
                }
                _ = &mut self.idle_timer, if idle && !self.closing => {
                    let idle_at = self.last_activity + self.config.idle_timeout;
                    if Instant::now() >= idle_at {
                        tracing::debug!(sink = %self.shared.label, "batcher idle, stopping");
                        self.close();
                    } else {
                        self.idle_timer.as_mut().reset(idle_at);
                    }
                }
                _ = self.stop.cancelled(), if !self.closing => {
                    tracing::debug!(sink = %self.shared.label, "batcher shut down, draining");
                    self.close();
                }
            }
            if !intake_open && self.queue.is_empty() && self.in_flight.is_empty() {
                break;
            }
            self.flush();
            self.telemetry
                .state(self.shared.queued(), self.shared.queued_bytes());
        }
    }

    fn arm_linger(&mut self, at: Instant) {
        self.deadline = Some(at);
        self.linger_expired = false;
        self.linger_timer.as_mut().reset(at);
    }

    fn close(&mut self) {
        self.closing = true;
        self.stalled = false;
        self.rx.close();
    }

    fn admit(&mut self, pending: Pending) {
        let now = Instant::now();
        self.last_activity = now;
        if self.queue.is_empty() && self.deadline.is_none() {
            self.arm_linger(now + self.config.linger);
        }
        if self.stalled && self.queue.opens_new_group(&pending.entry) {
            self.stalled = false;
        }
        self.queue.push(pending);
    }

    fn due(&self) -> bool {
        self.queue.len() >= self.take.max_entries
            || self.queue.bytes() >= self.take.max_bytes
            || self.linger_expired
            || self.closing
    }

    fn flush(&mut self) {
        if self.shared.abandoned.swap(0, Ordering::AcqRel) > 0 {
            let dropped = self.queue.sweep();
            if !dropped.is_empty() {
                tracing::debug!(sink = %self.shared.label, dropped = dropped.len(), "dropped entries whose callers went away");
                self.shared.release(&dropped);
                self.stalled = false;
            }
        }
        let mut took = false;
        while !self.stalled
            && self.in_flight.len() < self.config.max_inflight
            && !self.queue.is_empty()
            && self.due()
        {
            let batch = self.queue.take(self.take);
            if batch.is_empty() {
                self.stalled = true;
                break;
            }
            self.dispatch(batch);
            took = true;
        }
        if took {
            self.linger_expired = false;
            if self.queue.is_empty() {
                self.deadline = None;
            } else {
                self.arm_linger(Instant::now() + self.config.linger);
            }
        } else if self.queue.is_empty() {
            self.deadline = None;
            self.linger_expired = false;
        }
    }

    fn dispatch(&mut self, batch: Vec<Pending>) {
        self.shared.release(&batch);
        let mut groups: Vec<Arc<str>> = Vec::new();
        let mut entries = Vec::with_capacity(batch.len());
        let mut replies = Vec::with_capacity(batch.len());
        let mut bytes = 0;
        for p in batch {
            if let Some(g) = &p.entry.group {
                if !groups.contains(g) {
                    groups.push(g.clone());
                }
            }
            bytes += p.entry.size;
            entries.push(p.entry);
            replies.push(p.reply);
        }
        self.queue.mark_in_flight(&groups);
        let task = self.sends.spawn(drive(
            self.codec.clone(),
            entries,
            self.config.send_timeout,
            self.shared.label.clone(),
        ));
        self.shared
            .requests_in_flight
            .fetch_add(1, Ordering::AcqRel);
        self.in_flight.insert(
            task.id(),
            InFlight {
                replies,
                groups,
                bytes,
                started: Instant::now(),
            },
        );
    }

    fn complete(&mut self, done: Result<(Id, Report), JoinError>) {
        let (id, outcome) = match done {
            Ok((id, report)) => (id, Ok(report)),
            Err(e) => (e.id(), Err(e)),
        };
        let Some(flight) = self.in_flight.remove(&id) else {
            return;
        };
        self.shared
            .requests_in_flight
            .fetch_sub(1, Ordering::AcqRel);
        self.queue.release(&flight.groups);
        self.stalled = false;
        self.last_activity = Instant::now();
        let entries = flight.replies.len();
        let (requests, bisections, failed) = match outcome {
            Ok(report) => {
                let failed = report.results.iter().filter(|r| r.is_err()).count();
                for (reply, result) in flight.replies.into_iter().zip(report.results) {
                    let _ = reply.send(Answer::Done(result));
                }
                (report.requests, report.bisections, failed)
            }
            Err(e) => {
                let error: CamelError = if e.is_panic() {
                    tracing::error!(sink = %self.shared.label, "batch send panicked; failing its entries");
                    SinkError::SendPanicked {
                        sink: self.shared.label.to_string(),
                    }
                } else {
                    SinkError::BatcherGone {
                        sink: self.shared.label.to_string(),
                    }
                }
                .into();
                for reply in flight.replies {
                    let _ = reply.send(Answer::Done(Err(error.clone())));
                }
                (1, 0, entries)
            }
        };
        self.telemetry.flush(Flush {
            entries,
            bytes: flight.bytes,
            requests,
            bisections,
            failed,
            duration: flight.started.elapsed(),
        });
    }
}

impl<C: BatchCodec> Drop for Worker<C> {
    /// Runs on every exit, including an abnormal one (the runtime shutting down): queued
    /// entries were in no request, so their callers take them to the replacement;
    /// in-flight callers see their reply channel close.
    fn drop(&mut self) {
        // Close intake and unregister first, so a caller handed its entry back finds
        // the replacement rather than this dying batcher.
        self.rx.close();
        if let Some(registry) = self.registration.registry.upgrade() {
            registry.forget(&self.registration.key, self.registration.generation);
        }
        let mut left = self.queue.drain();
        while let Ok(p) = self.rx.try_recv() {
            left.push(p);
        }
        self.shared.release(&left);
        for p in left {
            let _ = p.reply.send(Answer::Requeue(p.entry));
        }
        self.shared.finished.cancel();
    }
}
