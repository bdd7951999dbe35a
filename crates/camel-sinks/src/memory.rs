//! An in-process codec: the destination is a list in memory.
//!
//! It exists for tests and benchmarks of the batcher itself: it records every request,
//! can hold requests until released (to observe the in-flight limit and group order),
//! can fail, refuse, hang or panic on chosen entries, or never answer at all (the flood
//! test).
//!
//! ```
//! use camel_api::Exchange;
//! use camel_sinks::memory::{MemoryCodec, Verdict};
//! use camel_sinks::{BatchConfig, BatcherRegistry, SinkOptions, SinkProducer};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let codec = MemoryCodec::new("orders")
//!     .with_verdict(|e| if e.payload.as_ref() == b"bad" { Verdict::Fail } else { Verdict::Accept });
//! let log = codec.log();
//! let sink = SinkProducer::new(codec, BatchConfig::default(), SinkOptions::default(), BatcherRegistry::new());
//! assert!(sink.deliver(&Exchange::new("good")).await.is_ok());
//! assert!(sink.deliver(&Exchange::new("bad")).await.is_err());
//! assert_eq!(log.accepted().len(), 1);
//! # }
//! ```

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::{CamelError, Exchange};
use futures::future::BoxFuture;
use tokio::sync::{Notify, Semaphore};

use crate::codec::{BatchCodec, BatchIdentity, Entry, EntryMeta, Limits, Receipt, SendOutcome};

/// What the memory destination does with one entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Accepted.
    Accept,
    /// Rejected on its own (a per-entry failure in an answered request).
    Fail,
    /// Makes the whole request refused (a validation error): bisectable.
    RefuseRequest,
    /// Makes the send panic.
    Panic,
    /// Makes the send never answer.
    Hang,
}

type Judge = Arc<dyn Fn(&Entry) -> Verdict + Send + Sync>;
type Latency = Arc<dyn Fn(&[Entry]) -> Duration + Send + Sync>;

/// What the memory destination saw; shared between the codec and the test.
#[derive(Default)]
pub struct MemoryLog {
    requests: Mutex<Vec<Vec<Entry>>>,
    accepted: Mutex<Vec<Entry>>,
    started: Notify,
    gate: Option<Semaphore>,
    /// Requests in flight per group, and the most ever seen for one group.
    groups_in_flight: Mutex<HashMap<Arc<str>, usize>>,
    most_in_flight_per_group: AtomicUsize,
}

impl fmt::Debug for MemoryLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryLog")
            .field("requests", &self.request_count())
            .finish()
    }
}

impl MemoryLog {
    /// The idempotency keys of every request made, in the order requests started.
    pub fn requests(&self) -> Vec<Vec<String>> {
        lock(&self.requests)
            .iter()
            .map(|r| r.iter().map(|e| e.idempotency_key.to_string()).collect())
            .collect()
    }

    /// Number of requests started.
    pub fn request_count(&self) -> usize {
        lock(&self.requests).len()
    }

    /// The entries accepted, in the order they were accepted.
    pub fn accepted(&self) -> Vec<Entry> {
        lock(&self.accepted).clone()
    }

    /// Waits until at least `n` requests have started.
    pub async fn wait_requests(&self, n: usize) {
        loop {
            let notified = self.started.notified();
            if self.request_count() >= n {
                return;
            }
            notified.await;
        }
    }

    /// The most requests carrying one group that were in flight at once (the spec
    /// allows 1).
    pub fn most_in_flight_per_group(&self) -> usize {
        self.most_in_flight_per_group.load(Ordering::Acquire)
    }

    /// Lets `n` held requests answer (for a codec made with [`MemoryCodec::gated`]).
    pub fn release(&self, n: usize) {
        if let Some(gate) = &self.gate {
            gate.add_permits(n);
        }
    }
}

/// The groups of one request in flight; counted down when the send ends in any way
/// (answer, panic, timeout).
struct GroupsInFlight<'a> {
    log: &'a MemoryLog,
    groups: Vec<Arc<str>>,
}

impl<'a> GroupsInFlight<'a> {
    fn start(log: &'a MemoryLog, entries: &[Entry]) -> Self {
        let mut groups: Vec<Arc<str>> = Vec::new();
        for g in entries.iter().filter_map(|e| e.group.clone()) {
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        let mut in_flight = lock(&log.groups_in_flight);
        for g in &groups {
            let n = in_flight.entry(g.clone()).or_insert(0);
            *n += 1;
            log.most_in_flight_per_group.fetch_max(*n, Ordering::AcqRel);
        }
        drop(in_flight);
        GroupsInFlight { log, groups }
    }
}

impl Drop for GroupsInFlight<'_> {
    fn drop(&mut self) {
        let mut in_flight = lock(&self.log.groups_in_flight);
        for g in &self.groups {
            if let Some(n) = in_flight.get_mut(g) {
                *n -= 1;
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The in-process codec.
#[derive(Clone)]
pub struct MemoryCodec {
    destination: String,
    instance: u64,
    limits: Limits,
    one_group: bool,
    strict: bool,
    never_answer: bool,
    judge: Option<Judge>,
    latency: Option<Latency>,
    log: Arc<MemoryLog>,
}

impl fmt::Debug for MemoryCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryCodec")
            .field("destination", &self.destination)
            .finish()
    }
}

impl MemoryCodec {
    /// A destination that accepts everything at once; 10 entries, 1 MiB per request.
    pub fn new(destination: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        MemoryCodec {
            destination: destination.to_string(),
            instance: NEXT.fetch_add(1, Ordering::Relaxed),
            limits: Limits {
                max_entries: 10,
                max_request_bytes: 1 << 20,
                max_entry_bytes: 1 << 20,
            },
            one_group: false,
            strict: false,
            never_answer: false,
            judge: None,
            latency: None,
            log: Arc::new(MemoryLog::default()),
        }
    }

    /// Holds every request until the test calls [`MemoryLog::release`].
    pub fn gated(mut self) -> Self {
        self.log = Arc::new(MemoryLog {
            gate: Some(Semaphore::new(0)),
            ..MemoryLog::default()
        });
        self
    }

    /// Never answers any request.
    pub fn never_answer(mut self) -> Self {
        self.never_answer = true;
        self
    }

    /// Sets the request limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Requires one group per request, as Pub/Sub does.
    pub fn one_group_per_batch(mut self) -> Self {
        self.one_group = true;
        self
    }

    /// Keeps each group's order strictly, as an SQS FIFO queue does
    /// ([`BatchCodec::strict_group_order`]).
    pub fn strict_group_order(mut self) -> Self {
        self.strict = true;
        self
    }

    /// Decides each entry's fate.
    pub fn with_verdict(
        mut self,
        judge: impl Fn(&Entry) -> Verdict + Send + Sync + 'static,
    ) -> Self {
        self.judge = Some(Arc::new(judge));
        self
    }

    /// Answers each request after the time `latency` gives for it.
    pub fn with_latency(
        mut self,
        latency: impl Fn(&[Entry]) -> Duration + Send + Sync + 'static,
    ) -> Self {
        self.latency = Some(Arc::new(latency));
        self
    }

    /// The log shared with this codec (and its clones).
    pub fn log(&self) -> Arc<MemoryLog> {
        self.log.clone()
    }

    fn verdict(&self, e: &Entry) -> Verdict {
        self.judge.as_ref().map_or(Verdict::Accept, |j| j(e))
    }
}

impl BatchCodec for MemoryCodec {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn destination(&self) -> String {
        self.destination.clone()
    }

    fn identity(&self, identity: &mut BatchIdentity) {
        identity
            .part("destination", &self.destination)
            .part("instance", self.instance);
    }

    fn limits(&self) -> Limits {
        self.limits
    }

    fn encode(&self, exchange: &Exchange, meta: EntryMeta) -> Result<Entry, CamelError> {
        // No headers listed: the trace context only, as every sink carries it.
        Ok(Entry::new(
            exchange.message.body.to_bytes(),
            crate::attributes::HeaderSelection::default().select(exchange),
            meta,
        ))
    }

    fn send_batch<'a>(&'a self, entries: &'a [Entry]) -> BoxFuture<'a, SendOutcome> {
        Box::pin(async move {
            lock(&self.log.requests).push(entries.to_vec());
            let _in_flight = GroupsInFlight::start(&self.log, entries);
            self.log.started.notify_waiters();
            if self.never_answer {
                return futures::future::pending().await;
            }
            if let Some(gate) = &self.log.gate {
                if let Ok(permit) = gate.acquire().await {
                    permit.forget();
                }
            }
            if let Some(latency) = &self.latency {
                tokio::time::sleep(latency(entries)).await;
            }
            let verdicts: Vec<Verdict> = entries.iter().map(|e| self.verdict(e)).collect();
            if verdicts.contains(&Verdict::Panic) {
                panic!("memory codec told to panic");
            }
            if verdicts.contains(&Verdict::Hang) {
                return futures::future::pending().await;
            }
            if verdicts.contains(&Verdict::RefuseRequest) {
                return SendOutcome::Refused(CamelError::processor("request refused"));
            }
            let mut accepted = lock(&self.log.accepted);
            SendOutcome::Answered(
                entries
                    .iter()
                    .zip(verdicts)
                    .map(|(e, v)| {
                        if v == Verdict::Fail {
                            Err(CamelError::processor(format!(
                                "entry {} failed",
                                e.idempotency_key
                            )))
                        } else {
                            accepted.push(e.clone());
                            Ok(Receipt::default())
                        }
                    })
                    .collect(),
            )
        })
    }

    fn group_forms_batch(&self) -> bool {
        self.one_group
    }

    fn strict_group_order(&self) -> bool {
        self.strict
    }
}
