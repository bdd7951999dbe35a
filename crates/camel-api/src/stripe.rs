//! Counters split into one cache line per thread, so the worker threads of a runtime
//! counting the same route do not pass one cache line back and forth (ADR 0047).
//!
//! A thread always uses the same stripe. Threads are dealt stripes round-robin when they
//! first count; with more threads than stripes some share one, which stays correct (the
//! cells are atomics) and only costs what sharing a cache line costs.

use std::cell::Cell;
use std::ops::Deref;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Stripes per counter: more than the worker threads of a typical runtime, few enough that
/// a reader's sum stays cheap. A power of two, so picking a cell needs no bounds check.
pub(crate) const STRIPES: usize = 16;

/// One value on a cache line of its own (128 bytes: adjacent-line prefetchers fetch pairs).
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Padded<T>(T);

impl<T> Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// `T` once per stripe.
#[derive(Debug)]
pub(crate) struct Striped<T> {
    cells: Box<[Padded<T>; STRIPES]>,
}

impl<T: Default> Default for Striped<T> {
    fn default() -> Self {
        Striped {
            cells: Box::new(std::array::from_fn(|_| Padded::default())),
        }
    }
}

impl<T> Striped<T> {
    /// The calling thread's cell.
    #[inline]
    pub(crate) fn mine(&self) -> &T {
        &self.cells[stripe() & (STRIPES - 1)]
    }

    /// Every cell, for a reader that sums or drains them.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.cells.iter().map(|c| &c.0)
    }
}

/// A name (of a header or property) that a step puts on every exchange it handles, held
/// once per stripe and created lazily by the first thread of the stripe to use it.
///
/// A message keeps the name as an `Arc<str>` clone. With one shared `Arc`, every worker
/// thread would add to and take from the same reference count for every exchange: one
/// cache line passed between the cores per exchange. A copy per stripe, allocated by the
/// thread that uses it (so from that thread's own allocator pages), keeps the count local.
///
/// ```
/// use camel_api::StripedName;
/// let name = StripedName::new("h");
/// assert_eq!(&**name.get(), "h");
/// ```
#[derive(Debug)]
pub struct StripedName {
    name: std::sync::Arc<str>,
    copies: Striped<std::sync::OnceLock<std::sync::Arc<str>>>,
}

impl StripedName {
    /// The name `name`.
    pub fn new(name: &str) -> Self {
        StripedName {
            name: name.into(),
            copies: Striped::default(),
        }
    }

    /// The calling thread's copy.
    #[inline]
    pub fn get(&self) -> &std::sync::Arc<str> {
        self.copies
            .mine()
            .get_or_init(|| std::sync::Arc::from(&*self.name))
    }
}

thread_local! {
    /// This thread's stripe, or `usize::MAX` before its first count.
    static STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
}

static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);

#[inline]
fn stripe() -> usize {
    STRIPE.with(|s| {
        let i = s.get();
        if i < STRIPES {
            return i;
        }
        let i = NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) % STRIPES;
        s.set(i);
        i
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;

    #[test]
    fn a_thread_keeps_its_stripe_and_threads_spread_out() {
        let first = stripe();
        assert_eq!(stripe(), first);
        let others: Vec<usize> = (0..4)
            .map(|_| std::thread::spawn(stripe).join().unwrap())
            .collect();
        // Round-robin: four new threads cannot all land on one stripe.
        assert!(others.iter().any(|s| *s != others[0]), "{others:?}");
    }

    #[test]
    fn counts_from_many_threads_sum_exactly() {
        let counter: Arc<Striped<AtomicU64>> = Arc::default();
        let threads: Vec<_> = (0..2 * STRIPES)
            .map(|_| {
                let counter = counter.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        counter.mine().fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let total: u64 = counter.iter().map(|c| c.load(Ordering::Relaxed)).sum();
        assert_eq!(total, 2 * STRIPES as u64 * 1000);
    }
}
