//! Sequence numbers a stream resequencer gave up on, remembered so that under `dedup` a
//! late arrival of one of them is still delivered rather than mistaken for a duplicate.

use std::collections::BTreeMap;

/// Most ranges remembered; beyond it the oldest are forgotten (a late arrival in a
/// forgotten range is then treated as a duplicate). Bounds memory under endless gaps.
const MAX_RANGES: usize = 1024;

/// Disjoint inclusive ranges of skipped sequence numbers.
#[derive(Clone, Debug, Default)]
pub(crate) struct SkippedRanges {
    /// start → end, both inclusive.
    ranges: BTreeMap<u64, u64>,
}

impl SkippedRanges {
    /// Remembers `start..=end` as skipped.
    pub(crate) fn insert(&mut self, start: u64, end: u64) {
        if start > end {
            return;
        }
        self.ranges.insert(start, end);
        while self.ranges.len() > MAX_RANGES {
            self.ranges.pop_first();
        }
    }

    /// Forgets `seq` if it was skipped, returning whether it was.
    pub(crate) fn take(&mut self, seq: u64) -> bool {
        let Some((&start, &end)) = self.ranges.range(..=seq).next_back() else {
            return false;
        };
        if seq > end {
            return false;
        }
        self.ranges.remove(&start);
        if start < seq {
            self.ranges.insert(start, seq - 1);
        }
        if seq < end {
            self.ranges.insert(seq + 1, end);
        }
        true
    }

    /// Adds every range of `other`.
    pub(crate) fn merge(&mut self, other: SkippedRanges) {
        for (s, e) in other.ranges {
            self.insert(s, e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_splits_ranges() {
        let mut r = SkippedRanges::default();
        r.insert(3, 7);
        assert!(!r.take(2));
        assert!(r.take(5));
        assert!(!r.take(5));
        assert!(r.take(3) && r.take(7) && r.take(4) && r.take(6));
        assert!(!r.take(8));
    }

    #[test]
    fn memory_is_bounded() {
        let mut r = SkippedRanges::default();
        for i in 0..(MAX_RANGES as u64 + 10) {
            r.insert(i * 10, i * 10 + 1);
        }
        assert_eq!(r.ranges.len(), MAX_RANGES);
        assert!(!r.take(0), "the oldest range was forgotten");
    }
}
