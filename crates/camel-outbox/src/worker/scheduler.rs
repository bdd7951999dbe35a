//! The in-memory plan of one partition: which message may go out next.
//!
//! The worker reads its partition by id (cheap: one index range) and feeds the rows here;
//! this decides what is dispatched, keeping the order rules without asking the database
//! for the head of every group (slow). Invariants:
//!
//! - per group, at most one message is in flight, and the queue holds a contiguous run of
//!   the group's pending rows in id order: message n+1 is never handed out before n is
//!   confirmed (or dead, or discarded);
//! - a group that failed is *blocked*: nothing of it is in memory except its timer; its
//!   rows from the failed head on are re-read from the database when the timer fires, so a
//!   later message can never overtake the head;
//! - a group with more pending rows than fit in memory has an *overflow* mark (`from`):
//!   rows of it with id ≥ `from` are not in memory, the frontier scan excludes the group,
//!   and a catch-up read by group fetches them when the queue empties. So neither a
//!   blocked head nor a long backlog costs the other groups a scan through its rows;
//! - memory is bounded: the frontier scan pauses while `buffer_cap` rows are buffered.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use crate::config::Ordering;
use crate::message::StoredMessage;
use crate::store::Position;

/// The key every message has in `total` mode.
const TOTAL: &str = "";

#[derive(Debug, Default)]
struct Group {
    queue: VecDeque<StoredMessage>,
    in_flight: Option<i64>,
    blocked: bool,
    overflow_from: Option<i64>,
    in_ready: bool,
    in_fetch: bool,
}

/// A read the worker must make before the scheduler can go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Fetch {
    /// Rows of a group (every row in `total` mode) from id `from` up to the frontier.
    Group {
        /// The group.
        key: Arc<str>,
        /// The group's filter: `None` reads every row (`total` mode).
        filter: Option<Arc<str>>,
        /// The first id to read.
        from: i64,
    },
    /// One unordered message whose retry time has come.
    Single(i64),
}

/// What the frontier scan must leave out.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Exclusion {
    /// Rows of these groups (they are blocked or overflowing).
    Groups(Vec<String>),
    /// Everything: in `total` mode an overflowing queue is refilled by catch-up reads.
    All,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Timer {
    Group(Arc<str>),
    Single,
}

/// Maps keyed by row id. Ids come from the database's sequence, not from users, so they
/// need no DoS-resistant (SipHash) hashing, and the scheduler looks ids up several times
/// per relayed row. Group keys are user data and keep std's hasher.
type IdMap<V> = HashMap<i64, V, foldhash::fast::RandomState>;
type IdSet = HashSet<i64, foldhash::fast::RandomState>;

/// The scheduler of one partition (owned by its worker; no locking).
#[derive(Debug)]
pub(crate) struct Scheduler {
    ordering: Ordering,
    max_inflight: usize,
    group_cap: usize,
    buffer_cap: usize,
    groups: HashMap<Arc<str>, Group>,
    ready: VecDeque<Arc<str>>,
    fetches: VecDeque<Fetch>,
    unordered: VecDeque<StoredMessage>,
    timers: BTreeSet<(i64, i64)>,
    timer_of: IdMap<Timer>,
    known: IdSet,
    inflight: IdMap<Option<Arc<str>>>,
    to_delete: Vec<i64>,
    oldest_delete: Option<tokio::time::Instant>,
    buffered: usize,
    frontier: Position,
    prefer_unordered: bool,
}

impl Scheduler {
    pub(crate) fn new(ordering: Ordering, max_inflight: usize, batch: usize) -> Self {
        Scheduler {
            ordering,
            max_inflight: max_inflight.max(1),
            group_cap: batch.max(1),
            buffer_cap: (batch * 4).max(max_inflight * 2),
            groups: HashMap::new(),
            ready: VecDeque::new(),
            fetches: VecDeque::new(),
            unordered: VecDeque::new(),
            timers: BTreeSet::new(),
            timer_of: IdMap::default(),
            known: IdSet::default(),
            inflight: IdMap::default(),
            to_delete: Vec::new(),
            oldest_delete: None,
            buffered: 0,
            frontier: Position::default(),
            prefer_unordered: false,
        }
    }

    /// The position the frontier scan has read up to.
    pub(crate) fn frontier(&self) -> Position {
        self.frontier
    }

    /// The frontier scan has read every row up to `to`.
    pub(crate) fn advance(&mut self, to: Position) {
        self.frontier = self.frontier.max(to);
    }

    /// True while a whole batch more fits under the memory bound. (Scanning whenever one
    /// row fits would read a batch per dispatched message.)
    pub(crate) fn scan_allowed(&self) -> bool {
        self.buffered + self.group_cap <= self.buffer_cap && !self.total_overflowing()
    }

    /// In `total` mode an overflowing queue is refilled by catch-up reads, not scans.
    fn total_overflowing(&self) -> bool {
        self.ordering == Ordering::Total
            && self
                .groups
                .get(TOTAL)
                .is_some_and(|g| g.overflow_from.is_some())
    }

    /// Messages handed out and not yet answered.
    #[cfg(test)]
    pub(crate) fn in_flight(&self) -> usize {
        self.inflight.len()
    }

    /// What the frontier scan must skip.
    pub(crate) fn exclusion(&self) -> Exclusion {
        if self.ordering == Ordering::Total {
            return if self.total_overflowing() {
                Exclusion::All
            } else {
                Exclusion::Groups(Vec::new())
            };
        }
        Exclusion::Groups(
            self.groups
                .iter()
                .filter(|(_, g)| g.overflow_from.is_some())
                .map(|(k, _)| k.to_string())
                .collect(),
        )
    }

    fn key_of(&self, m: &StoredMessage) -> Option<Arc<str>> {
        match self.ordering {
            Ordering::Total => Some(TOTAL.into()),
            Ordering::None => None,
            Ordering::Group => m.group_key.as_deref().map(Arc::from),
        }
    }

    /// Takes rows read by the frontier scan or a sweep (which of them moves the
    /// frontier is the caller's business: see [`Scheduler::advance`]).
    pub(crate) fn accept(&mut self, rows: impl IntoIterator<Item = StoredMessage>, now: i64) {
        for m in rows {
            if self.known.contains(&m.id) {
                continue;
            }
            match self.key_of(&m) {
                None => self.accept_unordered(m, now),
                Some(k) => self.accept_grouped(k, m, now, true),
            }
        }
    }

    fn accept_unordered(&mut self, m: StoredMessage, now: i64) {
        self.known.insert(m.id);
        match m.retry_at_ms {
            Some(at) if at > now => self.set_timer(at, m.id, Timer::Single),
            _ => {
                self.buffered += 1;
                self.unordered.push_back(m);
            }
        }
    }

    fn accept_grouped(&mut self, key: Arc<str>, m: StoredMessage, now: i64, capped: bool) {
        let cap = self.group_cap;
        let g = self.groups.entry(key.clone()).or_default();
        if g.overflow_from.is_some_and(|f| m.id >= f) {
            return;
        }
        if g.blocked || (capped && g.queue.len() >= cap) {
            g.overflow_from = Some(g.overflow_from.map_or(m.id, |f| f.min(m.id)));
            return;
        }
        let head = g.in_flight.is_none() && g.queue.front().is_none_or(|h| m.id < h.id);
        if head && m.retry_at_ms.is_some_and(|at| at > now) {
            // Published before a restart and failed: the group waits for its retry time.
            let at = m.retry_at_ms.unwrap_or(now);
            self.block(&key, m.id, at);
            return;
        }
        let pos = g.queue.partition_point(|x| x.id < m.id);
        self.known.insert(m.id);
        self.buffered += 1;
        g.queue.insert(pos, m);
        self.settle(&key);
    }

    /// Takes the rows of a catch-up read; `complete` when fewer than the limit came back.
    pub(crate) fn on_fetched(
        &mut self,
        fetch: &Fetch,
        rows: Vec<StoredMessage>,
        complete: bool,
        now: i64,
    ) {
        match fetch {
            Fetch::Single(id) => {
                self.known.remove(id);
                // A message read before its retry time (an admin change re-reads early)
                // is held again until then.
                for m in rows {
                    self.accept_unordered(m, now);
                }
            }
            Fetch::Group { key, .. } => {
                let Some(g) = self.groups.get_mut(key) else {
                    return;
                };
                g.in_fetch = false;
                g.overflow_from = if complete {
                    None
                } else {
                    rows.last().map(|m| m.id + 1)
                };
                for m in rows {
                    if !self.known.contains(&m.id) {
                        self.accept_grouped(key.clone(), m, now, false);
                    }
                }
                self.settle(key);
            }
        }
    }

    /// True while catch-up reads are waiting to be made.
    pub(crate) fn has_fetches(&self) -> bool {
        !self.fetches.is_empty()
    }

    /// The next catch-up read to make, if any.
    pub(crate) fn next_fetch(&mut self) -> Option<Fetch> {
        self.fetches.pop_front()
    }

    /// Hands out the next message, or `None` when nothing may go out now (`now`: the
    /// clock in ms, against which a queued row's retry time is checked).
    pub(crate) fn next_dispatch(&mut self, now: i64) -> Option<StoredMessage> {
        if self.inflight.len() >= self.max_inflight {
            return None;
        }
        self.prefer_unordered = !self.prefer_unordered;
        if self.prefer_unordered {
            if let Some(m) = self.take_unordered() {
                return Some(m);
            }
        }
        while let Some(key) = self.ready.pop_front() {
            let Some(g) = self.groups.get_mut(&key) else {
                continue;
            };
            g.in_ready = false;
            if g.in_flight.is_some() || g.blocked {
                continue;
            }
            let due = match g.queue.front() {
                None => {
                    self.settle(&key);
                    continue;
                }
                Some(m) => m.retry_at_ms.filter(|at| *at > now).map(|at| (m.id, at)),
            };
            // Only a revived message (`retry_dead`, which keeps its lower id) can stand in
            // front of a row that failed: that row, now the head, waits for its time.
            if let Some((id, at)) = due {
                self.block(&key, id, at);
                continue;
            }
            let Some(m) = g.queue.pop_front() else {
                continue;
            };
            g.in_flight = Some(m.id);
            self.buffered -= 1;
            self.inflight.insert(m.id, Some(key));
            return Some(m);
        }
        self.take_unordered()
    }

    fn take_unordered(&mut self) -> Option<StoredMessage> {
        let m = self.unordered.pop_front()?;
        self.buffered -= 1;
        self.inflight.insert(m.id, None);
        Some(m)
    }

    /// The relay confirmed `id`: it is to be deleted, and its group may go on.
    pub(crate) fn on_success(&mut self, id: i64) {
        self.to_delete.push(id);
        self.oldest_delete
            .get_or_insert_with(tokio::time::Instant::now);
        if let Some(Some(key)) = self.inflight.remove(&id) {
            self.finish_in_flight(&key);
        }
    }

    /// `id` left the table without a confirmation (dead, or discarded meanwhile).
    pub(crate) fn on_gone(&mut self, id: i64) {
        self.known.remove(&id);
        if let Some(Some(key)) = self.inflight.remove(&id) {
            self.finish_in_flight(&key);
        }
    }

    /// `id` failed and waits until `retry_at`; its group is blocked until then.
    pub(crate) fn on_failure(&mut self, id: i64, retry_at: i64) {
        match self.inflight.remove(&id) {
            Some(Some(key)) => {
                if let Some(g) = self.groups.get_mut(&key) {
                    g.in_flight = None;
                }
                self.known.remove(&id);
                self.block(&key, id, retry_at);
            }
            Some(None) => self.set_timer(retry_at, id, Timer::Single),
            None => {}
        }
    }

    fn finish_in_flight(&mut self, key: &Arc<str>) {
        if let Some(g) = self.groups.get_mut(key) {
            g.in_flight = None;
        }
        self.settle(key);
    }

    /// Drops a group's rows from memory and holds it until `until`; its rows from `head`
    /// on are read again when the timer fires.
    fn block(&mut self, key: &Arc<str>, head: i64, until: i64) {
        let g = self.groups.entry(key.clone()).or_default();
        for m in g.queue.drain(..) {
            self.known.remove(&m.id);
            self.buffered -= 1;
        }
        g.blocked = true;
        g.overflow_from = Some(g.overflow_from.map_or(head, |f| f.min(head)));
        self.set_timer(until, head, Timer::Group(key.clone()));
    }

    fn set_timer(&mut self, at: i64, id: i64, timer: Timer) {
        if let Some(Timer::Single) = self.timer_of.get(&id) {
            return;
        }
        self.timers.insert((at, id));
        self.timer_of.insert(id, timer);
    }

    /// The earliest retry time held, if any.
    pub(crate) fn next_due(&self) -> Option<i64> {
        self.timers.first().map(|t| t.0)
    }

    /// An admin change happened (`discard`, `retry_dead`): releases everything held, to
    /// be read again now, and reads every held or overflowing group again from its first
    /// row. A revived message keeps its old id, below the group's overflow mark (the
    /// head held in backoff, say), where neither a scan nor a catch-up read from the mark
    /// would ever find it. A head still in backoff is held again when it is read.
    pub(crate) fn on_admin_change(&mut self) {
        for g in self.groups.values_mut() {
            if g.overflow_from.is_some() {
                g.overflow_from = Some(i64::MIN);
            }
        }
        for f in &mut self.fetches {
            if let Fetch::Group { from, .. } = f {
                *from = i64::MIN;
            }
        }
        self.fire_due(i64::MAX);
    }

    /// Releases every group and message whose retry time is ≤ `now`.
    pub(crate) fn fire_due(&mut self, now: i64) {
        while let Some(&(at, id)) = self.timers.first() {
            if at > now {
                break;
            }
            self.timers.pop_first();
            match self.timer_of.remove(&id) {
                Some(Timer::Group(key)) => {
                    if let Some(g) = self.groups.get_mut(&key) {
                        g.blocked = false;
                    }
                    self.settle(&key);
                }
                Some(Timer::Single) => self.fetches.push_back(Fetch::Single(id)),
                None => {}
            }
        }
    }

    /// Puts a group where it belongs after a change: ready, waiting for a catch-up read,
    /// or forgotten when nothing of it is left.
    fn settle(&mut self, key: &Arc<str>) {
        let Some(g) = self.groups.get_mut(key) else {
            return;
        };
        if g.blocked || g.in_flight.is_some() && g.queue.is_empty() {
            return;
        }
        if !g.queue.is_empty() {
            if g.in_flight.is_none() && !g.in_ready {
                g.in_ready = true;
                self.ready.push_back(key.clone());
            }
            return;
        }
        match g.overflow_from {
            Some(from) if !g.in_fetch => {
                g.in_fetch = true;
                let filter = (self.ordering != Ordering::Total).then(|| key.clone());
                self.fetches.push_back(Fetch::Group {
                    key: key.clone(),
                    filter,
                    from,
                });
            }
            Some(_) => {}
            None => {
                if !g.in_ready {
                    self.groups.remove(key);
                }
            }
        }
    }

    /// When the oldest confirmation still waiting for its delete came in.
    pub(crate) fn oldest_delete(&self) -> Option<tokio::time::Instant> {
        self.oldest_delete
    }

    /// Confirmed ids waiting to be deleted.
    pub(crate) fn pending_deletes(&self) -> usize {
        self.to_delete.len()
    }

    /// Takes the confirmed ids to delete.
    pub(crate) fn take_deletes(&mut self) -> Vec<i64> {
        self.oldest_delete = None;
        std::mem::take(&mut self.to_delete)
    }

    /// The ids are deleted: forget them.
    pub(crate) fn on_deleted(&mut self, ids: &[i64]) {
        for id in ids {
            self.known.remove(id);
        }
    }
}

#[cfg(test)]
#[path = "scheduler_tests.rs"]
mod tests;
