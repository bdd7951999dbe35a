//! The builder's form of a `resequence` step.

use std::time::Duration;

use camel_api::definition::{ExpressionDefinition, StepConfig};
use serde::{Deserialize, Serialize};

use crate::resequencer::{CapacityPolicy, GapPolicy, OnSwap, ResequenceConfig, ResequenceMode};

/// A `resequence` step: [`ResequenceConfig`] with fluent setters.
///
/// ```
/// use camel_api::definition::ExpressionDefinition;
/// use camel_eip::config::Resequence;
/// use camel_eip::resequencer::ResequenceMode;
///
/// let r = Resequence::stream(ExpressionDefinition::new("header", "seq")).capacity(50);
/// let ResequenceMode::Stream(s) = &r.0.mode else { unreachable!() };
/// assert_eq!((s.sequence.as_str(), s.capacity), ("${header.seq}", 50));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Resequence(pub ResequenceConfig);

/// The resequencer evaluates its keys as `simple` text; a `header` expression is the same
/// as `${header.name}`.
#[track_caller]
fn simple_text(e: ExpressionDefinition) -> String {
    assert!(
        e.options.is_empty(),
        "resequence takes an expression without language options"
    );
    match e.language.as_str() {
        "simple" => e.text,
        "header" => format!("${{header.{}}}", e.text),
        other => panic!("resequence takes a `simple` or `header` expression, not `{other}`"),
    }
}

impl Resequence {
    /// Stream mode: `sequence` gives each exchange's number.
    #[track_caller]
    pub fn stream(sequence: ExpressionDefinition) -> Self {
        Resequence(ResequenceConfig::stream(simple_text(sequence)))
    }

    /// Batch mode: `sort` gives each exchange's sort key.
    #[track_caller]
    pub fn batch(sort: ExpressionDefinition) -> Self {
        Resequence(ResequenceConfig::batch(simple_text(sort)))
    }

    #[track_caller]
    fn stream_mut(&mut self, option: &str) -> &mut crate::resequencer::StreamConfig {
        match &mut self.0.mode {
            ResequenceMode::Stream(s) => s,
            ResequenceMode::Batch(_) => panic!("`{option}` is a stream-mode option"),
        }
    }

    #[track_caller]
    fn batch_mut(&mut self, option: &str) -> &mut crate::resequencer::BatchConfig {
        match &mut self.0.mode {
            ResequenceMode::Batch(b) => b,
            ResequenceMode::Stream(_) => panic!("`{option}` is a batch-mode option"),
        }
    }

    /// Stream: most exchanges held at once (default 1000).
    #[track_caller]
    pub fn capacity(mut self, n: usize) -> Self {
        self.stream_mut("capacity").capacity = n;
        self
    }

    /// Stream: how long a gap is waited for (default 1 s).
    #[track_caller]
    pub fn gap_timeout(mut self, d: Duration) -> Self {
        self.stream_mut("gap_timeout").gap_timeout_ms = d.as_millis() as u64;
        self
    }

    /// Stream: what a gap timeout does.
    #[track_caller]
    pub fn on_gap(mut self, policy: GapPolicy) -> Self {
        self.stream_mut("on_gap").on_gap = policy;
        self
    }

    /// Stream: what an exchange arriving at capacity meets.
    #[track_caller]
    pub fn on_capacity(mut self, policy: CapacityPolicy) -> Self {
        self.stream_mut("on_capacity").on_capacity = policy;
        self
    }

    /// Stream: drop an exchange whose number is held or already delivered.
    #[track_caller]
    pub fn dedup(mut self, yes: bool) -> Self {
        self.stream_mut("dedup").dedup = yes;
        self
    }

    /// Stream: refuse an exchange at or below the last delivered number.
    #[track_caller]
    pub fn reject_old(mut self, yes: bool) -> Self {
        self.stream_mut("reject_old").reject_old = yes;
        self
    }

    /// Stream: the first number to deliver.
    #[track_caller]
    pub fn initial_sequence(mut self, n: u64) -> Self {
        self.stream_mut("initial_sequence").initial_sequence = Some(n);
        self
    }

    /// Batch: exchanges per batch (default 100).
    #[track_caller]
    pub fn size(mut self, n: usize) -> Self {
        self.batch_mut("size").size = n;
        self
    }

    /// Batch: how long a batch collects (default 1 s).
    #[track_caller]
    pub fn timeout(mut self, d: Duration) -> Self {
        self.batch_mut("timeout").timeout_ms = d.as_millis() as u64;
        self
    }

    /// Batch: release batches in descending order.
    #[track_caller]
    pub fn reverse(mut self, yes: bool) -> Self {
        self.batch_mut("reverse").reverse = yes;
        self
    }

    /// Batch: keep every exchange of equal sort key.
    #[track_caller]
    pub fn allow_duplicates(mut self, yes: bool) -> Self {
        self.batch_mut("allow_duplicates").allow_duplicates = yes;
        self
    }

    /// Skip an exchange whose key cannot be evaluated instead of failing it.
    pub fn ignore_invalid(mut self, yes: bool) -> Self {
        match &mut self.0.mode {
            ResequenceMode::Stream(s) => s.ignore_invalid = yes,
            ResequenceMode::Batch(b) => b.ignore_invalid = yes,
        }
        self
    }

    /// Bound of the input channel (default 1024).
    pub fn channel_capacity(mut self, n: usize) -> Self {
        self.0.channel_capacity = n;
        self
    }

    /// Most released exchanges waiting for the continuation before callers wait
    /// (default 256).
    pub fn continuation_backlog(mut self, n: usize) -> Self {
        self.0.continuation_backlog = n;
        self
    }

    /// Where dropped exchanges and failed continuations go.
    pub fn dead_letter_uri(mut self, uri: impl Into<String>) -> Self {
        self.0.dead_letter_uri = Some(uri.into());
        self
    }

    /// What a hot swap does with held exchanges.
    pub fn on_swap(mut self, on_swap: OnSwap) -> Self {
        self.0.on_swap = on_swap;
        self
    }

    /// Silences the warning for request-reply exchanges.
    pub fn allow_inout(mut self, yes: bool) -> Self {
        self.0.allow_inout = yes;
        self
    }
}

impl StepConfig for Resequence {
    const NAME: &'static str = "resequence";
}
