//! The breaker's decision, with no I/O and no clock of its own: which calls may pass, and
//! how recorded outcomes move the circuit between closed, open and half open.
//!
//! Invariants:
//! - Closed: every call passes; outcomes go into the sliding window; once the window holds
//!   at least `minimum_number_of_calls` (capped at the window size when counting calls),
//!   a failure rate or slow-call rate at or above its threshold opens the circuit.
//! - Open: every call is refused until `wait_duration_in_open_state` has passed since it
//!   opened; the first call after that moves it to half open (lazily, as resilience4j does
//!   without `automaticTransitionFromOpenToHalfOpenEnabled`).
//! - Half open: at most `permitted_number_of_calls_in_half_open_state` calls pass; when
//!   that many have completed, their rates decide: at or above a threshold → open again,
//!   below → closed with an empty window.
//! - Each state change starts a new generation; an outcome recorded against an older
//!   generation (a call admitted before the change) is dropped, so a slow call admitted
//!   while closed cannot count as a trial call of the half-open state.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

/// The state of a circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CircuitState {
    /// Calls pass; failures are counted.
    Closed,
    /// Calls are refused.
    Open,
    /// A few trial calls pass.
    HalfOpen,
}

impl CircuitState {
    /// The value of the `camel_circuit_breaker_state` gauge: 0 closed, 1 open, 2 half open.
    pub fn gauge_value(self) -> f64 {
        match self {
            CircuitState::Closed => 0.0,
            CircuitState::Open => 1.0,
            CircuitState::HalfOpen => 2.0,
        }
    }
}

/// How the sliding window is measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WindowKind {
    /// The last `size` calls.
    #[default]
    Count,
    /// The calls of the last `size` seconds.
    Time,
}

/// The breaker's thresholds; [`Default`] is resilience4j's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct Thresholds {
    /// Percentage of failures that opens the circuit.
    pub failure_rate: f64,
    /// Percentage of slow calls that opens the circuit.
    pub slow_call_rate: f64,
    /// A call at least this long is slow.
    pub slow_call_duration: Duration,
    /// Calls or seconds in the window.
    pub window_size: u32,
    /// Whether the window counts calls or seconds.
    pub window_kind: WindowKind,
    /// Calls needed before a rate is computed.
    pub minimum_number_of_calls: u32,
    /// How long the circuit stays open.
    pub wait_in_open: Duration,
    /// Trial calls while half open.
    pub half_open_calls: u32,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            failure_rate: 50.0,
            slow_call_rate: 100.0,
            slow_call_duration: Duration::from_secs(60),
            window_size: 100,
            window_kind: WindowKind::Count,
            minimum_number_of_calls: 100,
            wait_in_open: Duration::from_secs(60),
            half_open_calls: 10,
        }
    }
}

/// What a completed call counts as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Succeeded (or failed with an error that is not recorded).
    Success { slow: bool },
    /// Failed (or timed out).
    Failure { slow: bool },
    /// Neither (an ignored error kind).
    Ignored,
}

#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    calls: u32,
    failures: u32,
    slow: u32,
}

impl Totals {
    fn add(&mut self, failed: bool, slow: bool) {
        self.calls += 1;
        self.failures += u32::from(failed);
        self.slow += u32::from(slow);
    }

    fn remove(&mut self, other: Totals) {
        self.calls -= other.calls;
        self.failures -= other.failures;
        self.slow -= other.slow;
    }

    /// Whether a rate is at or above its threshold, once `minimum` calls are in.
    fn exceeded(&self, t: &Thresholds, minimum: u32) -> bool {
        if self.calls == 0 || self.calls < minimum {
            return false;
        }
        let calls = f64::from(self.calls);
        f64::from(self.failures) * 100.0 / calls >= t.failure_rate
            || f64::from(self.slow) * 100.0 / calls >= t.slow_call_rate
    }
}

/// The sliding window of a closed circuit: per call (count) or per second (time).
#[derive(Debug, Default)]
struct Window {
    /// One entry per call (count) or per second that saw calls (time), oldest first.
    entries: VecDeque<(u64, Totals)>,
    totals: Totals,
}

impl Window {
    fn record(&mut self, t: &Thresholds, second: u64, failed: bool, slow: bool) {
        let size = u64::from(t.window_size.max(1));
        match t.window_kind {
            WindowKind::Count => {
                let mut one = Totals::default();
                one.add(failed, slow);
                self.entries.push_back((second, one));
                if self.entries.len() as u64 > size {
                    if let Some((_, old)) = self.entries.pop_front() {
                        self.totals.remove(old);
                    }
                }
            }
            WindowKind::Time => {
                self.expire(second, size);
                match self.entries.back_mut() {
                    Some((s, bucket)) if *s == second => bucket.add(failed, slow),
                    _ => {
                        let mut one = Totals::default();
                        one.add(failed, slow);
                        self.entries.push_back((second, one));
                    }
                }
            }
        }
        self.totals.add(failed, slow);
    }

    /// Drops the seconds that have left a time window of `size` seconds ending at `now`.
    fn expire(&mut self, now: u64, size: u64) {
        while let Some((s, _)) = self.entries.front() {
            if s + size > now {
                break;
            }
            if let Some((_, old)) = self.entries.pop_front() {
                self.totals.remove(old);
            }
        }
    }
}

#[derive(Debug)]
enum Phase {
    Closed(Window),
    Open { until: Instant },
    HalfOpen { admitted: u32, totals: Totals },
}

/// A call was refused: the circuit is open, or half open with its trial calls taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Refused;

/// The state machine of one breaker.
#[derive(Debug)]
pub(crate) struct Circuit {
    thresholds: Thresholds,
    phase: Phase,
    generation: u64,
    epoch: Instant,
}

impl Circuit {
    pub(crate) fn new(thresholds: Thresholds, now: Instant) -> Self {
        Circuit {
            thresholds,
            phase: Phase::Closed(Window::default()),
            generation: 0,
            epoch: now,
        }
    }

    pub(crate) fn state(&self) -> CircuitState {
        match self.phase {
            Phase::Closed(_) => CircuitState::Closed,
            Phase::Open { .. } => CircuitState::Open,
            Phase::HalfOpen { .. } => CircuitState::HalfOpen,
        }
    }

    fn enter(&mut self, phase: Phase) {
        self.phase = phase;
        self.generation += 1;
    }

    fn open(&mut self, now: Instant) {
        let until = now + self.thresholds.wait_in_open;
        self.enter(Phase::Open { until });
    }

    /// Admits a call, returning the generation to record its outcome against.
    pub(crate) fn acquire(&mut self, now: Instant) -> Result<u64, Refused> {
        if let Phase::Open { until } = self.phase {
            if now < until {
                return Err(Refused);
            }
            self.enter(Phase::HalfOpen {
                admitted: 0,
                totals: Totals::default(),
            });
        }
        let permitted = self.thresholds.half_open_calls.max(1);
        if let Phase::HalfOpen { admitted, .. } = &mut self.phase {
            if *admitted >= permitted {
                return Err(Refused);
            }
            *admitted += 1;
        }
        Ok(self.generation)
    }

    /// Records the outcome of a call admitted in `generation`.
    pub(crate) fn record(&mut self, generation: u64, outcome: Outcome, now: Instant) {
        if generation != self.generation {
            return;
        }
        let (failed, slow) = match outcome {
            Outcome::Success { slow } => (false, slow),
            Outcome::Failure { slow } => (true, slow),
            Outcome::Ignored => {
                // An ignored call gives its half-open trial slot back.
                if let Phase::HalfOpen { admitted, .. } = &mut self.phase {
                    *admitted = admitted.saturating_sub(1);
                }
                return;
            }
        };
        let second = now.saturating_duration_since(self.epoch).as_secs();
        let t = &self.thresholds;
        let minimum = match t.window_kind {
            WindowKind::Count => t.minimum_number_of_calls.min(t.window_size).max(1),
            WindowKind::Time => t.minimum_number_of_calls.max(1),
        };
        match &mut self.phase {
            Phase::Closed(window) => {
                window.record(t, second, failed, slow);
                if window.totals.exceeded(t, minimum) {
                    self.open(now);
                }
            }
            Phase::HalfOpen { totals, .. } => {
                totals.add(failed, slow);
                let permitted = t.half_open_calls.max(1);
                if totals.calls >= permitted {
                    if totals.exceeded(t, permitted) {
                        self.open(now);
                    } else {
                        self.enter(Phase::Closed(Window::default()));
                    }
                }
            }
            Phase::Open { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Thresholds {
        Thresholds {
            window_size: 4,
            minimum_number_of_calls: 4,
            half_open_calls: 2,
            wait_in_open: Duration::from_secs(10),
            ..Thresholds::default()
        }
    }

    fn call(c: &mut Circuit, now: Instant, outcome: Outcome) -> Result<(), Refused> {
        let g = c.acquire(now)?;
        c.record(g, outcome, now);
        Ok(())
    }

    const OK: Outcome = Outcome::Success { slow: false };
    const FAIL: Outcome = Outcome::Failure { slow: false };

    #[test]
    fn opens_at_the_failure_rate_once_the_minimum_is_in() {
        let now = Instant::now();
        let mut c = Circuit::new(small(), now);
        for o in [FAIL, FAIL, OK] {
            call(&mut c, now, o).unwrap();
        }
        assert_eq!(c.state(), CircuitState::Closed, "3 calls < minimum 4");
        call(&mut c, now, OK).unwrap();
        assert_eq!(c.state(), CircuitState::Open, "2 of 4 failed = 50 %");
        assert_eq!(c.acquire(now + Duration::from_secs(9)), Err(Refused));
    }

    #[test]
    fn count_window_forgets_old_calls() {
        let now = Instant::now();
        let mut c = Circuit::new(
            Thresholds {
                failure_rate: 75.0,
                ..small()
            },
            now,
        );
        for o in [FAIL, FAIL, OK, OK, OK, FAIL] {
            call(&mut c, now, o).unwrap();
        }
        assert_eq!(
            c.state(),
            CircuitState::Closed,
            "the window holds OK OK OK FAIL"
        );
    }

    #[test]
    fn half_open_closes_or_reopens_after_its_trial_calls() {
        let now = Instant::now();
        let mut c = Circuit::new(small(), now);
        for _ in 0..4 {
            call(&mut c, now, FAIL).unwrap();
        }
        let later = now + Duration::from_secs(10);
        let a = c.acquire(later).unwrap();
        assert_eq!(c.state(), CircuitState::HalfOpen);
        let b = c.acquire(later).unwrap();
        assert_eq!(c.acquire(later), Err(Refused), "only 2 trial calls");
        c.record(a, OK, later);
        c.record(b, FAIL, later);
        assert_eq!(c.state(), CircuitState::Open, "1 of 2 failed = 50 %");
        let again = later + Duration::from_secs(10);
        call(&mut c, again, OK).unwrap();
        call(&mut c, again, OK).unwrap();
        assert_eq!(c.state(), CircuitState::Closed);
    }

    #[test]
    fn stale_outcomes_are_dropped() {
        let now = Instant::now();
        let mut c = Circuit::new(small(), now);
        let slow_one = c.acquire(now).unwrap();
        for _ in 0..4 {
            call(&mut c, now, FAIL).unwrap();
        }
        let later = now + Duration::from_secs(10);
        c.acquire(later).unwrap();
        c.record(slow_one, FAIL, later);
        assert_eq!(
            c.state(),
            CircuitState::HalfOpen,
            "the closed-state call does not count"
        );
    }

    #[test]
    fn slow_calls_open_the_circuit() {
        let now = Instant::now();
        let mut c = Circuit::new(
            Thresholds {
                slow_call_rate: 50.0,
                ..small()
            },
            now,
        );
        for slow in [true, true, false, false] {
            call(&mut c, now, Outcome::Success { slow }).unwrap();
        }
        assert_eq!(c.state(), CircuitState::Open);
    }

    #[test]
    fn time_window_counts_the_last_seconds() {
        let now = Instant::now();
        let t = Thresholds {
            window_kind: WindowKind::Time,
            window_size: 2,
            minimum_number_of_calls: 2,
            ..small()
        };
        let mut c = Circuit::new(t, now);
        call(&mut c, now, FAIL).unwrap();
        // Two seconds later the first failure has left the window.
        let later = now + Duration::from_secs(2);
        call(&mut c, later, OK).unwrap();
        call(&mut c, later, OK).unwrap();
        assert_eq!(c.state(), CircuitState::Closed);
        call(&mut c, later, FAIL).unwrap();
        assert_eq!(c.state(), CircuitState::Closed, "1 of 3 failed");
        call(&mut c, later + Duration::from_secs(1), FAIL).unwrap();
        assert_eq!(c.state(), CircuitState::Open, "2 of 4 failed");
    }

    #[test]
    fn ignored_outcomes_count_for_nothing() {
        let now = Instant::now();
        let mut c = Circuit::new(small(), now);
        for _ in 0..10 {
            call(&mut c, now, Outcome::Ignored).unwrap();
        }
        assert_eq!(c.state(), CircuitState::Closed);
    }
}
