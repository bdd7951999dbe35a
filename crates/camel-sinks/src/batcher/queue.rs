//! The batcher's queue: admission order per group, round-robin across tenants.
//!
//! Owned by the batcher task alone, so it needs no lock. Bounds are enforced before an
//! entry gets here (see `admission`), so this structure never grows past them.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use tokio::sync::oneshot;
use tokio::time::Instant;

use super::ready::Sendable;
use crate::codec::{Entry, EntryResult};

/// What a delivery's caller is told.
#[derive(Debug)]
pub(crate) enum Answer {
    /// The entry's result.
    Done(EntryResult),
    /// The batcher went away before the entry was in any request: hand it to the
    /// replacement (nothing was sent, so this cannot duplicate).
    Requeue(Entry),
}

/// The answer channel of one delivery.
pub(crate) type Reply = oneshot::Sender<Answer>;

/// One admitted delivery waiting for a request.
#[derive(Debug)]
pub(crate) struct Pending {
    pub(crate) entry: Entry,
    pub(crate) tenant: Arc<str>,
    pub(crate) reply: Reply,
}

#[derive(Debug)]
struct Queued {
    seq: u64,
    pending: Pending,
}

/// Per group: the admission numbers and times still queued (front = oldest), their
/// bytes, and whether a request carrying the group is in flight.
#[derive(Debug, Default)]
struct GroupState {
    queued: VecDeque<(u64, Instant)>,
    bytes: usize,
    in_flight: bool,
}

/// Limits of the batch being taken.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Take {
    pub(crate) max_entries: usize,
    pub(crate) max_bytes: usize,
    /// All entries of a batch share one group (Pub/Sub).
    pub(crate) one_group: bool,
}

/// Queued deliveries of one destination.
#[derive(Debug, Default)]
pub(crate) struct BatchQueue {
    tenants: HashMap<Arc<str>, VecDeque<Queued>>,
    /// Tenants with queued entries; the front one gives the next entry.
    ring: VecDeque<Arc<str>>,
    groups: HashMap<Arc<str>, GroupState>,
    next_seq: u64,
    len: usize,
    bytes: usize,
    /// Queued entries (and bytes) of groups with a request in flight: they cannot be in
    /// the next request, so they do not count towards a ready batch.
    blocked: usize,
    blocked_bytes: usize,
}

impl BatchQueue {
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// What could go into the next request: everything but the entries of groups with
    /// a request in flight.
    pub(crate) fn sendable(&self) -> Sendable {
        Sendable {
            entries: self.len - self.blocked,
            bytes: self.bytes - self.blocked_bytes,
        }
    }

    /// Appends an admitted delivery behind everything of its tenant and group; true
    /// when it is sendable (its group has no request in flight).
    pub(crate) fn push(&mut self, pending: Pending, now: Instant) -> bool {
        let seq = self.next_seq;
        self.next_seq += 1;
        let mut sendable = true;
        if let Some(group) = &pending.entry.group {
            let state = self.groups.entry(group.clone()).or_default();
            state.queued.push_back((seq, now));
            state.bytes += pending.entry.size;
            if state.in_flight {
                sendable = false;
                self.blocked += 1;
                self.blocked_bytes += pending.entry.size;
            }
        }
        self.len += 1;
        self.bytes += pending.entry.size;
        let tenant = pending.tenant.clone();
        let queue = self.tenants.entry(tenant.clone()).or_default();
        if queue.is_empty() {
            self.ring.push_back(tenant);
        }
        queue.push_back(Queued { seq, pending });
        sendable
    }

    /// Takes the next batch: one entry per tenant in turn, each the oldest of its group,
    /// skipping groups with a request in flight, until a limit is reached or nothing
    /// else is eligible.
    pub(crate) fn take(&mut self, take: Take) -> Vec<Pending> {
        let mut batch: Vec<Pending> = Vec::new();
        let mut bytes = 0usize;
        // The group the batch is bound to when `one_group` (outer None: not yet bound).
        let mut bound: Option<Option<Arc<str>>> = None;
        let mut misses = 0usize;
        while batch.len() < take.max_entries && misses < self.ring.len() {
            let Some(tenant) = self.ring.front().cloned() else {
                break;
            };
            let found = self.tenants.get(&tenant).and_then(|q| {
                q.iter()
                    .position(|e| self.eligible(e, take.one_group, bound.as_ref()))
            });
            let Some(at) = found else {
                self.ring.rotate_left(1);
                misses += 1;
                continue;
            };
            let Some(queue) = self.tenants.get_mut(&tenant) else {
                break;
            };
            let size = queue[at].pending.entry.size;
            if !batch.is_empty() && bytes + size > take.max_bytes {
                break;
            }
            let Some(item) = queue.remove(at) else {
                break;
            };
            self.ring.pop_front();
            if queue.is_empty() {
                self.tenants.remove(&tenant);
            } else {
                self.ring.push_back(tenant);
            }
            if let Some(group) = &item.pending.entry.group {
                if let Some(state) = self.groups.get_mut(group) {
                    state.queued.pop_front();
                    state.bytes -= size;
                }
            }
            if take.one_group && bound.is_none() {
                bound = Some(item.pending.entry.group.clone());
            }
            bytes += size;
            self.len -= 1;
            self.bytes -= size;
            batch.push(item.pending);
            misses = 0;
        }
        batch
    }

    fn eligible(&self, e: &Queued, one_group: bool, bound: Option<&Option<Arc<str>>>) -> bool {
        let group = &e.pending.entry.group;
        if one_group {
            if let Some(bound) = bound {
                if bound != group {
                    return false;
                }
            }
        }
        match group {
            None => true,
            Some(g) => self
                .groups
                .get(g)
                .is_some_and(|s| !s.in_flight && s.queued.front().map(|q| q.0) == Some(e.seq)),
        }
    }

    /// Marks the groups of a request in flight: their next entries wait for its answer.
    pub(crate) fn mark_in_flight(&mut self, groups: &[Arc<str>]) {
        for g in groups {
            let state = self.groups.entry(g.clone()).or_default();
            if !state.in_flight {
                state.in_flight = true;
                self.blocked += state.queued.len();
                self.blocked_bytes += state.bytes;
            }
        }
    }

    /// Releases the groups of an answered request; returns since when the oldest entry
    /// it unblocked has been waiting, if it unblocked any.
    pub(crate) fn release(&mut self, groups: &[Arc<str>]) -> Option<Instant> {
        let mut oldest: Option<Instant> = None;
        for g in groups {
            let Some(state) = self.groups.get_mut(g) else {
                continue;
            };
            if state.in_flight {
                state.in_flight = false;
                self.blocked -= state.queued.len();
                self.blocked_bytes -= state.bytes;
            }
            match state.queued.front() {
                None => {
                    self.groups.remove(g);
                }
                Some(&(_, at)) => oldest = Some(oldest.map_or(at, |o| o.min(at))),
            }
        }
        oldest
    }

    /// Drops every entry whose caller went away, returning them (for accounting).
    pub(crate) fn sweep(&mut self) -> Vec<Pending> {
        let mut dropped = Vec::new();
        let groups = &mut self.groups;
        for queue in self.tenants.values_mut() {
            let mut kept = VecDeque::with_capacity(queue.len());
            for item in queue.drain(..) {
                if item.pending.reply.is_closed() {
                    let size = item.pending.entry.size;
                    if let Some(g) = &item.pending.entry.group {
                        if let Some(state) = groups.get_mut(g) {
                            state.queued.retain(|s| s.0 != item.seq);
                            state.bytes -= size;
                            if state.in_flight {
                                self.blocked -= 1;
                                self.blocked_bytes -= size;
                            } else if state.queued.is_empty() {
                                groups.remove(g);
                            }
                        }
                    }
                    dropped.push(item.pending);
                } else {
                    kept.push_back(item);
                }
            }
            *queue = kept;
        }
        self.tenants.retain(|_, q| !q.is_empty());
        let tenants = &self.tenants;
        self.ring.retain(|t| tenants.contains_key(t));
        for p in &dropped {
            self.len -= 1;
            self.bytes -= p.entry.size;
        }
        dropped
    }

    /// Empties the queue of a batcher that ended abnormally, splitting what it held
    /// into entries a replacement may send (`.0`) and entries whose callers must fail
    /// (`.1`): a group's queued entries fail while a request of the group was in flight
    /// (its outcome is unknown, and sending them would overtake it), and all but the
    /// oldest fail otherwise (their callers hand entries over concurrently, in no set
    /// order). Entries without a group are always handed over.
    pub(crate) fn split_after_death(&mut self) -> (Vec<Pending>, Vec<Pending>) {
        let mut handed = Vec::new();
        let mut failed = Vec::new();
        let mut pending: Vec<Queued> = self
            .tenants
            .drain()
            .flat_map(|(_, q)| q.into_iter())
            .collect();
        pending.sort_by_key(|q| q.seq);
        for item in pending {
            let safe = match &item.pending.entry.group {
                None => true,
                Some(g) => self.groups.get(g).is_none_or(|s| {
                    !s.in_flight && s.queued.front().map(|q| q.0) == Some(item.seq)
                }),
            };
            if safe {
                handed.push(item.pending);
            } else {
                failed.push(item.pending);
            }
        }
        self.reset();
        (handed, failed)
    }

    fn reset(&mut self) {
        self.tenants.clear();
        self.ring.clear();
        self.groups.clear();
        self.len = 0;
        self.bytes = 0;
        self.blocked = 0;
        self.blocked_bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::EntryMeta;
    use bytes::Bytes;

    fn pending(tenant: &str, group: Option<&str>, key: &str) -> (Pending, Waiting) {
        let (tx, rx) = oneshot::channel();
        let meta = EntryMeta {
            group: group.map(Into::into),
            idempotency_key: key.into(),
        };
        let entry = Entry::new(Bytes::from(key.to_string()), Vec::new(), meta);
        (
            Pending {
                entry,
                tenant: tenant.into(),
                reply: tx,
            },
            rx,
        )
    }

    type Waiting = oneshot::Receiver<Answer>;

    /// A queue of one tenant's entries `(group, key)`, and their answer channels.
    fn grouped(items: &[(&str, &str)]) -> (BatchQueue, Vec<Waiting>) {
        let mut q = BatchQueue::default();
        let mut rxs = Vec::new();
        for (g, k) in items {
            let (p, rx) = pending("t", Some(g), k);
            q.push(p, Instant::now());
            rxs.push(rx);
        }
        (q, rxs)
    }

    fn keys(batch: &[Pending]) -> Vec<String> {
        batch
            .iter()
            .map(|p| p.entry.idempotency_key.to_string())
            .collect()
    }

    const TEN: Take = Take {
        max_entries: 10,
        max_bytes: 1000,
        one_group: false,
    };

    #[test]
    fn tenants_alternate() {
        let mut q = BatchQueue::default();
        let mut rxs = Vec::new();
        for i in 0..5 {
            let (p, rx) = pending("a", None, &format!("a{i}"));
            q.push(p, Instant::now());
            rxs.push(rx);
        }
        let (p, _rx) = pending("b", None, "b0");
        q.push(p, Instant::now());
        let batch = q.take(Take {
            max_entries: 3,
            ..TEN
        });
        assert_eq!(keys(&batch), ["a0", "b0", "a1"]);
        assert_eq!(q.len(), 3);
    }

    #[test]
    fn group_in_flight_blocks_its_later_entries_only() {
        let (mut q, _rxs) = grouped(&[("g", "1"), ("h", "2"), ("g", "3")]);
        q.mark_in_flight(&["g".into()]);
        assert_eq!(keys(&q.take(TEN)), ["2"]);
        q.release(&["g".into()]);
        assert_eq!(keys(&q.take(TEN)), ["1", "3"]);
        assert!(q.is_empty());
    }

    #[test]
    fn one_group_per_batch_when_asked() {
        let (mut q, _rxs) = grouped(&[("g", "1"), ("h", "2"), ("g", "3")]);
        let one = Take {
            one_group: true,
            ..TEN
        };
        assert_eq!(keys(&q.take(one)), ["1", "3"]);
        assert_eq!(keys(&q.take(one)), ["2"]);
    }

    #[test]
    fn bytes_limit_closes_a_batch() {
        let mut q = BatchQueue::default();
        let mut rxs = Vec::new();
        for k in ["aaaa", "bbbb", "cccc"] {
            let (p, rx) = pending("t", None, k);
            q.push(p, Instant::now());
            rxs.push(rx);
        }
        assert_eq!(q.bytes(), 12);
        let batch = q.take(Take {
            max_bytes: 9,
            ..TEN
        });
        assert_eq!(keys(&batch), ["aaaa", "bbbb"]);
        assert_eq!(q.bytes(), 4);
    }

    #[test]
    fn entries_behind_a_request_in_flight_are_not_sendable() {
        let (mut q, _rxs) = grouped(&[("g", "1"), ("g", "2"), ("h", "3")]);
        assert_eq!(q.sendable().entries, 3);
        assert_eq!(
            keys(&q.take(Take {
                max_entries: 1,
                ..TEN
            })),
            ["1"]
        );
        q.mark_in_flight(&["g".into()]);
        // "2" waits behind "1"; only "3" could go now.
        assert_eq!(
            q.sendable(),
            Sendable {
                entries: 1,
                bytes: 1
            }
        );
        let (p, _rx) = pending("t", Some("g"), "4");
        assert!(!q.push(p, Instant::now()), "g is in flight");
        let (p, _rx2) = pending("t", None, "5");
        assert!(q.push(p, Instant::now()));
        assert_eq!(q.sendable().entries, 2);
        let t = Instant::now();
        assert!(q.release(&["g".into()]).is_some_and(|at| at <= t));
        assert_eq!(
            q.sendable(),
            Sendable {
                entries: 4,
                bytes: 4
            }
        );
        assert_eq!(q.sendable().entries, q.len());
    }

    #[test]
    fn after_death_only_entries_that_cannot_overtake_their_group_are_handed_over() {
        let (mut q, _rxs) = grouped(&[("g", "g1"), ("g", "g2"), ("h", "h1"), ("h", "h2")]);
        let (p, _rx) = pending("t", None, "n1");
        q.push(p, Instant::now());
        assert_eq!(
            keys(&q.take(Take {
                max_entries: 1,
                ..TEN
            })),
            ["g1"]
        );
        q.mark_in_flight(&["g".into()]);
        let (handed, failed) = q.split_after_death();
        assert_eq!(keys(&handed), ["h1", "n1"]);
        assert_eq!(keys(&failed), ["g2", "h2"]);
        assert!(q.is_empty());
        assert_eq!(q.sendable().entries, 0);
    }

    #[test]
    fn sweep_drops_abandoned_entries_and_unblocks_their_group() {
        let mut q = BatchQueue::default();
        let (p1, rx1) = pending("t", Some("g"), "1");
        let (p2, _rx2) = pending("t", Some("g"), "2");
        q.push(p1, Instant::now());
        q.push(p2, Instant::now());
        drop(rx1);
        let dropped = q.sweep();
        assert_eq!(keys(&dropped), ["1"]);
        assert_eq!(keys(&q.take(TEN)), ["2"]);
    }
}
