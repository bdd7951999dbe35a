//! The contract between the actor and a reordering policy.
//!
//! A policy is plain synchronous state owned by exactly one actor task: nothing else
//! holds a reference to it, so it needs no lock and no channel sender of its own. Time
//! enters through [`ResequencePolicy::deadline`]: the actor sleeps until the earliest
//! deadline and then calls [`ResequencePolicy::on_deadline`]. This is how "timers send a
//! message to the actor" is realised without a timer task that could keep a channel open.

use std::fmt;

use camel_api::Exchange;
use tokio::time::Instant;

use super::batch::BatchState;
use super::error::ResequenceError;
use super::stream::StreamState;

/// Why an accepted exchange was not delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DropReason {
    /// A stream gap timed out and `on_gap` dropped the run behind it.
    Gap,
    /// The stream resequencer was full.
    Capacity,
    /// A sequence number that is held or was already delivered, under `dedup`; or a batch
    /// entry replaced by a later one with the same sort key.
    Duplicate,
    /// Under `reject_old`, a number below the watermark that was accepted without a
    /// verdict: only exchanges carried over a hot swap into a resequencer that had
    /// already moved past them (callers are refused with `RejectedOld` instead).
    Old,
    /// A batch exchange whose sort key could not be evaluated, under `ignore_invalid`.
    Invalid,
    /// The continuation failed for this exchange.
    ContinuationFailed,
}

impl DropReason {
    /// The label used in metrics and in the dead-letter property.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Gap => "gap",
            DropReason::Capacity => "capacity",
            DropReason::Duplicate => "duplicate",
            DropReason::Old => "old",
            DropReason::Invalid => "invalid",
            DropReason::ContinuationFailed => "continuation_failed",
        }
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a policy releases: an exchange to deliver, or one it gives up on.
#[derive(Debug)]
pub enum Release {
    /// Deliver through the continuation, in the order released.
    Deliver(Exchange),
    /// Not delivered. `dead_letter` says whether the configuration wants it sent to the
    /// dead-letter processor; otherwise it is logged and counted.
    Drop {
        /// The exchange given up on.
        exchange: Exchange,
        /// Why.
        reason: DropReason,
        /// Route it to the dead letter.
        dead_letter: bool,
    },
}

impl Release {
    /// The exchange released, delivered or not.
    pub fn exchange(&self) -> &Exchange {
        match self {
            Release::Deliver(exchange) | Release::Drop { exchange, .. } => exchange,
        }
    }
}

/// A reordering policy: stream or batch.
///
/// Every method runs on the actor task; `Key` is computed by the service before the
/// exchange enters the input channel, so a bad key fails the caller instead of being
/// accepted.
pub trait ResequencePolicy: Send + 'static {
    /// What the service extracts from each exchange.
    type Key: Send + 'static;

    /// A short name for logs (`stream`, `batch`).
    fn name(&self) -> &'static str;

    /// Whether an exchange with `key` may be accepted now. Asked by the actor, before the
    /// caller's acknowledgement, only for callers that wait for a verdict; a refusal goes
    /// back to that caller as its error and the exchange never enters the policy.
    fn admit(&self, _key: &Self::Key) -> Result<(), ResequenceError> {
        Ok(())
    }

    /// Takes one exchange; pushes whatever it releases now onto `out`, in order.
    fn accept(&mut self, exchange: Exchange, key: Self::Key, now: Instant, out: &mut Vec<Release>);

    /// The next instant at which [`Self::on_deadline`] must run, if any.
    fn deadline(&self) -> Option<Instant>;

    /// Handles every deadline at or before `now`.
    fn on_deadline(&mut self, now: Instant, out: &mut Vec<Release>);

    /// Releases everything held, in order (route stop, or a swap with `on_swap: flush`).
    fn flush(&mut self, out: &mut Vec<Release>);

    /// Number of exchanges held.
    fn held(&self) -> usize;

    /// The state a replacement needs: with `keep_held`, the held exchanges too (hand-off);
    /// without, only what keeps sequence numbering continuous. Called after `flush` when
    /// not keeping held exchanges.
    fn export(&mut self, keep_held: bool) -> PolicyState;

    /// Adopts state exported by a policy of the same mode and compatible configuration;
    /// whatever it releases at once is pushed onto `out`.
    fn import(&mut self, state: PolicyState, now: Instant, out: &mut Vec<Release>);
}

/// Opaque state one policy hands to its replacement across a hot swap.
#[derive(Debug)]
pub struct PolicyState(pub(crate) PolicyStateKind);

#[derive(Debug)]
pub(crate) enum PolicyStateKind {
    Stream(StreamState),
    Batch(BatchState),
}

impl PolicyState {
    /// Number of held exchanges carried.
    pub fn held(&self) -> usize {
        match &self.0 {
            PolicyStateKind::Stream(s) => s.held.len(),
            PolicyStateKind::Batch(b) => b.batches.iter().map(Vec::len).sum(),
        }
    }

    /// The carried exchanges in the order the old policy would have released them, for a
    /// replacement that cannot adopt them (an incompatible definition).
    pub(crate) fn into_exchanges(self) -> Vec<Exchange> {
        match self.0 {
            PolicyStateKind::Stream(s) => s.held.into_iter().map(|(_, ex)| ex).collect(),
            PolicyStateKind::Batch(b) => b
                .batches
                .into_iter()
                .flat_map(|mut batch| {
                    batch.sort_by(|x, y| x.0.sort.cmp(&y.0.sort));
                    batch.into_iter().map(|(_, ex)| ex)
                })
                .collect(),
        }
    }
}
