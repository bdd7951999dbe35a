//! The server-wide budget of buffered request body bytes.
//!
//! Each route bounds one body (`max_body_size`) and the server bounds the connections, but
//! their product is no bound a machine has (1024 × 10 MiB). Every body read reserves its
//! bytes here first — the declared `Content-Length` at once, a chunked body chunk by
//! chunk — and a request that does not fit is answered 503 instead of being read.
//!
//! Invariant: `used` is the sum of the live [`Reservation`]s and never exceeds `limit`;
//! a reservation is returned when dropped, which the handler does once the exchange is
//! answered (the body lives in the exchange until then).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Shared by every connection of one server.
#[derive(Debug)]
pub(crate) struct BodyBudget(Arc<Counters>);

#[derive(Debug)]
struct Counters {
    limit: usize,
    used: AtomicUsize,
    /// The highest `used` has been, for tests and operators.
    peak: AtomicUsize,
}

impl BodyBudget {
    pub(crate) fn new(limit: usize) -> Self {
        BodyBudget(Arc::new(Counters {
            limit,
            used: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        }))
    }

    /// An empty reservation, grown with [`Reservation::grow`].
    pub(crate) fn reservation(&self) -> Reservation {
        Reservation {
            counters: self.0.clone(),
            bytes: 0,
        }
    }

    /// Bytes reserved now.
    pub(crate) fn used(&self) -> usize {
        self.0.used.load(Ordering::Acquire)
    }

    /// The most bytes ever reserved at once.
    pub(crate) fn peak(&self) -> usize {
        self.0.peak.load(Ordering::Acquire)
    }
}

/// Bytes of one request's body, returned to the budget when dropped.
#[derive(Debug)]
pub(crate) struct Reservation {
    counters: Arc<Counters>,
    bytes: usize,
}

impl Reservation {
    /// Reserves `n` more bytes, or refuses (reserving nothing) when the budget would be
    /// exceeded.
    pub(crate) fn grow(&mut self, n: usize) -> Result<(), Exhausted> {
        let c = &self.counters;
        let mut used = c.used.load(Ordering::Acquire);
        loop {
            let next = used
                .checked_add(n)
                .filter(|&next| next <= c.limit)
                .ok_or(Exhausted)?;
            match c
                .used
                .compare_exchange_weak(used, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    c.peak.fetch_max(next, Ordering::AcqRel);
                    self.bytes += n;
                    return Ok(());
                }
                Err(now) => used = now,
            }
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.counters.used.fetch_sub(self.bytes, Ordering::AcqRel);
        }
    }
}

/// The budget has no room for a body.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Exhausted;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_stay_within_the_limit_and_return_when_dropped() {
        let budget = BodyBudget::new(100);
        let mut a = budget.reservation();
        a.grow(60).unwrap();
        let mut b = budget.reservation();
        assert_eq!(b.grow(41), Err(Exhausted));
        b.grow(40).unwrap();
        assert_eq!(budget.used(), 100);
        assert_eq!(a.grow(1), Err(Exhausted));
        drop(a);
        assert_eq!(budget.used(), 40);
        b.grow(usize::MAX).unwrap_err();
        drop(b);
        assert_eq!((budget.used(), budget.peak()), (0, 100));
    }
}
