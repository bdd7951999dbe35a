//! Which record runs next, and which offset may be committed: a pure type, no I/O.
//!
//! Invariants (ADR 0071):
//! - One lane per partition; a lane runs **one record at a time**, in offset order, so the
//!   route sees a partition in the order Kafka keeps it.
//! - The offset to commit for a partition only moves when a record of it succeeded, to
//!   that record's offset + 1. Records run in order, so a later success can never commit
//!   past an earlier failure.
//! - A failure blocks its lane: the records queued behind it are dropped (the broker has
//!   them; they come again after the seek) and records arriving before the seek are
//!   dropped too, until the failed offset itself comes back.
//! - `buffered()` counts queued and running records: the consumer stops taking records
//!   from the broker while it is at `max_poll_records`.
//! - A lane that is revoked is forgotten at once; its running record's completion then
//!   carries an old epoch and is ignored (the new owner reads it again).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// A partition: topic and number.
pub(crate) type TopicPartition = (Arc<str>, i32);

/// A record to hand to the route now.
#[derive(Debug)]
pub(crate) struct Start<R> {
    pub(crate) partition: TopicPartition,
    pub(crate) offset: i64,
    pub(crate) epoch: u64,
    pub(crate) record: R,
}

/// What the consumer does after a record finished.
#[derive(Debug)]
pub(crate) struct Finished<R> {
    /// Store this offset for the partition (the next one to read).
    pub(crate) store: Option<i64>,
    /// The partition failed at this offset: read it again from there.
    pub(crate) seek: Option<i64>,
    /// The partition's next record, to start now.
    pub(crate) next: Option<Start<R>>,
}

impl<R> Default for Finished<R> {
    fn default() -> Self {
        Finished {
            store: None,
            seek: None,
            next: None,
        }
    }
}

#[derive(Debug)]
struct Lane<R> {
    epoch: u64,
    queue: VecDeque<(i64, R)>,
    running: Option<i64>,
    /// Set after a failure: only this offset is taken, everything else is dropped.
    wait_for: Option<i64>,
}

/// The lanes of one consumer.
#[derive(Debug)]
pub(crate) struct Lanes<R> {
    lanes: HashMap<TopicPartition, Lane<R>>,
    buffered: usize,
    next_epoch: u64,
}

impl<R> Default for Lanes<R> {
    fn default() -> Self {
        Lanes {
            lanes: HashMap::new(),
            buffered: 0,
            next_epoch: 1,
        }
    }
}

impl<R> Lanes<R> {
    /// Records queued or running.
    pub(crate) fn buffered(&self) -> usize {
        self.buffered
    }

    /// A record arrived from the broker. Returns it to start now when its lane is idle;
    /// `Err(())` when it is dropped (its lane waits for an earlier, failed offset).
    #[allow(clippy::result_unit_err)]
    pub(crate) fn push(
        &mut self,
        partition: TopicPartition,
        offset: i64,
        record: R,
    ) -> Result<Option<Start<R>>, ()> {
        let next_epoch = &mut self.next_epoch;
        let lane = self.lanes.entry(partition.clone()).or_insert_with(|| {
            let epoch = *next_epoch;
            *next_epoch += 1;
            Lane {
                epoch,
                queue: VecDeque::new(),
                running: None,
                wait_for: None,
            }
        });
        match lane.wait_for {
            Some(wanted) if wanted != offset => return Err(()),
            Some(_) => lane.wait_for = None,
            None => {}
        }
        self.buffered += 1;
        if lane.running.is_some() {
            lane.queue.push_back((offset, record));
            return Ok(None);
        }
        lane.running = Some(offset);
        Ok(Some(Start {
            partition,
            offset,
            epoch: lane.epoch,
            record,
        }))
    }

    /// The record at `offset` finished; `ok` when the route succeeded (or its failure was
    /// dealt with: sent to the dead-letter topic, or skipped).
    pub(crate) fn finish(
        &mut self,
        partition: &TopicPartition,
        offset: i64,
        epoch: u64,
        ok: bool,
    ) -> Finished<R> {
        let Some(lane) = self.lanes.get_mut(partition) else {
            return Finished::default();
        };
        if lane.epoch != epoch || lane.running != Some(offset) {
            return Finished::default();
        }
        lane.running = None;
        self.buffered -= 1;
        if !ok {
            self.buffered -= lane.queue.len();
            lane.queue.clear();
            lane.wait_for = Some(offset);
            return Finished {
                store: None,
                seek: Some(offset),
                next: None,
            };
        }
        let next = lane.queue.pop_front().map(|(next_offset, record)| {
            lane.running = Some(next_offset);
            Start {
                partition: partition.clone(),
                offset: next_offset,
                epoch: lane.epoch,
                record,
            }
        });
        Finished {
            store: Some(offset + 1),
            seek: None,
            next,
        }
    }

    /// The partition was revoked: forget it (its running record is abandoned).
    pub(crate) fn revoke(&mut self, partition: &TopicPartition) {
        if let Some(lane) = self.lanes.remove(partition) {
            self.buffered -= lane.queue.len() + usize::from(lane.running.is_some());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tp(n: i32) -> TopicPartition {
        ("t".into(), n)
    }

    #[test]
    fn a_partition_runs_one_record_at_a_time_in_order() {
        let mut lanes = Lanes::default();
        let s = lanes.push(tp(0), 10, "a").unwrap().unwrap();
        assert!(lanes.push(tp(0), 11, "b").unwrap().is_none());
        let other = lanes.push(tp(1), 5, "x").unwrap().unwrap();
        assert_eq!(lanes.buffered(), 3);
        let f = lanes.finish(&tp(0), 10, s.epoch, true);
        assert_eq!(f.store, Some(11));
        let next = f.next.unwrap();
        assert_eq!((next.offset, next.record), (11, "b"));
        assert_eq!(lanes.finish(&tp(1), 5, other.epoch, true).store, Some(6));
        assert_eq!(lanes.buffered(), 1);
    }

    #[test]
    fn a_failure_drops_what_follows_until_the_failed_offset_returns() {
        let mut lanes = Lanes::default();
        let s = lanes.push(tp(0), 1, "a").unwrap().unwrap();
        lanes.push(tp(0), 2, "b").unwrap();
        lanes.push(tp(0), 3, "c").unwrap();
        let f = lanes.finish(&tp(0), 1, s.epoch, false);
        assert_eq!((f.store, f.seek), (None, Some(1)));
        assert!(f.next.is_none());
        assert_eq!(lanes.buffered(), 0);
        assert!(
            lanes.push(tp(0), 4, "late").is_err(),
            "prefetched record dropped"
        );
        let again = lanes.push(tp(0), 1, "a").unwrap().unwrap();
        assert_eq!(again.offset, 1);
        assert_eq!(lanes.finish(&tp(0), 1, again.epoch, true).store, Some(2));
    }

    #[test]
    fn a_revoked_lanes_completion_is_ignored_even_after_reassignment() {
        let mut lanes = Lanes::default();
        let old = lanes.push(tp(0), 7, "a").unwrap().unwrap();
        lanes.push(tp(0), 8, "b").unwrap();
        lanes.revoke(&tp(0));
        assert_eq!(lanes.buffered(), 0);
        let new = lanes.push(tp(0), 7, "a").unwrap().unwrap();
        let f = lanes.finish(&tp(0), 7, old.epoch, true);
        assert!(f.store.is_none() && f.next.is_none());
        assert_eq!(lanes.buffered(), 1);
        assert_eq!(lanes.finish(&tp(0), 7, new.epoch, true).store, Some(8));
    }

    proptest! {
        /// Whatever the interleaving of arrivals, outcomes and revokes: the stored offset
        /// of a partition only grows, and is always one past a record that succeeded with
        /// every earlier record of the lane also succeeded or stored before.
        #[test]
        fn stored_offsets_never_pass_a_failure(
            ops in proptest::collection::vec((0u8..4, 0i32..2, any::<bool>()), 1..200)
        ) {
            let mut lanes: Lanes<()> = Lanes::default();
            let mut next_offset = [0i64; 2];
            let mut running: Vec<Start<()>> = Vec::new();
            let mut stored = [0i64; 2];
            let mut failed_at: [Option<i64>; 2] = [None, None];
            for (op, p, ok) in ops {
                let pi = p as usize;
                match op {
                    0 | 1 => {
                        let offset = failed_at[pi].take().unwrap_or(next_offset[pi]);
                        next_offset[pi] = offset + 1;
                        if let Ok(Some(s)) = lanes.push(tp(p), offset, ()) {
                            running.push(s);
                        }
                    }
                    2 => {
                        if let Some(i) = running.iter().position(|s| s.partition.1 == p) {
                            let s = running.remove(i);
                            let f = lanes.finish(&s.partition, s.offset, s.epoch, ok);
                            if let Some(store) = f.store {
                                prop_assert!(store >= stored[pi]);
                                prop_assert_eq!(store, s.offset + 1);
                                stored[pi] = store;
                            }
                            if let Some(seek) = f.seek {
                                failed_at[pi] = Some(seek);
                            }
                            running.extend(f.next);
                        }
                    }
                    _ => {
                        lanes.revoke(&tp(p));
                        running.retain(|s| s.partition.1 != p);
                        // The new owner reads from the stored offset.
                        failed_at[pi] = Some(stored[pi]);
                    }
                }
                let in_lanes = running.len();
                prop_assert!(lanes.buffered() >= in_lanes);
            }
        }
    }
}
