//! Stream mode: hold out-of-order exchanges and release each contiguous run of sequence
//! numbers as soon as it is complete.
//!
//! The policy keeps a watermark `next`: every number below it is settled (delivered,
//! dropped or given up on). A gap is waited for at most `gap_timeout_ms`; then the held
//! run after the gap is released as `on_gap` says and the timer re-arms for the next gap.

use std::collections::BTreeMap;
use std::time::Duration;

use camel_api::Exchange;
use tokio::time::Instant;

use super::config::{CapacityPolicy, GapPolicy, StreamConfig};
use super::error::ResequenceError;
use super::policy::{DropReason, PolicyState, PolicyStateKind, Release, ResequencePolicy};
use super::skipped::SkippedRanges;

/// What a stream policy hands to its replacement on a hot swap.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    pub(crate) next: Option<u64>,
    pub(crate) held: Vec<(u64, Exchange)>,
    pub(crate) skipped: SkippedRanges,
}

/// The stream-mode policy.
#[derive(Debug)]
pub struct StreamPolicy {
    capacity: usize,
    gap: Duration,
    on_gap: GapPolicy,
    on_capacity: CapacityPolicy,
    dedup: bool,
    reject_old: bool,
    has_dead_letter: bool,
    /// Every number below is settled; `None` until the first number is decided.
    next: Option<u64>,
    /// Keyed by (sequence, arrival) so equal numbers can be held side by side.
    held: BTreeMap<(u64, u64), Exchange>,
    arrivals: u64,
    deadline: Option<Instant>,
    skipped: SkippedRanges,
}

/// How a run of held exchanges leaves the policy.
#[derive(Clone, Copy)]
enum Outlet {
    Deliver,
    Drop {
        reason: DropReason,
        dead_letter: bool,
    },
}

impl StreamPolicy {
    /// A policy for `config`; `has_dead_letter` says whether a dead-letter processor exists.
    pub(crate) fn new(config: &StreamConfig, has_dead_letter: bool) -> Self {
        StreamPolicy {
            capacity: config.capacity.max(1),
            gap: Duration::from_millis(config.gap_timeout_ms),
            on_gap: config.on_gap,
            on_capacity: config.on_capacity,
            dedup: config.dedup,
            reject_old: config.reject_old,
            has_dead_letter,
            next: config.initial_sequence,
            held: BTreeMap::new(),
            arrivals: 0,
            deadline: None,
            skipped: SkippedRanges::default(),
        }
    }

    /// Gives up on `from..to` (remembered for late arrivals) and moves the watermark to `to`.
    fn skip_to(&mut self, to: u64) {
        if let Some(from) = self.next {
            if self.dedup && from < to {
                self.skipped.insert(from, to - 1);
            }
        }
        self.next = Some(to);
    }

    /// Releases the held run starting at the watermark through `outlet`.
    fn release_run(&mut self, outlet: Outlet, out: &mut Vec<Release>) {
        let Some(mut next) = self.next else { return };
        while let Some(entry) = self.held.first_entry() {
            let seq = entry.key().0;
            if seq > next {
                break;
            }
            let exchange = entry.remove();
            next = next.max(seq.saturating_add(1));
            out.push(match outlet {
                Outlet::Deliver => Release::Deliver(exchange),
                Outlet::Drop {
                    reason,
                    dead_letter,
                } => Release::Drop {
                    exchange,
                    reason,
                    dead_letter,
                },
            });
        }
        self.next = Some(next);
    }

    /// After the watermark moved: the gap timer restarts for whatever gap remains.
    fn rearm(&mut self, now: Instant) {
        self.deadline = (!self.held.is_empty()).then(|| now + self.gap);
    }

    fn late(&mut self, exchange: Exchange, seq: u64, out: &mut Vec<Release>) {
        if self.reject_old {
            out.push(Release::Drop {
                exchange,
                reason: DropReason::Old,
                dead_letter: self.has_dead_letter,
            });
        } else if self.dedup && !self.skipped.take(seq) {
            out.push(Release::Drop {
                exchange,
                reason: DropReason::Duplicate,
                dead_letter: false,
            });
        } else {
            out.push(Release::Deliver(exchange));
        }
    }

    fn hold(&mut self, exchange: Exchange, seq: u64, now: Instant, out: &mut Vec<Release>) {
        if self.dedup && self.held.range((seq, 0)..=(seq, u64::MAX)).next().is_some() {
            out.push(Release::Drop {
                exchange,
                reason: DropReason::Duplicate,
                dead_letter: false,
            });
            return;
        }
        if self.held.len() >= self.capacity {
            if self.next.is_none() {
                // Full before the first number was decided: decide it now.
                self.decide_first(now, out);
                return self.accept(exchange, seq, now, out);
            }
            return self.on_full(exchange, seq, now, out);
        }
        self.arrivals += 1;
        self.held.insert((seq, self.arrivals), exchange);
        if self.deadline.is_none() {
            self.deadline = Some(now + self.gap);
        }
    }

    /// `capacity` exchanges are held and `exchange` would be one more.
    fn on_full(&mut self, exchange: Exchange, seq: u64, now: Instant, out: &mut Vec<Release>) {
        let capacity_drop = |exchange, dead_letter| Release::Drop {
            exchange,
            reason: DropReason::Capacity,
            dead_letter,
        };
        match self.on_capacity {
            CapacityPolicy::LogAndDrop => out.push(capacity_drop(exchange, false)),
            CapacityPolicy::DeadLetter => out.push(capacity_drop(exchange, true)),
            CapacityPolicy::DropOldest => {
                let lowest = self.held.keys().next().map_or(u64::MAX, |k| k.0);
                if seq <= lowest {
                    out.push(capacity_drop(exchange, false));
                    self.skip_to(seq);
                    self.next = Some(seq.saturating_add(1));
                    self.release_run(Outlet::Deliver, out);
                    return self.rearm(now);
                }
                self.skip_to(lowest);
                self.release_one(
                    Outlet::Drop {
                        reason: DropReason::Capacity,
                        dead_letter: false,
                    },
                    out,
                );
                self.release_run(Outlet::Deliver, out);
                self.rearm(now);
                self.accept(exchange, seq, now, out);
            }
        }
    }

    /// Releases only the first held entry through `outlet` and moves the watermark past it.
    fn release_one(&mut self, outlet: Outlet, out: &mut Vec<Release>) {
        if let Some(((seq, _), exchange)) = self.held.pop_first() {
            self.next = Some(seq.saturating_add(1));
            if let Outlet::Drop {
                reason,
                dead_letter,
            } = outlet
            {
                out.push(Release::Drop {
                    exchange,
                    reason,
                    dead_letter,
                });
            }
        }
    }

    fn decide_first(&mut self, now: Instant, out: &mut Vec<Release>) {
        if let Some(&(first, _)) = self.held.keys().next() {
            self.next = Some(first);
            self.release_run(Outlet::Deliver, out);
        }
        self.rearm(now);
    }
}

impl ResequencePolicy for StreamPolicy {
    type Key = u64;

    fn name(&self) -> &'static str {
        "stream"
    }

    /// Under `reject_old`, a number below the watermark is refused: the watermark only
    /// moves forward, so the same number would be refused again on any later call.
    fn admit(&self, &seq: &u64) -> Result<(), ResequenceError> {
        match self.next {
            Some(next) if self.reject_old && seq < next => Err(ResequenceError::RejectedOld {
                sequence: seq,
                last_delivered: next - 1,
            }),
            _ => Ok(()),
        }
    }

    fn accept(&mut self, exchange: Exchange, seq: u64, now: Instant, out: &mut Vec<Release>) {
        match self.next {
            None => self.hold(exchange, seq, now, out),
            Some(next) if seq < next => self.late(exchange, seq, out),
            Some(next) if seq == next => {
                out.push(Release::Deliver(exchange));
                self.next = Some(next.saturating_add(1));
                self.release_run(Outlet::Deliver, out);
                self.rearm(now);
            }
            Some(_) => self.hold(exchange, seq, now, out),
        }
    }

    fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    fn on_deadline(&mut self, now: Instant, out: &mut Vec<Release>) {
        if self.deadline.is_none_or(|d| d > now) {
            return;
        }
        let Some(&(first, _)) = self.held.keys().next() else {
            self.deadline = None;
            return;
        };
        if self.next.is_none() {
            return self.decide_first(now, out);
        }
        let outlet = match self.on_gap {
            GapPolicy::EmitPartial => Outlet::Deliver,
            GapPolicy::DropAndLog => Outlet::Drop {
                reason: DropReason::Gap,
                dead_letter: false,
            },
            GapPolicy::DeadLetter => Outlet::Drop {
                reason: DropReason::Gap,
                dead_letter: true,
            },
        };
        self.skip_to(first);
        self.release_run(outlet, out);
        self.rearm(now);
    }

    fn flush(&mut self, out: &mut Vec<Release>) {
        while let Some(&(first, _)) = self.held.keys().next() {
            if self.next.is_none_or(|n| n < first) {
                self.skip_to(first);
            }
            self.release_run(Outlet::Deliver, out);
        }
        self.deadline = None;
    }

    fn held(&self) -> usize {
        self.held.len()
    }

    fn export(&mut self, keep_held: bool) -> PolicyState {
        let held = if keep_held {
            std::mem::take(&mut self.held)
                .into_iter()
                .map(|((seq, _), ex)| (seq, ex))
                .collect()
        } else {
            Vec::new()
        };
        self.deadline = None;
        PolicyState(PolicyStateKind::Stream(StreamState {
            next: self.next,
            held,
            skipped: std::mem::take(&mut self.skipped),
        }))
    }

    fn import(&mut self, state: PolicyState, now: Instant, out: &mut Vec<Release>) {
        let PolicyStateKind::Stream(state) = state.0 else {
            return;
        };
        if let Some(carried) = state.next {
            self.next = Some(self.next.map_or(carried, |n| n.max(carried)));
        }
        self.skipped.merge(state.skipped);
        for (seq, exchange) in state.held {
            self.accept(exchange, seq, now, out);
        }
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
