//! The intake gate of a route (ADR 0006) and its in-flight count (ADR 0047).
//!
//! The count is striped per thread: entering adds one to the calling thread's cell, leaving
//! subtracts one from the cell of whatever thread the exchange ends on, and the count is
//! the sum of the cells. A cell may go negative; the sum never counts an exchange that is
//! in flight as gone, which is what a drain needs:
//!
//! - An exchange that stays in flight added its one before the gate was paused: it read
//!   the gate open *after* adding (every access here is `SeqCst`, so the add and the
//!   pause are ordered), and a drain pauses or closes the gate before it reads the cells.
//!   So a drain's read always sees that add.
//! - An exchange handed from a borrowed guard to an owned one ([`OwnedInflight`]) adds the
//!   owned one before it removes the borrowed one, on the same thread, hence on the same
//!   cell: a read sees the hand-over whole, not at all, or the add alone — never the
//!   removal alone.
//!
//! So the sum read after a pause counts each exchange still in flight at least once and
//! each finished one at least zero times: zero means drained. While the gate is open the
//! sum is only a snapshot (an exchange may enter after its cell was read and leave on a
//! cell read later).

use std::sync::atomic::{AtomicIsize, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::{watch, Notify};

use crate::stripe::Striped;
use crate::CamelError;

const OPEN: u8 = 0;
const PAUSED: u8 = 1;
const CLOSED: u8 = 2;

/// The intake gate of a route: open, paused (callers wait) or closed (callers are refused);
/// it also counts the exchanges in flight so a stop or swap can wait for them.
#[derive(Debug)]
pub struct RouteGate {
    /// `OPEN`, `PAUSED` or `CLOSED`; closed is final.
    state: AtomicU8,
    /// Wakes callers waiting at a paused gate (`true` when open).
    changed: watch::Sender<bool>,
    inflight: Striped<AtomicIsize>,
    /// Tasks waiting in `drained`; an exchange leaving only pays for a wake-up when
    /// someone is waiting.
    drainers: AtomicUsize,
    idle: Notify,
}

impl Default for RouteGate {
    fn default() -> Self {
        RouteGate {
            state: AtomicU8::new(OPEN),
            changed: watch::Sender::new(true),
            inflight: Striped::default(),
            drainers: AtomicUsize::new(0),
            idle: Notify::new(),
        }
    }
}

impl RouteGate {
    /// Pauses intake: new exchanges wait; those in flight go on.
    pub fn pause(&self) {
        let _ = self
            .state
            .compare_exchange(OPEN, PAUSED, Ordering::SeqCst, Ordering::SeqCst);
        self.changed.send_replace(false);
    }

    /// Resumes intake (a closed gate stays closed).
    pub fn resume(&self) {
        if self
            .state
            .compare_exchange(PAUSED, OPEN, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            self.changed.send_replace(true);
        }
    }

    /// Closes intake for good: waiting and new callers get [`CamelError::Stopping`].
    pub fn close(&self) {
        self.state.store(CLOSED, Ordering::SeqCst);
        self.changed.send_replace(false);
    }

    /// True while intake is paused or closed.
    pub fn is_paused(&self) -> bool {
        self.state.load(Ordering::SeqCst) != OPEN
    }

    /// Exchanges currently in flight. Exact once intake is paused or closed; while it is
    /// open, a snapshot.
    pub fn inflight(&self) -> usize {
        let sum: isize = self.inflight.iter().map(|c| c.load(Ordering::SeqCst)).sum();
        usize::try_from(sum).unwrap_or(0)
    }

    /// Resolves when no exchange is in flight. Pause or close the gate first: only then
    /// can no new exchange enter behind the count.
    pub async fn drained(&self) {
        struct Waiting<'a>(&'a AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.drainers.fetch_add(1, Ordering::SeqCst);
        let _waiting = Waiting(&self.drainers);
        loop {
            // Created before the count is read: a leave after the read wakes it.
            let notified = self.idle.notified();
            if self.inflight() == 0 {
                return;
            }
            notified.await;
        }
    }

    /// Enters without waiting: `None` when the gate is paused or closed.
    #[inline]
    pub(crate) fn try_enter(&self) -> Option<InflightGuard<'_>> {
        if self.state.load(Ordering::SeqCst) != OPEN {
            return None;
        }
        self.inflight.mine().fetch_add(1, Ordering::SeqCst);
        // Re-check: a pause that raced with us must see this exchange as in flight or see
        // it waiting, never neither.
        let guard = InflightGuard(self);
        if self.state.load(Ordering::SeqCst) == OPEN {
            Some(guard)
        } else {
            None
        }
    }

    pub(crate) async fn enter(&self) -> Result<InflightGuard<'_>, CamelError> {
        loop {
            if self.state.load(Ordering::SeqCst) == CLOSED {
                return Err(CamelError::Stopping("the route is stopped".into()));
            }
            if let Some(guard) = self.try_enter() {
                return Ok(guard);
            }
            let mut rx = self.changed.subscribe();
            if !*rx.borrow_and_update() && rx.changed().await.is_err() {
                return Err(CamelError::Stopping("the route is gone".into()));
            }
        }
    }

    #[inline]
    fn leave(&self) {
        self.inflight.mine().fetch_sub(1, Ordering::SeqCst);
        // Any leave may be the last one (no cell knows the total): wake a drainer to sum.
        if self.drainers.load(Ordering::SeqCst) > 0 {
            self.idle.notify_waiters();
        }
    }
}

/// An in-flight exchange that outlives the borrow of its gate (a suspended pipeline).
pub(crate) struct OwnedInflight(Arc<RouteGate>);

impl OwnedInflight {
    /// Counts one more exchange in flight on `gate`. The caller holds a guard and drops it
    /// after this, on the same thread (see the module docs).
    pub(crate) fn new(gate: &Arc<RouteGate>) -> Self {
        gate.inflight.mine().fetch_add(1, Ordering::SeqCst);
        OwnedInflight(gate.clone())
    }
}

impl Drop for OwnedInflight {
    fn drop(&mut self) {
        self.0.leave();
    }
}

/// An exchange in flight for as long as it is held.
pub(crate) struct InflightGuard<'a>(&'a RouteGate);

impl Drop for InflightGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_gate_stays_closed() {
        let gate = RouteGate::default();
        gate.close();
        gate.resume();
        assert!(gate.is_paused());
        assert!(gate.try_enter().is_none());
        assert_eq!(gate.inflight(), 0);
    }

    #[test]
    fn a_paused_gate_refuses_and_resumes() {
        let gate = RouteGate::default();
        gate.pause();
        assert!(gate.try_enter().is_none());
        assert_eq!(gate.inflight(), 0);
        gate.resume();
        let guard = gate.try_enter();
        assert!(guard.is_some());
        assert_eq!(gate.inflight(), 1);
        drop(guard);
        assert_eq!(gate.inflight(), 0);
    }

    /// Exchanges entering on some threads and leaving on another (handed over, as a
    /// suspended pipeline is) while a drainer pauses the gate again and again: a drain
    /// never ends while one is in flight.
    #[tokio::test(flavor = "current_thread")]
    async fn a_drain_never_ends_with_an_exchange_in_flight() {
        use std::sync::atomic::AtomicBool;
        use std::sync::mpsc;
        let gate = Arc::new(RouteGate::default());
        // What is really in flight: raised after entering, lowered before leaving.
        let truth = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::sync_channel::<OwnedInflight>(8);
        let enterers: Vec<_> = (0..3)
            .map(|_| {
                let (gate, truth, done, tx) =
                    (gate.clone(), truth.clone(), done.clone(), tx.clone());
                std::thread::spawn(move || {
                    while !done.load(Ordering::SeqCst) {
                        let Some(guard) = gate.try_enter() else {
                            std::thread::yield_now();
                            continue;
                        };
                        truth.fetch_add(1, Ordering::SeqCst);
                        let owned = OwnedInflight::new(&gate);
                        drop(guard);
                        if tx.send(owned).is_err() {
                            return;
                        }
                    }
                })
            })
            .collect();
        drop(tx);
        let leaver = {
            let truth = truth.clone();
            std::thread::spawn(move || {
                for owned in rx {
                    for _ in 0..50 {
                        std::hint::spin_loop();
                    }
                    truth.fetch_sub(1, Ordering::SeqCst);
                    drop(owned);
                }
            })
        };
        let mut drained_busy = 0;
        for _ in 0..200 {
            // Pause while exchanges are in flight (the interesting case).
            for _ in 0..100_000 {
                if truth.load(Ordering::SeqCst) > 0 {
                    break;
                }
                std::thread::yield_now();
            }
            gate.pause();
            if gate.inflight() > 0 {
                drained_busy += 1;
            }
            gate.drained().await;
            assert_eq!(truth.load(Ordering::SeqCst), 0);
            gate.resume();
        }
        done.store(true, Ordering::SeqCst);
        for t in enterers {
            t.join().unwrap();
        }
        leaver.join().unwrap();
        assert_eq!(gate.inflight(), 0);
        // The drains had something to wait for.
        assert!(drained_busy > 100, "{drained_busy}");
    }

    /// Exchanges that enter on one thread and leave on another (an async pipeline that
    /// moved) still add up, and a drain waits for the last of them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_drain_waits_for_exchanges_that_leave_on_other_threads() {
        let gate = Arc::new(RouteGate::default());
        let mut owned = Vec::new();
        for _ in 0..100 {
            let guard = gate.try_enter();
            assert!(guard.is_some());
            owned.push(OwnedInflight::new(&gate));
        }
        assert_eq!(gate.inflight(), 100);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let last = owned.pop();
        let leavers = std::thread::spawn(move || drop(owned));
        let holder = tokio::spawn(async move {
            let _ = rx.await;
            drop(last);
        });
        leavers.join().unwrap();
        assert_eq!(gate.inflight(), 1);
        gate.close();
        let drain = tokio::spawn({
            let gate = gate.clone();
            async move { gate.drained().await }
        });
        tokio::task::yield_now().await;
        assert!(!drain.is_finished());
        tx.send(()).unwrap();
        holder.await.unwrap();
        drain.await.unwrap();
        assert_eq!(gate.inflight(), 0);
    }
}
