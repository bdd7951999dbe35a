//! The producer's side of a batcher: admission against the bounds, then hand-off.
//!
//! Bounds are reserved with atomics before an entry is sent to the batcher task, so a
//! delivery that does not fit is refused at once, without a round trip, and the channel
//! to the task can never hold more than the bounds allow.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use camel_api::RetryReason;
use metrics::Counter;
use rand::Rng;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::config::BatchConfig;
use super::error::SinkError;
use super::queue::{Answer, Pending};
use crate::codec::Entry;

/// What one batcher shares with the producers that feed it.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) label: Arc<str>,
    /// The registry's `instance` label.
    pub(crate) instance: Arc<str>,
    config: BatchConfig,
    /// Entries admitted and not yet taken into a request (in the channel or queued).
    queued: AtomicUsize,
    queued_bytes: AtomicUsize,
    tenants: Mutex<HashMap<Arc<str>, usize>>,
    /// Callers that gave up waiting since the last sweep.
    pub(crate) abandoned: AtomicUsize,
    pub(crate) requests_in_flight: AtomicUsize,
    /// Cancelled when the batcher task has ended (for any reason).
    pub(crate) finished: CancellationToken,
    refused: [Counter; 3],
    /// Refusals per tenant since the batcher started (see [`TENANTS_COUNTED`]). Kept
    /// here rather than as a metric label: tenant names come from the data, and a label
    /// per tenant could grow without bound in the exporter.
    refused_by_tenant: Mutex<HashMap<Arc<str>, u64>>,
    /// Holds the batcher between deciding it is idle and closing its intake, so a test
    /// can put an entry in the channel in that window (as another thread can).
    #[cfg(test)]
    pub(crate) idle_gate: super::tests::IdleGate,
}

/// How many distinct tenants' refusals a batcher counts by name; refusals of further
/// tenants are counted under [`OTHER_TENANTS`].
pub const TENANTS_COUNTED: usize = 1_000;

/// The name under which refusals of tenants past [`TENANTS_COUNTED`] are counted.
pub const OTHER_TENANTS: &str = "(other tenants)";

impl Shared {
    pub(crate) fn new(label: Arc<str>, instance: Arc<str>, config: BatchConfig) -> Self {
        let refused = [RetryReason::Entries, RetryReason::Bytes, RetryReason::Tenant].map(|r| {
            metrics::counter!("camel_sink_batch_refused_total", "sink" => label.to_string(), "instance" => instance.to_string(), "reason" => r.to_string())
        });
        Shared {
            label,
            instance,
            config,
            queued: AtomicUsize::new(0),
            queued_bytes: AtomicUsize::new(0),
            tenants: Mutex::new(HashMap::new()),
            abandoned: AtomicUsize::new(0),
            requests_in_flight: AtomicUsize::new(0),
            finished: CancellationToken::new(),
            refused,
            refused_by_tenant: Mutex::new(HashMap::new()),
            #[cfg(test)]
            idle_gate: super::tests::IdleGate::default(),
        }
    }

    fn reserve(&self, tenant: &Arc<str>, size: usize) -> Result<(), RetryReason> {
        if self.queued.fetch_add(1, Ordering::AcqRel) >= self.config.queue_max {
            self.queued.fetch_sub(1, Ordering::AcqRel);
            return Err(RetryReason::Entries);
        }
        let before = self.queued_bytes.fetch_add(size, Ordering::AcqRel);
        if before + size > self.config.queue_max_bytes {
            self.undo(size);
            return Err(RetryReason::Bytes);
        }
        let mut tenants = self.tenants.lock().unwrap_or_else(|p| p.into_inner());
        let count = tenants.entry(tenant.clone()).or_insert(0);
        if *count >= self.config.tenant_max {
            drop(tenants);
            self.undo(size);
            return Err(RetryReason::Tenant);
        }
        *count += 1;
        Ok(())
    }

    fn undo(&self, size: usize) {
        self.queued.fetch_sub(1, Ordering::AcqRel);
        self.queued_bytes.fetch_sub(size, Ordering::AcqRel);
    }

    /// Gives back the reservations of entries that left the queue (sent, swept, failed).
    pub(crate) fn release<'a>(&self, entries: impl IntoIterator<Item = &'a Pending>) {
        let mut tenants = self.tenants.lock().unwrap_or_else(|p| p.into_inner());
        for p in entries {
            self.undo(p.entry.size);
            if let Some(count) = tenants.get_mut(&p.tenant) {
                *count -= 1;
                if *count == 0 {
                    tenants.remove(&p.tenant);
                }
            }
        }
    }

    fn refused_by_tenant(&self) -> Vec<(String, u64)> {
        let by_tenant = self
            .refused_by_tenant
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let mut counts: Vec<(String, u64)> =
            by_tenant.iter().map(|(t, n)| (t.to_string(), *n)).collect();
        counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        counts
    }

    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

    pub(crate) fn queued_bytes(&self) -> usize {
        self.queued_bytes.load(Ordering::Acquire)
    }

    fn refuse(&self, reason: RetryReason, tenant: &Arc<str>) -> SinkError {
        let index = match reason {
            RetryReason::Entries => 0,
            RetryReason::Bytes => 1,
            _ => 2,
        };
        self.refused[index].increment(1);
        {
            let mut by_tenant = self
                .refused_by_tenant
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let key = if by_tenant.contains_key(tenant) || by_tenant.len() < TENANTS_COUNTED {
                tenant.clone()
            } else {
                Arc::from(OTHER_TENANTS)
            };
            *by_tenant.entry(key).or_insert(0) += 1;
        }
        tracing::debug!(sink = %self.label, instance = %self.instance, %reason, "batch queue refused a delivery");
        let cap = self.config.retry_after_max.as_millis().max(1) as u64;
        SinkError::QueueFull {
            sink: self.label.to_string(),
            reason,
            retry_after_ms: rand::thread_rng().gen_range(0..=cap),
        }
    }
}

/// A snapshot of one batcher's load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatcherStats {
    /// The sink label (`codec:destination#digest`).
    pub sink: String,
    /// Entries admitted and not yet in a request.
    pub queued: usize,
    /// Their bytes.
    pub queued_bytes: usize,
    /// Requests in flight.
    pub requests_in_flight: usize,
    /// Deliveries refused at once (`RetryAfter`), per tenant, most refused first; at
    /// most [`TENANTS_COUNTED`] tenants by name, the rest under [`OTHER_TENANTS`].
    pub refused_by_tenant: Vec<(String, u64)>,
}

/// The outcome of handing an entry to a batcher.
#[derive(Debug)]
pub(crate) enum Submit {
    /// Admitted: the receiver answers when the entry's request does.
    Queued(oneshot::Receiver<Answer>),
    /// A bound was reached; nothing was queued.
    Refused(SinkError),
    /// The batcher is stopping; the entry comes back for the replacement.
    Closed(Entry),
}

/// A live batcher, as the registry and producers see it.
#[derive(Debug)]
pub(crate) struct BatcherHandle {
    tx: mpsc::UnboundedSender<Pending>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) generation: u64,
}

impl BatcherHandle {
    pub(crate) fn new(
        tx: mpsc::UnboundedSender<Pending>,
        shared: Arc<Shared>,
        generation: u64,
    ) -> Self {
        BatcherHandle {
            tx,
            shared,
            generation,
        }
    }

    /// True once the batcher stopped taking entries.
    pub(crate) fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    pub(crate) fn submit(&self, entry: Entry, tenant: Arc<str>) -> Submit {
        if self.tx.is_closed() {
            return Submit::Closed(entry);
        }
        if let Err(reason) = self.shared.reserve(&tenant, entry.size) {
            return Submit::Refused(self.shared.refuse(reason, &tenant));
        }
        let (reply, rx) = oneshot::channel();
        match self.tx.send(Pending {
            entry,
            tenant,
            reply,
        }) {
            Ok(()) => Submit::Queued(rx),
            Err(mpsc::error::SendError(pending)) => {
                self.shared.release([&pending]);
                Submit::Closed(pending.entry)
            }
        }
    }

    pub(crate) fn stats(&self) -> BatcherStats {
        BatcherStats {
            sink: self.shared.label.to_string(),
            queued: self.shared.queued(),
            queued_bytes: self.shared.queued_bytes(),
            requests_in_flight: self.shared.requests_in_flight.load(Ordering::Acquire),
            refused_by_tenant: self.shared.refused_by_tenant(),
        }
    }
}

/// Counts a caller that stopped waiting, so the next flush sweeps its entry away.
#[derive(Debug)]
pub(crate) struct AbandonGuard {
    shared: Option<Arc<Shared>>,
}

impl AbandonGuard {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        AbandonGuard {
            shared: Some(shared),
        }
    }

    /// The answer arrived: nothing to sweep.
    pub(crate) fn disarm(mut self) {
        self.shared = None;
    }
}

impl Drop for AbandonGuard {
    fn drop(&mut self) {
        if let Some(shared) = &self.shared {
            shared.abandoned.fetch_add(1, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_counted_per_tenant_up_to_a_bound() {
        let shared = Shared::new("s".into(), "i".into(), BatchConfig::default());
        for t in 0..TENANTS_COUNTED + 5 {
            let tenant: Arc<str> = format!("t{t}").into();
            let _ = shared.refuse(RetryReason::Tenant, &tenant);
        }
        // A tenant already counted keeps its own count past the bound.
        let _ = shared.refuse(RetryReason::Entries, &Arc::from("t0"));
        let counts = shared.refused_by_tenant();
        assert_eq!(counts.len(), TENANTS_COUNTED + 1);
        assert_eq!(counts[0], (OTHER_TENANTS.to_string(), 5));
        assert_eq!(counts[1], ("t0".to_string(), 2));
    }
}
