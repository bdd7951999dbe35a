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
use super::ready::Readiness;
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
    /// Decides when a batch is ready; the linger timer follows its deadline.
    readiness: Readiness,
    /// Timers kept across loop turns (re-created each turn they would be registered and
    /// cancelled in the timer wheel per admitted entry). The idle timer is re-armed
    /// lazily when it fires early.
    linger_timer: Pin<Box<Sleep>>,
    /// The instant the linger timer is set to; `None` while it is not polled.
    linger_armed: Option<Instant>,
    idle_timer: Pin<Box<Sleep>>,
    last_activity: Instant,
    /// Intake is closed (idle or shut down): what is left goes out without lingering.
    closing: bool,
    /// Intake was closed because the batcher was idle, with nothing queued or in flight.
    /// A delivery may start the replacement from then on, so an entry that reached the
    /// channel just before it closed is handed back (to go to the replacement) instead of
    /// being sent from here: this batcher never sends again, and the replacement is the
    /// only one that can hold a request of the entry's group.
    retiring: bool,
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
        let readiness = Readiness::new(take.max_entries, take.max_bytes, config.linger);
        let (linger, idle_timeout) = (config.linger, config.idle_timeout);
        Worker {
            telemetry: Telemetry::new(shared.label.clone(), shared.instance.clone()),
            codec,
            shared,
            rx,
            config,
            take,
            queue: BatchQueue::default(),
            sends: JoinSet::new(),
            in_flight: HashMap::new(),
            readiness,
            linger_timer: Box::pin(tokio::time::sleep(linger)),
            linger_armed: None,
            idle_timer: Box::pin(tokio::time::sleep(idle_timeout)),
            last_activity: Instant::now(),
            closing: false,
            retiring: false,
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
                    if self.retiring {
                        for pending in inbox.drain(..) {
                            self.hand_back(pending);
                        }
                    } else {
                        for pending in inbox.drain(..) {
                            self.admit(pending);
                        }
                    }
                }
                _ = &mut self.linger_timer, if self.linger_armed.is_some() => {
                    self.linger_armed = None;
                }
                _ = &mut self.idle_timer, if idle && !self.closing => {
                    let idle_at = self.last_activity + self.config.idle_timeout;
                    if Instant::now() >= idle_at {
                        #[cfg(test)]
                        self.shared.idle_gate.hold().await;
                        tracing::debug!(sink = %self.shared.label, "batcher idle, stopping");
                        self.retiring = true;
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
            self.telemetry.state(
                self.shared.queued(),
                self.shared.queued_bytes(),
                self.in_flight.len(),
            );
        }
    }

    fn close(&mut self) {
        self.closing = true;
        self.rx.close();
    }

    /// Gives an entry that arrived after an idle stop back to its caller, who takes it to
    /// the replacement: nothing of its group is queued or in flight here.
    fn hand_back(&mut self, pending: Pending) {
        self.shared.release([&pending]);
        let _ = pending.reply.send(Answer::Requeue(pending.entry));
    }

    fn admit(&mut self, pending: Pending) {
        let now = Instant::now();
        self.last_activity = now;
        if self.queue.push(pending, now) {
            self.readiness.became_sendable(now);
        }
    }

    fn flush(&mut self) {
        if self.shared.abandoned.swap(0, Ordering::AcqRel) > 0 {
            let dropped = self.queue.sweep();
            if !dropped.is_empty() {
                tracing::debug!(sink = %self.shared.label, dropped = dropped.len(), "dropped entries whose callers went away");
                self.shared.release(&dropped);
            }
        }
        let now = Instant::now();
        let mut took = false;
        while self.in_flight.len() < self.config.max_inflight
            && self
                .readiness
                .is_ready(self.queue.sendable(), now, self.closing)
        {
            let batch = self.queue.take(self.take);
            if batch.is_empty() {
                // Cannot happen while something is sendable; never loop on it.
                break;
            }
            self.dispatch(batch);
            took = true;
        }
        let left = self.queue.sendable();
        if took {
            self.readiness.sent(left, now);
        }
        self.readiness.observe(left);
        self.arm_linger(now);
    }

    /// Points the one linger timer at the readiness deadline, if that is still ahead
    /// (a passed deadline with nothing sent means the in-flight limit holds the batch;
    /// an answer wakes the loop then).
    fn arm_linger(&mut self, now: Instant) {
        match self.readiness.deadline() {
            Some(at) if at > now => {
                if self.linger_armed != Some(at) {
                    self.linger_timer.as_mut().reset(at);
                    self.linger_armed = Some(at);
                }
            }
            _ => self.linger_armed = None,
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
        if let Some(waiting_since) = self.queue.release(&flight.groups) {
            self.readiness.became_sendable(waiting_since);
        }
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
    /// entries were in no request, so their callers take them to the replacement unless
    /// that could reorder their group (then they fail, as the spec's exiting call does);
    /// in-flight callers see their reply channel close.
    fn drop(&mut self) {
        // Close intake and unregister first, so a caller handed its entry back finds
        // the replacement rather than this dying batcher.
        self.rx.close();
        if let Some(registry) = self.registration.registry.upgrade() {
            registry.forget(&self.registration.key, self.registration.generation);
        }
        let now = Instant::now();
        while let Ok(p) = self.rx.try_recv() {
            self.queue.push(p, now);
        }
        let (handed, failed) = self.queue.split_after_death();
        self.shared.release(handed.iter().chain(&failed));
        for p in handed {
            let _ = p.reply.send(Answer::Requeue(p.entry));
        }
        for p in failed {
            let error = SinkError::GroupInterrupted {
                sink: self.shared.label.to_string(),
                group: p.entry.group.as_deref().unwrap_or_default().to_string(),
            };
            let _ = p.reply.send(Answer::Done(Err(error.into())));
        }
        self.shared.finished.cancel();
    }
}
