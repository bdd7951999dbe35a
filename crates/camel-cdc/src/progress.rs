//! Which position may be confirmed to the server: a pure type the consumer holds.
//!
//! Invariant: the position confirmed is the end of a transaction whose every change, and
//! every change of every transaction before it, went through the route successfully.
//! Changes settle in any order (up to `max_inflight` run at once); the position only
//! moves forward, one whole transaction at a time. A change whose route failed is never
//! settled, so nothing at or after its transaction is confirmed: after a reconnect the
//! server sends that transaction again (and the ones after it, which may mean
//! duplicates of changes that had succeeded).

use std::collections::VecDeque;

/// A transaction received, not yet confirmed.
#[derive(Debug)]
struct Open {
    /// Its end position, known once its `Commit` arrived.
    end_lsn: Option<u64>,
    /// Its changes handed to the route and not yet settled.
    unsettled: usize,
}

/// Tracks the transactions between the last confirmed position and the stream's head.
#[derive(Debug, Default)]
pub struct Progress {
    open: VecDeque<Open>,
    /// Ticket of `open[0]`.
    first: u64,
}

/// Names the transaction a change belongs to; given back to [`Progress::settle`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(u64);

impl Progress {
    /// Nothing open.
    pub fn new() -> Self {
        Self::default()
    }

    /// A transaction began.
    pub fn begin(&mut self) {
        self.open.push_back(Open {
            end_lsn: None,
            unsettled: 0,
        });
    }

    /// A change of the current transaction goes to the route.
    pub fn change(&mut self) -> Ticket {
        if self.open.is_empty() {
            // A change outside Begin/Commit does not happen in protocol version 1; count
            // it in a transaction of its own that never ends, so it holds back the
            // position rather than being skipped.
            self.begin();
        }
        if let Some(last) = self.open.back_mut() {
            last.unsettled += 1;
        }
        Ticket(self.first + self.open.len() as u64 - 1)
    }

    /// The current transaction committed, ending at `end_lsn`.
    pub fn commit(&mut self, end_lsn: u64) {
        if let Some(last) = self.open.back_mut() {
            last.end_lsn = Some(end_lsn);
        }
    }

    /// A change went through the route successfully.
    pub fn settle(&mut self, ticket: Ticket) {
        let Some(index) = ticket.0.checked_sub(self.first) else {
            return;
        };
        if let Some(tx) = self.open.get_mut(index as usize) {
            tx.unsettled = tx.unsettled.saturating_sub(1);
        }
    }

    /// Removes the settled transactions at the front and returns the end of the last of
    /// them: the position that may now be confirmed.
    pub fn confirmable(&mut self) -> Option<u64> {
        let mut position = None;
        while let Some(front) = self.open.front() {
            match front.end_lsn {
                Some(end) if front.unsettled == 0 => {
                    position = Some(end);
                    self.open.pop_front();
                    self.first += 1;
                }
                _ => break,
            }
        }
        position
    }

    /// True when no transaction is open: everything received was confirmed.
    pub fn is_idle(&self) -> bool {
        self.open.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_transaction_is_confirmed_when_all_its_changes_and_those_before_settled() {
        let mut p = Progress::new();
        p.begin();
        let a = p.change();
        let b = p.change();
        p.commit(100);
        p.begin();
        let c = p.change();
        p.commit(200);
        p.settle(c);
        assert_eq!(p.confirmable(), None, "the first is not settled");
        p.settle(a);
        assert_eq!(p.confirmable(), None);
        p.settle(b);
        assert_eq!(p.confirmable(), Some(200));
        assert!(p.is_idle());
        // An empty transaction (no change of a published table) confirms at once.
        p.begin();
        p.commit(300);
        assert_eq!(p.confirmable(), Some(300));
    }

    proptest! {
        /// Whatever order changes settle in, and whichever never settle (failed), the
        /// confirmed position is the end of the longest fully settled prefix.
        #[test]
        fn confirms_only_settled_prefixes(
            sizes in prop::collection::vec(0usize..4, 1..8),
            order in prop::collection::vec(any::<prop::sample::Index>(), 0..40),
            failed in prop::collection::vec(any::<bool>(), 32),
        ) {
            let mut p = Progress::new();
            let mut tickets = Vec::new();
            for (i, n) in sizes.iter().enumerate() {
                p.begin();
                for _ in 0..*n { tickets.push((i, p.change())); }
                p.commit((i as u64 + 1) * 10);
            }
            let mut settled = vec![0usize; sizes.len()];
            let mut best = None;
            let mut pending: Vec<usize> = (0..tickets.len()).filter(|k| !failed[k % 32]).collect();
            for idx in order {
                if pending.is_empty() { break; }
                let k = pending.remove(idx.index(pending.len()));
                let (tx, t) = tickets[k];
                p.settle(t);
                settled[tx] += 1;
                if let Some(pos) = p.confirmable() { best = Some(pos); }
                let prefix = sizes.iter().zip(&settled).take_while(|(n, s)| *n == *s).count();
                let expected = (prefix > 0).then(|| prefix as u64 * 10);
                prop_assert_eq!(best, expected);
            }
        }
    }
}
