//! Batch mode: collect exchanges per correlation group until the batch is full or its
//! timeout expires, then release the batch sorted by its sort key.
//!
//! Sorting is numeric for numbers ([`SortKey`]), stable, and — unless duplicates are
//! allowed — keeps only the last exchange that arrived for each key.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use camel_api::Exchange;
use tokio::time::Instant;

use super::config::BatchConfig;
use super::key::{BatchKey, SortKey};
use super::policy::{DropReason, PolicyState, PolicyStateKind, Release, ResequencePolicy};

type GroupId = Option<Arc<str>>;

/// A new batch reserves room for at most this many entries up front; larger batches grow.
const MAX_PREALLOCATED: usize = 1024;

/// One open batch.
#[derive(Debug)]
struct Batch {
    /// Tells a batch apart from an earlier one of the same group whose deadline is still
    /// queued.
    generation: u64,
    /// Sort key, arrival position within the batch (so an unstable sort keeps arrival
    /// order among equal keys without a scratch allocation), exchange.
    entries: Vec<(SortKey, u64, Exchange)>,
}

/// What a batch policy hands to its replacement on a hot swap: open batches, oldest first.
#[derive(Debug, Default)]
pub(crate) struct BatchState {
    pub(crate) batches: Vec<Vec<(BatchKey, Exchange)>>,
}

/// The batch-mode policy.
#[derive(Debug)]
pub struct BatchPolicy {
    size: usize,
    timeout: Duration,
    allow_duplicates: bool,
    reverse: bool,
    groups: HashMap<GroupId, Batch>,
    /// Deadlines in creation order; the timeout is fixed, so this is also deadline order.
    deadlines: VecDeque<(Instant, GroupId, u64)>,
    generations: u64,
    held: usize,
}

impl BatchPolicy {
    /// A policy for `config`.
    pub(crate) fn new(config: &BatchConfig) -> Self {
        BatchPolicy {
            size: config.size.max(1),
            timeout: Duration::from_millis(config.timeout_ms),
            allow_duplicates: config.allow_duplicates,
            reverse: config.reverse,
            groups: HashMap::new(),
            deadlines: VecDeque::new(),
            generations: 0,
            held: 0,
        }
    }

    fn release(&mut self, group: &GroupId, out: &mut Vec<Release>) {
        let Some(batch) = self.groups.remove(group) else {
            return;
        };
        let mut entries = batch.entries;
        self.held -= entries.len();
        if self.reverse {
            entries.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        } else {
            entries.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        }
        let mut entries = entries.into_iter().peekable();
        while let Some((key, _, exchange)) = entries.next() {
            let superseded =
                !self.allow_duplicates && entries.peek().is_some_and(|(next, _, _)| *next == key);
            out.push(if superseded {
                Release::Drop {
                    exchange,
                    reason: DropReason::Duplicate,
                    dead_letter: false,
                }
            } else {
                Release::Deliver(exchange)
            });
        }
    }
}

impl ResequencePolicy for BatchPolicy {
    type Key = BatchKey;

    fn name(&self) -> &'static str {
        "batch"
    }

    fn accept(&mut self, exchange: Exchange, key: BatchKey, now: Instant, out: &mut Vec<Release>) {
        let group = key.group;
        let batch = match self.groups.get_mut(&group) {
            Some(b) => b,
            None => {
                self.generations += 1;
                self.deadlines
                    .push_back((now + self.timeout, group.clone(), self.generations));
                self.groups.entry(group.clone()).or_insert(Batch {
                    generation: self.generations,
                    entries: Vec::with_capacity(self.size.min(MAX_PREALLOCATED)),
                })
            }
        };
        let arrival = batch.entries.len() as u64;
        batch.entries.push((key.sort, arrival, exchange));
        self.held += 1;
        if batch.entries.len() >= self.size {
            self.release(&group, out);
        }
    }

    fn deadline(&self) -> Option<Instant> {
        self.deadlines.front().map(|d| d.0)
    }

    fn on_deadline(&mut self, now: Instant, out: &mut Vec<Release>) {
        while let Some((at, group, generation)) = self.deadlines.front().cloned() {
            if at > now {
                break;
            }
            self.deadlines.pop_front();
            if self
                .groups
                .get(&group)
                .is_some_and(|b| b.generation == generation)
            {
                self.release(&group, out);
            }
        }
    }

    fn flush(&mut self, out: &mut Vec<Release>) {
        for (_, group, _) in std::mem::take(&mut self.deadlines) {
            self.release(&group, out);
        }
    }

    fn held(&self) -> usize {
        self.held
    }

    fn export(&mut self, keep_held: bool) -> PolicyState {
        let mut state = BatchState::default();
        let deadlines = std::mem::take(&mut self.deadlines);
        if keep_held {
            for (_, group, generation) in deadlines {
                if self
                    .groups
                    .get(&group)
                    .is_some_and(|b| b.generation == generation)
                {
                    if let Some(batch) = self.groups.remove(&group) {
                        let entries = batch.entries.into_iter().map(|(sort, _, ex)| {
                            let key = BatchKey {
                                group: group.clone(),
                                sort,
                            };
                            (key, ex)
                        });
                        state.batches.push(entries.collect());
                    }
                }
            }
            self.held = 0;
        }
        PolicyState(PolicyStateKind::Batch(state))
    }

    fn import(&mut self, state: PolicyState, now: Instant, out: &mut Vec<Release>) {
        let PolicyStateKind::Batch(state) = state.0 else {
            return;
        };
        for batch in state.batches {
            for (key, exchange) in batch {
                self.accept(exchange, key, now, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use camel_api::Value;

    use super::*;

    fn cfg() -> BatchConfig {
        BatchConfig {
            correlation: None,
            sort: "${header.n}".into(),
            size: 4,
            timeout_ms: 100,
            allow_duplicates: false,
            reverse: false,
            ignore_invalid: false,
        }
    }

    fn put(p: &mut BatchPolicy, group: Option<&str>, n: &str, tag: i64, out: &mut Vec<Release>) {
        let ex = Exchange::default()
            .with_header("n", n)
            .with_header("tag", tag);
        let key = BatchKey {
            group: group.map(Into::into),
            sort: SortKey::from_value(&Value::from(n)).unwrap(),
        };
        p.accept(ex, key, Instant::now(), out);
    }

    fn delivered(out: &[Release]) -> Vec<(String, i64)> {
        out.iter()
            .filter_map(|r| match r {
                Release::Deliver(e) => Some((
                    e.header("n").map(|v| v.to_string()).unwrap_or_default(),
                    e.header("tag").and_then(Value::as_i64).unwrap_or(-1),
                )),
                Release::Drop { .. } => None,
            })
            .collect()
    }

    #[test]
    fn full_batch_sorts_numerically_and_last_wins() {
        let mut p = BatchPolicy::new(&cfg());
        let mut out = Vec::new();
        for (n, tag) in [("10", 0), ("9", 1), ("10", 2)] {
            put(&mut p, None, n, tag, &mut out);
        }
        assert!(out.is_empty());
        put(&mut p, None, "100", 3, &mut out);
        assert_eq!(
            delivered(&out),
            [("9".into(), 1), ("10".into(), 2), ("100".into(), 3)]
        );
        assert_eq!(out.len(), 4, "the superseded 10 is reported as a drop");
        assert_eq!(p.held(), 0);
    }

    #[test]
    fn reverse_with_duplicates_keeps_arrival_order_among_equals() {
        let mut p = BatchPolicy::new(&BatchConfig {
            allow_duplicates: true,
            reverse: true,
            ..cfg()
        });
        let mut out = Vec::new();
        for (n, tag) in [("2", 0), ("3", 1), ("2", 2), ("1", 3)] {
            put(&mut p, None, n, tag, &mut out);
        }
        assert_eq!(
            delivered(&out),
            [
                ("3".into(), 1),
                ("2".into(), 0),
                ("2".into(), 2),
                ("1".into(), 3)
            ]
        );
    }

    #[test]
    fn groups_time_out_independently() {
        let mut p = BatchPolicy::new(&cfg());
        let mut out = Vec::new();
        let t0 = Instant::now();
        put(&mut p, Some("a"), "2", 0, &mut out);
        put(&mut p, Some("b"), "5", 1, &mut out);
        put(&mut p, Some("a"), "1", 2, &mut out);
        assert_eq!(p.held(), 3);
        let due = p.deadline().unwrap();
        assert!(due >= t0 + Duration::from_millis(100));
        p.on_deadline(due + Duration::from_millis(1), &mut out);
        assert_eq!(
            delivered(&out),
            [("1".into(), 2), ("2".into(), 0), ("5".into(), 1)]
        );
        assert_eq!(p.deadline(), None);
    }

    #[test]
    fn handoff_moves_open_batches() {
        let mut old = BatchPolicy::new(&cfg());
        let mut out = Vec::new();
        put(&mut old, None, "3", 0, &mut out);
        put(&mut old, None, "1", 1, &mut out);
        let state = old.export(true);
        assert_eq!(old.held(), 0);
        let mut new = BatchPolicy::new(&cfg());
        new.import(state, Instant::now(), &mut out);
        assert_eq!(new.held(), 2);
        new.flush(&mut out);
        assert_eq!(delivered(&out), [("1".into(), 1), ("3".into(), 0)]);
    }
}
