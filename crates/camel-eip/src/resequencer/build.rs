//! Assembling a resequencer from its configuration: validation, expression compilation,
//! channel, policy, intake and lifecycle.

use std::sync::Arc;

use camel_api::{BoxExpression, BoxProcessor, CamelError, StepLifecycle};
use tokio::sync::mpsc;

use super::batch::BatchPolicy;
use super::config::{CapacityPolicy, GapPolicy, ResequenceConfig, ResequenceMode};
use super::error::ResequenceError;
use super::key::{BatchKeying, Keying, StreamKeying};
use super::lifecycle::{Lifecycle, LifecycleParts};
use super::policy::ResequencePolicy;
use super::post_driver::Outlets;
use super::service::Intake;
use super::shared::{ResequencerStats, Shared};
use super::stream::StreamPolicy;

/// A built resequencer: the step the main pipeline ends with, and its lifecycle.
#[derive(Debug, Clone)]
pub struct Resequencer {
    /// The route step: accepts an exchange and answers with the acknowledgement.
    pub processor: BoxProcessor,
    /// Start, drain and hand-over; the route controller drives it.
    pub lifecycle: Arc<dyn StepLifecycle>,
    /// Live counters of this instance.
    pub stats: Arc<ResequencerStats>,
}

/// Compiled expressions for a resequencer, for callers that compile them with their own
/// language registry (or tests that write them by hand).
#[derive(Debug, Clone)]
pub struct ResequenceExpressions {
    /// The stream sequence or the batch sort expression.
    pub key: BoxExpression,
    /// The batch correlation expression, if any.
    pub correlation: Option<BoxExpression>,
}

/// Builds resequencers.
#[derive(Debug)]
pub struct ResequencerService;

impl ResequencerService {
    /// Builds a resequencer whose expressions are in the `simple` language.
    ///
    /// `continuation` is the rest of the route after the resequencer; `dead_letter` is the
    /// processor for `dead_letter_uri` (required when the configuration names a
    /// dead-letter choice). Must be called inside a tokio runtime only when started.
    pub fn build(
        config: &ResequenceConfig,
        route_id: &str,
        step_name: &str,
        continuation: BoxProcessor,
        dead_letter: Option<BoxProcessor>,
    ) -> Result<Resequencer, CamelError> {
        let (key, correlation) = match &config.mode {
            ResequenceMode::Stream(s) => (camel_language::simple(&s.sequence)?, None),
            ResequenceMode::Batch(b) => (
                camel_language::simple(&b.sort)?,
                match &b.correlation {
                    Some(c) => Some(camel_language::simple(c)?),
                    None => None,
                },
            ),
        };
        let expressions = ResequenceExpressions { key, correlation };
        Self::build_with(
            config,
            expressions,
            route_id,
            step_name,
            continuation,
            dead_letter,
        )
    }

    /// Like [`ResequencerService::build`], with expressions compiled by the caller.
    pub fn build_with(
        config: &ResequenceConfig,
        expressions: ResequenceExpressions,
        route_id: &str,
        step_name: &str,
        continuation: BoxProcessor,
        dead_letter: Option<BoxProcessor>,
    ) -> Result<Resequencer, CamelError> {
        validate(config, dead_letter.is_some())?;
        let shared = Arc::new(Shared::new(route_id, step_name));
        let outlets = Outlets {
            continuation,
            dead_letter,
        };
        let parts = Parts {
            config,
            outlets,
            shared,
        };
        match &config.mode {
            ResequenceMode::Stream(s) => {
                let has_dead_letter = parts.outlets.dead_letter.is_some();
                let policy = StreamPolicy::new(s, has_dead_letter);
                let keying = StreamKeying {
                    expression: expressions.key,
                    text: s.sequence.clone(),
                    ignore_invalid: s.ignore_invalid,
                };
                Ok(parts.assemble(policy, keying, s.reject_old))
            }
            ResequenceMode::Batch(b) => {
                let keying = BatchKeying {
                    sort: expressions.key,
                    sort_text: b.sort.clone(),
                    correlation: expressions.correlation,
                    ignore_invalid: b.ignore_invalid,
                };
                Ok(parts.assemble(BatchPolicy::new(b), keying, false))
            }
        }
    }
}

struct Parts<'a> {
    config: &'a ResequenceConfig,
    outlets: Outlets,
    shared: Arc<Shared>,
}

impl Parts<'_> {
    /// `await_verdict`: callers wait for the actor's verdict before their acknowledgement
    /// (see [`Intake::await_verdict`]).
    fn assemble<P, K>(self, policy: P, keying: K, await_verdict: bool) -> Resequencer
    where
        P: ResequencePolicy,
        K: Keying<Key = P::Key>,
    {
        let (tx, rx) = mpsc::channel(self.config.channel_capacity);
        let intake = Intake {
            keying,
            input: tx,
            await_verdict,
            allow_inout: self.config.allow_inout,
            shared: self.shared.clone(),
        };
        let stats = self.shared.stats.clone();
        let parts = LifecycleParts {
            outlets: self.outlets,
            shared: self.shared,
            on_swap: self.config.on_swap,
            signature: self.config.mode.signature(),
            backlog: self.config.continuation_backlog,
        };
        let lifecycle = Lifecycle::new(policy, rx, parts);
        Resequencer {
            processor: BoxProcessor::new(intake).named("resequence"),
            lifecycle: Arc::new(lifecycle),
            stats,
        }
    }
}

/// Largest input channel: tokio's bounded channel refuses (panics on) more permits than
/// this, and no route needs millions of queued exchanges in front of one step.
const MAX_CHANNEL_CAPACITY: usize = 1 << 24;

/// Longest timeout accepted (one year): a deadline is `now + timeout`, which must not
/// overflow the clock.
const MAX_TIMEOUT_MS: u64 = 365 * 24 * 3600 * 1000;

fn validate(config: &ResequenceConfig, has_dead_letter: bool) -> Result<(), ResequenceError> {
    let bad = |why: &str| Err(ResequenceError::Config(why.into()));
    if config.channel_capacity == 0 || config.channel_capacity > MAX_CHANNEL_CAPACITY {
        return bad("channel_capacity must be between 1 and 16777216");
    }
    if config.continuation_backlog == 0 || config.continuation_backlog > MAX_CHANNEL_CAPACITY {
        return bad("continuation_backlog must be between 1 and 16777216");
    }
    if config.dead_letter_uri.is_some() && !has_dead_letter {
        return bad("dead_letter_uri is set but no dead-letter processor was supplied");
    }
    match &config.mode {
        ResequenceMode::Stream(s) => {
            if s.capacity == 0 {
                return bad("stream capacity must be at least 1");
            }
            if s.gap_timeout_ms > MAX_TIMEOUT_MS {
                return bad("gap_timeout_ms must be at most one year");
            }
            let wants_dead_letter =
                s.on_gap == GapPolicy::DeadLetter || s.on_capacity == CapacityPolicy::DeadLetter;
            if wants_dead_letter && !has_dead_letter {
                return bad("on_gap/on_capacity `dead_letter` needs dead_letter_uri");
            }
        }
        ResequenceMode::Batch(b) => {
            if b.size == 0 {
                return bad("batch size must be at least 1");
            }
            if b.timeout_ms > MAX_TIMEOUT_MS {
                return bad("batch timeout_ms must be at most one year");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_that_would_panic_later_are_refused() {
        let mut cfg = ResequenceConfig::stream("${header.seq}");
        cfg.channel_capacity = usize::MAX;
        assert!(validate(&cfg, false).is_err());
        cfg.channel_capacity = 0;
        assert!(validate(&cfg, false).is_err());
        let mut cfg = ResequenceConfig::stream("${header.seq}");
        if let ResequenceMode::Stream(s) = &mut cfg.mode {
            s.gap_timeout_ms = u64::MAX;
        }
        assert!(validate(&cfg, false).is_err());
        let mut cfg = ResequenceConfig::batch("x");
        if let ResequenceMode::Batch(b) = &mut cfg.mode {
            b.timeout_ms = u64::MAX;
        }
        assert!(validate(&cfg, false).is_err());
        assert!(validate(&ResequenceConfig::batch("x"), false).is_ok());
    }
}
