//! How a target is chosen: the policies of `load_balance` and their state.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use camel_api::{BoxExpression, CamelError, Exchange};

/// A balancer written in Rust, for `custom_load_balancer: {ref: name}`.
///
/// ```
/// use std::sync::Arc;
/// use camel_api::{CamelError, Exchange};
/// use camel_eip::load_balance::{Balancer, CustomBalancer};
///
/// /// Orders above 1000 go to the second target.
/// #[derive(Debug)]
/// struct BySize;
/// impl Balancer for BySize {
///     fn choose(&self, ex: &Exchange, _targets: usize) -> Result<usize, CamelError> {
///         let big = ex.header("amount").and_then(|v| v.as_i64()).unwrap_or(0) > 1000;
///         Ok(usize::from(big))
///     }
/// }
/// // Registered as a context resource: ctx.add_resource("by-size", Arc::new(custom)).
/// let custom = CustomBalancer::new(BySize);
/// # let _ = Arc::new(custom);
/// ```
pub trait Balancer: Send + Sync + fmt::Debug + 'static {
    /// The index of the target for `exchange`, below `targets` (an index past the end is
    /// taken modulo `targets`). An error fails the exchange.
    fn choose(&self, exchange: &Exchange, targets: usize) -> Result<usize, CamelError>;
}

/// A [`Balancer`] in the form the context keeps resources in
/// (`CamelContext::add_resource(name, Arc::new(CustomBalancer::new(b)))`).
#[derive(Clone, Debug)]
pub struct CustomBalancer(Arc<dyn Balancer>);

impl CustomBalancer {
    /// Wraps `balancer`.
    pub fn new(balancer: impl Balancer) -> Self {
        CustomBalancer(Arc::new(balancer))
    }
}

/// Failover's options.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FailoverPolicy {
    /// Error kinds or Java class names to fail over on (ADR 0052's matching); empty: any.
    pub exceptions: Vec<String>,
    /// Failovers per exchange before giving up; `None`: no limit (Camel's −1).
    pub maximum_failover_attempts: Option<u32>,
    /// Start each exchange at the next target, and wrap around the list.
    pub round_robin: bool,
    /// Start each exchange at the last target that succeeded, and wrap around the list.
    pub sticky: bool,
}

/// How `load_balance` picks its target.
#[derive(Clone, Debug)]
pub enum Policy {
    /// Each target in turn.
    RoundRobin,
    /// A target at random.
    Random,
    /// Targets in proportion to their ratios, interleaved (`round_robin`) or at random.
    Weighted {
        /// One weight per target.
        ratios: Vec<u32>,
        /// Interleave instead of picking at random.
        round_robin: bool,
    },
    /// Equal correlation values go to the same target (hashing the value; no value: round
    /// robin).
    Sticky(BoxExpression),
    /// Every target gets its own copy; the exchange goes on unchanged.
    Topic,
    /// The first target, then the next ones on failure.
    Failover(FailoverPolicy),
    /// A Rust balancer.
    Custom(CustomBalancer),
}

/// A policy that cannot work with its targets.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BalanceError {
    /// `load_balance` needs at least one target.
    #[error("a load balancer needs at least one target step")]
    NoTargets,
    /// The weighted policy's ratios do not match the targets.
    #[error("{ratios} distribution ratios for {targets} targets: give one ratio per target")]
    RatioCount {
        /// Ratios given.
        ratios: usize,
        /// Targets.
        targets: usize,
    },
    /// All ratios are zero.
    #[error("the distribution ratios add up to zero")]
    ZeroRatios,
}

/// A policy with its state (cursor, weights left in this round, last good target).
#[derive(Debug)]
pub(super) struct Chooser {
    pub(super) policy: Policy,
    cursor: AtomicUsize,
    /// Weighted round robin: `(next position, weights left in this round)`.
    weights_left: Mutex<(usize, Vec<u32>)>,
    pub(super) last_good: AtomicUsize,
}

impl Chooser {
    pub(super) fn new(policy: Policy, targets: usize) -> Result<Self, BalanceError> {
        if targets == 0 {
            return Err(BalanceError::NoTargets);
        }
        let mut left = Vec::new();
        if let Policy::Weighted { ratios, .. } = &policy {
            if ratios.len() != targets {
                return Err(BalanceError::RatioCount {
                    ratios: ratios.len(),
                    targets,
                });
            }
            if ratios.iter().all(|r| *r == 0) {
                return Err(BalanceError::ZeroRatios);
            }
            left = ratios.clone();
        }
        Ok(Chooser {
            policy,
            cursor: AtomicUsize::new(0),
            weights_left: Mutex::new((0, left)),
            last_good: AtomicUsize::new(0),
        })
    }

    /// The next index in turn.
    pub(super) fn next_in_turn(&self, targets: usize) -> usize {
        self.cursor.fetch_add(1, Ordering::Relaxed) % targets
    }

    /// The target of a single-target policy (not topic, not failover).
    pub(super) fn choose(&self, ex: &Exchange, targets: usize) -> Result<usize, CamelError> {
        Ok(match &self.policy {
            Policy::RoundRobin | Policy::Topic | Policy::Failover(_) => self.next_in_turn(targets),
            Policy::Random => rand::random::<usize>() % targets,
            Policy::Weighted {
                ratios,
                round_robin: false,
            } => weighted_pick(ratios, rand::random::<u64>()),
            Policy::Weighted {
                ratios,
                round_robin: true,
            } => self.weighted_in_turn(ratios),
            Policy::Sticky(expression) => {
                let value = expression.evaluate(ex)?;
                if value.is_null() {
                    self.next_in_turn(targets)
                } else {
                    // The default hasher with its fixed keys: the same value picks the same
                    // target in every process and across restarts.
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    value.to_string().hash(&mut h);
                    (h.finish() % targets as u64) as usize
                }
            }
            Policy::Custom(CustomBalancer(b)) => b.choose(ex, targets)? % targets,
        })
    }

    /// Weighted round robin: each target in turn while it has weight left in this round; a
    /// new round when every weight is spent. With ratios 2,1: A B A, A B A, …
    fn weighted_in_turn(&self, ratios: &[u32]) -> usize {
        let mut guard = self.weights_left.lock().unwrap_or_else(|e| e.into_inner());
        let (position, left) = &mut *guard;
        if left.iter().all(|w| *w == 0) {
            left.copy_from_slice(ratios);
            *position = 0;
        }
        let n = left.len();
        for step in 0..n {
            let i = (*position + step) % n;
            if left[i] > 0 {
                left[i] -= 1;
                *position = i + 1;
                return i;
            }
        }
        // Unreachable: a round starts with a non-zero weight (checked in `new`).
        0
    }
}

/// The target a uniform `draw` picks when each target's share is its ratio.
fn weighted_pick(ratios: &[u32], draw: u64) -> usize {
    let total: u64 = ratios.iter().map(|r| u64::from(*r)).sum();
    let mut point = draw % total.max(1);
    for (i, r) in ratios.iter().enumerate() {
        let r = u64::from(*r);
        if point < r {
            return i;
        }
        point -= r;
    }
    ratios.len() - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_pick_follows_the_shares() {
        let ratios = [3, 0, 1];
        let picks: Vec<usize> = (0..8).map(|d| weighted_pick(&ratios, d)).collect();
        assert_eq!(picks, [0, 0, 0, 2, 0, 0, 0, 2]);
    }

    #[test]
    fn weighted_round_robin_interleaves() {
        let c = Chooser::new(
            Policy::Weighted {
                ratios: vec![2, 1],
                round_robin: true,
            },
            2,
        )
        .unwrap();
        let ex = Exchange::new("x");
        let picks: Vec<usize> = (0..6).map(|_| c.choose(&ex, 2).unwrap()).collect();
        assert_eq!(picks, [0, 1, 0, 0, 1, 0]);
    }

    #[test]
    fn bad_policies_are_refused() {
        let weighted = |ratios: Vec<u32>| Policy::Weighted {
            ratios,
            round_robin: false,
        };
        assert_eq!(
            Chooser::new(weighted(vec![1, 2]), 3).unwrap_err(),
            BalanceError::RatioCount {
                ratios: 2,
                targets: 3
            }
        );
        assert_eq!(
            Chooser::new(weighted(vec![0, 0]), 2).unwrap_err(),
            BalanceError::ZeroRatios
        );
        assert_eq!(
            Chooser::new(Policy::RoundRobin, 0).unwrap_err(),
            BalanceError::NoTargets
        );
    }
}
