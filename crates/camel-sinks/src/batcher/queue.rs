//! The batcher's queue: admission order per group, round-robin across tenants.
//!
//! Owned by the batcher task alone, so it needs no lock. Bounds are enforced before an
//! entry gets here (see `admission`), so this structure never grows past them.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use camel_api::CamelError;
use tokio::sync::oneshot;

use crate::codec::Entry;

/// What a delivery's caller is told.
#[derive(Debug)]
pub(crate) enum Answer {
    /// The entry's result.
    Done(Result<(), CamelError>),
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

/// Per group: the admission numbers still queued (front = oldest) and whether a
/// request carrying the group is in flight.
#[derive(Debug, Default)]
struct GroupState {
    queued: VecDeque<u64>,
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
}

impl BatchQueue {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends an admitted delivery behind everything of its tenant and group.
    pub(crate) fn push(&mut self, pending: Pending) {
        let seq = self.next_seq;
        self.next_seq += 1;
        if let Some(group) = &pending.entry.group {
            self.groups
                .entry(group.clone())
                .or_default()
                .queued
                .push_back(seq);
        }
        self.len += 1;
        self.bytes += pending.entry.size;
        let tenant = pending.tenant.clone();
        let queue = self.tenants.entry(tenant.clone()).or_default();
        if queue.is_empty() {
            self.ring.push_back(tenant);
        }
        queue.push_back(Queued { seq, pending });
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
                .is_some_and(|s| !s.in_flight && s.queued.front() == Some(&e.seq)),
        }
    }

    /// True when `entry` could be taken even if everything queued is blocked: it has
    /// no group, or its group has nothing queued and nothing in flight.
    pub(crate) fn opens_new_group(&self, entry: &Entry) -> bool {
        entry
            .group
            .as_ref()
            .is_none_or(|g| !self.groups.contains_key(g))
    }

    /// Marks the groups of a request in flight: their next entries wait for its answer.
    pub(crate) fn mark_in_flight(&mut self, groups: &[Arc<str>]) {
        for g in groups {
            self.groups.entry(g.clone()).or_default().in_flight = true;
        }
    }

    /// Releases the groups of an answered request.
    pub(crate) fn release(&mut self, groups: &[Arc<str>]) {
        for g in groups {
            if let Some(state) = self.groups.get_mut(g) {
                state.in_flight = false;
                if state.queued.is_empty() {
                    self.groups.remove(g);
                }
            }
        }
    }

    /// Drops every entry whose caller went away, returning them (for accounting).
    pub(crate) fn sweep(&mut self) -> Vec<Pending> {
        let mut dropped = Vec::new();
        let groups = &mut self.groups;
        for queue in self.tenants.values_mut() {
            let mut kept = VecDeque::with_capacity(queue.len());
            for item in queue.drain(..) {
                if item.pending.reply.is_closed() {
                    if let Some(g) = &item.pending.entry.group {
                        if let Some(state) = groups.get_mut(g) {
                            state.queued.retain(|s| *s != item.seq);
                            if state.queued.is_empty() && !state.in_flight {
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

    /// Removes everything (the batcher is going away).
    pub(crate) fn drain(&mut self) -> Vec<Pending> {
        let all = self
            .tenants
            .drain()
            .flat_map(|(_, q)| q.into_iter().map(|i| i.pending))
            .collect();
        self.ring.clear();
        self.groups.clear();
        self.len = 0;
        self.bytes = 0;
        all
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
            q.push(p);
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
            q.push(p);
            rxs.push(rx);
        }
        let (p, _rx) = pending("b", None, "b0");
        q.push(p);
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
            q.push(p);
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
    fn sweep_drops_abandoned_entries_and_unblocks_their_group() {
        let mut q = BatchQueue::default();
        let (p1, rx1) = pending("t", Some("g"), "1");
        let (p2, _rx2) = pending("t", Some("g"), "2");
        q.push(p1);
        q.push(p2);
        drop(rx1);
        let dropped = q.sweep();
        assert_eq!(keys(&dropped), ["1"]);
        assert_eq!(keys(&q.take(TEN)), ["2"]);
    }
}
