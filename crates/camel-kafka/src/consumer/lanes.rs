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
//! - A success's offset is kept as "unstored" until the consumer hands a batch of them to
//!   librdkafka ([`Lanes::take_unstored`]); a revoke returns the lane's unstored offset so
//!   it is stored before librdkafka commits the revoked partitions.

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
    /// The partition failed at this offset: read it again from there.
    pub(crate) seek: Option<i64>,
    /// The partition's next record, to start now.
    pub(crate) next: Option<Start<R>>,
}

impl<R> Default for Finished<R> {
    fn default() -> Self {
        Finished {
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
    /// The next offset to store, when a record succeeded since the last store.
    unstored: Option<i64>,
}

type LaneMap<R> = HashMap<TopicPartition, Lane<R>, foldhash::fast::RandomState>;

/// Partitions above this are kept in the map rather than by index.
const MAX_INDEXED_PARTITION: i32 = 1 << 16;

/// Lanes by partition: those of the first topic seen (a consumer subscribes to one) by
/// partition number, without hashing; any other topic's (a pattern subscription) in a map.
#[derive(Debug)]
struct LaneTable<R> {
    topic: Option<Arc<str>>,
    indexed: Vec<Option<Lane<R>>>,
    others: LaneMap<R>,
}

impl<R> Default for LaneTable<R> {
    fn default() -> Self {
        LaneTable {
            topic: None,
            indexed: Vec::new(),
            others: LaneMap::default(),
        }
    }
}

impl<R> LaneTable<R> {
    /// The index of `partition` in `indexed`, when it belongs there.
    fn index(&self, (topic, number): &TopicPartition) -> Option<usize> {
        let main = self.topic.as_ref()?;
        let same = Arc::ptr_eq(main, topic) || **main == **topic;
        (same && (0..MAX_INDEXED_PARTITION).contains(number)).then_some(*number as usize)
    }

    fn get_mut(&mut self, partition: &TopicPartition) -> Option<&mut Lane<R>> {
        match self.index(partition) {
            Some(i) => self.indexed.get_mut(i)?.as_mut(),
            None => self.others.get_mut(partition),
        }
    }

    fn insert(&mut self, partition: &TopicPartition, lane: Lane<R>) {
        if self.topic.is_none() {
            self.topic = Some(partition.0.clone());
        }
        match self.index(partition) {
            Some(i) => {
                if self.indexed.len() <= i {
                    self.indexed.resize_with(i + 1, || None);
                }
                self.indexed[i] = Some(lane);
            }
            None => {
                self.others.insert(partition.clone(), lane);
            }
        }
    }

    fn remove(&mut self, partition: &TopicPartition) -> Option<Lane<R>> {
        match self.index(partition) {
            Some(i) => self.indexed.get_mut(i)?.take(),
            None => self.others.remove(partition),
        }
    }

    /// Every lane with its partition.
    fn iter_mut(&mut self) -> impl Iterator<Item = (TopicPartition, &mut Lane<R>)> {
        let topic = self.topic.clone();
        let indexed = self
            .indexed
            .iter_mut()
            .enumerate()
            .filter_map(move |(i, lane)| {
                let topic = topic.clone()?;
                Some(((topic, i32::try_from(i).ok()?), lane.as_mut()?))
            });
        let others = self.others.iter_mut().map(|(p, lane)| (p.clone(), lane));
        indexed.chain(others)
    }
}

/// The lanes of one consumer.
#[derive(Debug)]
pub(crate) struct Lanes<R> {
    lanes: LaneTable<R>,
    buffered: usize,
    next_epoch: u64,
    /// True when some lane holds an unstored offset.
    dirty: bool,
}

impl<R> Default for Lanes<R> {
    fn default() -> Self {
        Lanes {
            lanes: LaneTable::default(),
            buffered: 0,
            next_epoch: 1,
            dirty: false,
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
        if self.lanes.get_mut(&partition).is_none() {
            let epoch = self.next_epoch;
            self.next_epoch += 1;
            let lane = Lane {
                epoch,
                queue: VecDeque::new(),
                running: None,
                wait_for: None,
                unstored: None,
            };
            self.lanes.insert(&partition, lane);
        }
        let Some(lane) = self.lanes.get_mut(&partition) else {
            return Err(());
        };
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
        lane.unstored = Some(offset + 1);
        self.dirty = true;
        Finished { seek: None, next }
    }

    /// The offsets to store since the last call, one per partition (the latest success).
    pub(crate) fn take_unstored(&mut self) -> Vec<(TopicPartition, i64)> {
        if !std::mem::take(&mut self.dirty) {
            return Vec::new();
        }
        self.lanes
            .iter_mut()
            .filter_map(|(partition, lane)| Some((partition, lane.unstored.take()?)))
            .collect()
    }

    /// The partition was revoked: forget it (its running record is abandoned). Returns the
    /// offset still to store for it, if any.
    pub(crate) fn revoke(&mut self, partition: &TopicPartition) -> Option<i64> {
        let lane = self.lanes.remove(partition)?;
        self.buffered -= lane.queue.len() + usize::from(lane.running.is_some());
        lane.unstored
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tp(n: i32) -> TopicPartition {
        ("t".into(), n)
    }

    /// The offset a finish left to store for `partition`, taken.
    fn stored<R>(lanes: &mut Lanes<R>, partition: i32) -> Option<i64> {
        lanes
            .take_unstored()
            .into_iter()
            .find(|(p, _)| p.1 == partition)
            .map(|(_, next)| next)
    }

    #[test]
    fn a_partition_runs_one_record_at_a_time_in_order() {
        let mut lanes = Lanes::default();
        let s = lanes.push(tp(0), 10, "a").unwrap().unwrap();
        assert!(lanes.push(tp(0), 11, "b").unwrap().is_none());
        let other = lanes.push(tp(1), 5, "x").unwrap().unwrap();
        assert_eq!(lanes.buffered(), 3);
        let f = lanes.finish(&tp(0), 10, s.epoch, true);
        assert_eq!(stored(&mut lanes, 0), Some(11));
        let next = f.next.unwrap();
        assert_eq!((next.offset, next.record), (11, "b"));
        lanes.finish(&tp(1), 5, other.epoch, true);
        assert_eq!(stored(&mut lanes, 1), Some(6));
        assert_eq!(lanes.buffered(), 1);
    }

    #[test]
    fn a_failure_drops_what_follows_until_the_failed_offset_returns() {
        let mut lanes = Lanes::default();
        let s = lanes.push(tp(0), 1, "a").unwrap().unwrap();
        lanes.push(tp(0), 2, "b").unwrap();
        lanes.push(tp(0), 3, "c").unwrap();
        let f = lanes.finish(&tp(0), 1, s.epoch, false);
        assert_eq!((stored(&mut lanes, 0), f.seek), (None, Some(1)));
        assert!(f.next.is_none());
        assert_eq!(lanes.buffered(), 0);
        assert!(
            lanes.push(tp(0), 4, "late").is_err(),
            "prefetched record dropped"
        );
        let again = lanes.push(tp(0), 1, "a").unwrap().unwrap();
        assert_eq!(again.offset, 1);
        lanes.finish(&tp(0), 1, again.epoch, true);
        assert_eq!(stored(&mut lanes, 0), Some(2));
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
        assert!(stored(&mut lanes, 0).is_none() && f.next.is_none());
        assert_eq!(lanes.buffered(), 1);
        lanes.finish(&tp(0), 7, new.epoch, true);
        assert_eq!(stored(&mut lanes, 0), Some(8));
    }

    #[test]
    fn partitions_of_another_topic_and_large_numbers_have_lanes_too() {
        let mut lanes = Lanes::default();
        let main = lanes.push(tp(0), 1, "a").unwrap().unwrap();
        let other: TopicPartition = ("u".into(), 0);
        let far = tp(MAX_INDEXED_PARTITION + 5);
        let o = lanes.push(other.clone(), 7, "b").unwrap().unwrap();
        let f = lanes.push(far.clone(), 3, "c").unwrap().unwrap();
        assert!(
            lanes.push(other.clone(), 8, "d").unwrap().is_none(),
            "own lane, busy"
        );
        assert!(
            lanes.push(tp(1), 2, "e").unwrap().is_some(),
            "idle lane of the main topic"
        );
        lanes.finish(&tp(0), 1, main.epoch, true);
        lanes.finish(&other, 7, o.epoch, true);
        lanes.finish(&far, 3, f.epoch, true);
        let mut taken = lanes.take_unstored();
        taken.sort();
        assert_eq!(
            taken,
            vec![(tp(0), 2), (far.clone(), 4), (other.clone(), 8)]
        );
        assert_eq!(lanes.revoke(&other), None);
        assert_eq!(
            lanes.buffered(),
            1,
            "revoking u dropped d; only e (t-1) is left"
        );
    }

    #[test]
    fn successes_wait_as_unstored_offsets_until_taken_or_revoked() {
        let mut lanes = Lanes::default();
        assert!(lanes.take_unstored().is_empty());
        let a = lanes.push(tp(0), 10, "a").unwrap().unwrap();
        lanes.push(tp(0), 11, "b").unwrap();
        let f = lanes.finish(&tp(0), 10, a.epoch, true);
        let b = f.next.unwrap();
        lanes.finish(&tp(0), 11, b.epoch, true);
        let c = lanes.push(tp(1), 3, "c").unwrap().unwrap();
        lanes.finish(&tp(1), 3, c.epoch, true);
        let mut taken = lanes.take_unstored();
        taken.sort();
        assert_eq!(
            taken,
            vec![(tp(0), 12), (tp(1), 4)],
            "the latest success per lane"
        );
        assert!(lanes.take_unstored().is_empty(), "taken once");
        let d = lanes.push(tp(1), 4, "d").unwrap().unwrap();
        lanes.finish(&tp(1), 4, d.epoch, true);
        assert_eq!(
            lanes.revoke(&tp(1)),
            Some(5),
            "a revoke hands back what is unstored"
        );
        assert!(lanes.take_unstored().is_empty());
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
            let mut committed = [0i64; 2];
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
                            if let Some(store) = stored(&mut lanes, p) {
                                prop_assert!(store >= committed[pi]);
                                prop_assert_eq!(store, s.offset + 1);
                                committed[pi] = store;
                            }
                            if let Some(seek) = f.seek {
                                failed_at[pi] = Some(seek);
                            }
                            running.extend(f.next);
                        }
                    }
                    _ => {
                        if let Some(next) = lanes.revoke(&tp(p)) {
                            prop_assert!(next >= committed[pi]);
                            committed[pi] = next;
                        }
                        running.retain(|s| s.partition.1 != p);
                        // The new owner reads from the stored offset.
                        failed_at[pi] = Some(committed[pi]);
                    }
                }
                let in_lanes = running.len();
                prop_assert!(lanes.buffered() >= in_lanes);
            }
        }
    }
}
