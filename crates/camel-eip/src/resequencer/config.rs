//! The resequencer's configuration, as the route model and both DSLs carry it.
//!
//! Keys are snake_case; the camelCase spellings Apache Camel uses are accepted as aliases
//! so a Camel user's `batchSize` or `rejectOld` reads as expected.

use serde::{Deserialize, Serialize};

/// The whole `resequence` step: one mode (stream or batch) plus the options shared by both.
///
/// In YAML exactly one of `stream:` and `batch:` is present:
///
/// ```
/// use camel_eip::resequencer::{ResequenceConfig, ResequenceMode};
/// let cfg: ResequenceConfig = serde_json::from_value(serde_json::json!({
///     "stream": { "sequence": "${header.seq}", "capacity": 500 },
///     "channel_capacity": 256
/// })).unwrap();
/// assert!(matches!(cfg.mode, ResequenceMode::Stream(ref s) if s.capacity == 500));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(try_from = "RawResequenceConfig", into = "RawResequenceConfig")]
pub struct ResequenceConfig {
    /// Stream or batch reordering.
    pub mode: ResequenceMode,
    /// Bound of the input channel between the route and the resequencer's actor. A full
    /// channel makes the caller wait, so backpressure reaches the consumer. Default 1024.
    pub channel_capacity: usize,
    /// Most released exchanges waiting for the continuation (the post-driver's backlog).
    /// When it is full the actor stops taking exchanges from the input channel, the
    /// channel fills, and callers wait: so at most `channel_capacity` + what the policy
    /// holds + `continuation_backlog` exchanges are acknowledged and not yet delivered,
    /// which bounds both the memory and how long a stop needs to deliver them all.
    /// Default 256.
    pub continuation_backlog: usize,
    /// Silences the warning for request-reply exchanges, whose reply cannot cross the
    /// continuation boundary. Default false.
    pub allow_inout: bool,
    /// Where dropped exchanges and failed continuations go, when set.
    pub dead_letter_uri: Option<String>,
    /// What a hot swap does with held exchanges. Default [`OnSwap::Flush`].
    pub on_swap: OnSwap,
}

/// The reordering mode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResequenceMode {
    /// Hold out-of-order exchanges and release each contiguous run of sequence numbers.
    Stream(StreamConfig),
    /// Collect a window of exchanges, sort it, release it at once.
    Batch(BatchConfig),
}

/// Options of stream mode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields)]
pub struct StreamConfig {
    /// `simple` expression giving each exchange's sequence number (an unsigned integer).
    #[serde(alias = "simple", alias = "expression")]
    pub sequence: String,
    /// Most exchanges held at once. Default 1000.
    #[serde(default = "default_capacity")]
    pub capacity: usize,
    /// How long a gap in the sequence is waited for before [`StreamConfig::on_gap`]
    /// applies; also how long the first number is waited for when
    /// [`StreamConfig::initial_sequence`] is absent. Default 1000 ms.
    #[serde(
        default = "default_timeout_ms",
        alias = "gapTimeoutMs",
        alias = "timeout",
        alias = "timeout_ms"
    )]
    pub gap_timeout_ms: u64,
    /// What a gap timeout does. Default [`GapPolicy::EmitPartial`], Camel's behaviour
    /// (the spec's sketch drops instead; see ADR 0030).
    #[serde(default, alias = "onGap")]
    pub on_gap: GapPolicy,
    /// What happens to an exchange that arrives while `capacity` exchanges are held.
    /// Default [`CapacityPolicy::LogAndDrop`].
    #[serde(default, alias = "onCapacity")]
    pub on_capacity: CapacityPolicy,
    /// Drop an exchange whose sequence number is held or was already delivered.
    #[serde(default)]
    pub dedup: bool,
    /// Refuse, with a typed error, an exchange whose number is at or below the last
    /// delivered one. The actor decides before the caller's acknowledgement, so each call
    /// is either refused or accepted, never acknowledged and then dropped as old.
    #[serde(default, alias = "rejectOld")]
    pub reject_old: bool,
    /// The first number to deliver. Absent: the smallest number seen within the first
    /// gap timeout.
    #[serde(default, alias = "initialSequence")]
    pub initial_sequence: Option<u64>,
    /// Silently skip an exchange whose sequence number cannot be evaluated, instead of
    /// failing it (Camel's `ignoreInvalidExchanges`).
    #[serde(
        default,
        alias = "ignoreInvalid",
        alias = "ignore_invalid_exchanges",
        alias = "ignoreInvalidExchanges"
    )]
    pub ignore_invalid: bool,
    /// Accepted for Camel compatibility and ignored: Camel polls for deliverable exchanges
    /// at this interval, while this resequencer delivers as soon as a run is complete.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "deliveryAttemptInterval"
    )]
    pub delivery_attempt_interval: Option<u64>,
}

/// Options of batch mode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields)]
pub struct BatchConfig {
    /// `simple` expression grouping exchanges into independent batches. Absent: one batch.
    #[serde(default)]
    pub correlation: Option<String>,
    /// `simple` expression giving the sort key; numbers sort numerically.
    #[serde(alias = "simple", alias = "expression")]
    pub sort: String,
    /// Exchanges per batch. Default 100.
    #[serde(
        default = "default_batch_size",
        alias = "batchSize",
        alias = "batch_size"
    )]
    pub size: usize,
    /// How long a batch collects, from its first exchange. Default 1000 ms.
    #[serde(
        default = "default_timeout_ms",
        alias = "timeoutMs",
        alias = "batchTimeout",
        alias = "batch_timeout"
    )]
    pub timeout_ms: u64,
    /// Keep every exchange of equal sort key. Default false: the last one wins.
    #[serde(default, alias = "allowDuplicates")]
    pub allow_duplicates: bool,
    /// Release batches in descending order.
    #[serde(default)]
    pub reverse: bool,
    /// Silently skip an exchange whose sort key cannot be evaluated, instead of failing it.
    #[serde(
        default,
        alias = "ignoreInvalid",
        alias = "ignore_invalid_exchanges",
        alias = "ignoreInvalidExchanges"
    )]
    pub ignore_invalid: bool,
}

/// What a stream-mode gap timeout does with the held run after the gap.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(transform = camel_api::schema::serde_variants::<Self>)]
#[serde(rename_all = "snake_case")]
pub enum GapPolicy {
    /// Give up on the missing numbers and deliver the next held run.
    #[default]
    #[serde(alias = "emitPartial")]
    EmitPartial,
    /// Give up on the missing numbers and drop the next held run, with a warning.
    #[serde(alias = "dropAndLog")]
    DropAndLog,
    /// Give up on the missing numbers and send the next held run to the dead letter.
    #[serde(alias = "deadLetter")]
    DeadLetter,
}

/// What happens to an exchange arriving at a full stream resequencer.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(transform = camel_api::schema::serde_variants::<Self>)]
#[serde(rename_all = "snake_case")]
pub enum CapacityPolicy {
    /// Drop the arriving exchange, with a warning.
    #[default]
    #[serde(alias = "logAndDrop")]
    LogAndDrop,
    /// Drop the exchange with the lowest sequence number (held or arriving) and give up
    /// on the numbers below it.
    #[serde(alias = "dropOldest")]
    DropOldest,
    /// Send the arriving exchange to the dead letter.
    #[serde(alias = "deadLetter")]
    DeadLetter,
}

/// What a hot swap does with the exchanges a resequencer holds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum OnSwap {
    /// Deliver them through the old continuation; the new resequencer continues after the
    /// last delivered number.
    #[default]
    Flush,
    /// Move them (and the last delivered number) to the new resequencer when its
    /// definition is compatible (same mode and expressions).
    Handoff,
}

impl ResequenceConfig {
    /// A stream-mode configuration with every other option at its default.
    pub fn stream(sequence: impl Into<String>) -> Self {
        Self::with_mode(ResequenceMode::Stream(StreamConfig {
            sequence: sequence.into(),
            capacity: default_capacity(),
            gap_timeout_ms: default_timeout_ms(),
            on_gap: GapPolicy::default(),
            on_capacity: CapacityPolicy::default(),
            dedup: false,
            reject_old: false,
            initial_sequence: None,
            ignore_invalid: false,
            delivery_attempt_interval: None,
        }))
    }

    /// A batch-mode configuration with every other option at its default.
    pub fn batch(sort: impl Into<String>) -> Self {
        Self::with_mode(ResequenceMode::Batch(BatchConfig {
            correlation: None,
            sort: sort.into(),
            size: default_batch_size(),
            timeout_ms: default_timeout_ms(),
            allow_duplicates: false,
            reverse: false,
            ignore_invalid: false,
        }))
    }

    /// `mode` with the shared options at their defaults.
    pub fn with_mode(mode: ResequenceMode) -> Self {
        ResequenceConfig {
            mode,
            channel_capacity: default_channel_capacity(),
            continuation_backlog: default_continuation_backlog(),
            allow_inout: false,
            dead_letter_uri: None,
            on_swap: OnSwap::default(),
        }
    }

    /// Whether a resequencer built from `other` can take over this one's held exchanges:
    /// same mode and the same expressions.
    pub fn is_compatible_with(&self, other: &ResequenceConfig) -> bool {
        self.mode.signature() == other.mode.signature()
    }
}

impl ResequenceMode {
    /// The mode and its expressions, which decide whether held state means the same thing
    /// to another resequencer.
    pub(crate) fn signature(&self) -> String {
        match self {
            ResequenceMode::Stream(s) => format!("stream|{}", s.sequence),
            ResequenceMode::Batch(b) => format!(
                "batch|{}|{}",
                b.correlation.as_deref().unwrap_or(""),
                b.sort
            ),
        }
    }
}

fn default_capacity() -> usize {
    1000
}
fn default_timeout_ms() -> u64 {
    1000
}
fn default_batch_size() -> usize {
    100
}
fn default_channel_capacity() -> usize {
    1024
}
fn default_continuation_backlog() -> usize {
    256
}

/// The serialised shape: `stream` and `batch` side by side, exactly one present.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(transform = camel_api::schema::serde_fields::<Self>)]
#[serde(deny_unknown_fields)]
struct RawResequenceConfig {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "streamConfig",
        alias = "stream_config"
    )]
    stream: Option<StreamConfig>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "batchConfig",
        alias = "batch_config"
    )]
    batch: Option<BatchConfig>,
    #[serde(default = "default_channel_capacity", alias = "channelCapacity")]
    channel_capacity: usize,
    #[serde(
        default = "default_continuation_backlog",
        alias = "continuationBacklog"
    )]
    continuation_backlog: usize,
    #[serde(default, alias = "allowInOut", alias = "allowInout")]
    allow_inout: bool,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "deadLetterUri"
    )]
    dead_letter_uri: Option<String>,
    #[serde(default, alias = "onSwap")]
    on_swap: OnSwap,
}

impl TryFrom<RawResequenceConfig> for ResequenceConfig {
    type Error = String;

    fn try_from(raw: RawResequenceConfig) -> Result<Self, String> {
        let mode = match (raw.stream, raw.batch) {
            (Some(s), None) => ResequenceMode::Stream(s),
            (None, Some(b)) => ResequenceMode::Batch(b),
            (Some(_), Some(_)) => {
                return Err("resequence takes either `stream` or `batch`, not both".into())
            }
            (None, None) => return Err("resequence needs `stream` or `batch`".into()),
        };
        Ok(ResequenceConfig {
            mode,
            channel_capacity: raw.channel_capacity,
            continuation_backlog: raw.continuation_backlog,
            allow_inout: raw.allow_inout,
            dead_letter_uri: raw.dead_letter_uri,
            on_swap: raw.on_swap,
        })
    }
}

impl From<ResequenceConfig> for RawResequenceConfig {
    fn from(c: ResequenceConfig) -> Self {
        let (stream, batch) = match c.mode {
            ResequenceMode::Stream(s) => (Some(s), None),
            ResequenceMode::Batch(b) => (None, Some(b)),
        };
        RawResequenceConfig {
            stream,
            batch,
            channel_capacity: c.channel_capacity,
            continuation_backlog: c.continuation_backlog,
            allow_inout: c.allow_inout,
            dead_letter_uri: c.dead_letter_uri,
            on_swap: c.on_swap,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_spellings_are_aliases() {
        let cfg: ResequenceConfig = serde_json::from_value(serde_json::json!({
            "batchConfig": { "simple": "${header.n}", "batchSize": 5, "batchTimeout": 20,
                             "allowDuplicates": true, "ignoreInvalidExchanges": true },
            "allowInOut": true
        }))
        .unwrap();
        let ResequenceMode::Batch(b) = &cfg.mode else {
            panic!("batch expected")
        };
        assert_eq!((b.size, b.timeout_ms), (5, 20));
        assert!(b.allow_duplicates && b.ignore_invalid && cfg.allow_inout);
        assert_eq!(cfg.channel_capacity, 1024);
        assert_eq!(cfg.continuation_backlog, 256);
    }

    #[test]
    fn camel_stream_config_spelling_is_accepted() {
        let cfg: ResequenceConfig = serde_json::from_value(serde_json::json!({
            "streamConfig": { "simple": "${header.n}", "capacity": 7, "timeout": 50,
                              "deliveryAttemptInterval": 1000, "rejectOld": true,
                              "ignoreInvalidExchanges": true }
        }))
        .unwrap();
        let ResequenceMode::Stream(s) = &cfg.mode else {
            panic!("stream expected")
        };
        assert_eq!((s.capacity, s.gap_timeout_ms), (7, 50));
        assert!(s.reject_old && s.ignore_invalid);
        assert_eq!(s.delivery_attempt_interval, Some(1000));
    }

    #[test]
    fn defaults_and_round_trip() {
        let cfg = ResequenceConfig::stream("${header.seq}");
        let json = serde_json::to_value(&cfg).unwrap();
        assert_eq!(json["stream"]["capacity"], 1000);
        assert_eq!(json["stream"]["on_gap"], "emit_partial");
        let back: ResequenceConfig = serde_json::from_value(json).unwrap();
        assert_eq!(back, cfg);
    }

    #[test]
    fn unknown_keys_and_missing_mode_are_refused() {
        let err = serde_json::from_value::<ResequenceConfig>(serde_json::json!({
            "stream": { "sequence": "x", "capcity": 3 }
        }))
        .unwrap_err();
        assert!(err.to_string().contains("capcity"), "{err}");
        let err = serde_json::from_value::<ResequenceConfig>(serde_json::json!({})).unwrap_err();
        assert!(err.to_string().contains("`stream` or `batch`"), "{err}");
    }

    #[test]
    fn compatibility_compares_mode_and_expressions() {
        let a = ResequenceConfig::stream("${header.seq}");
        let mut b = ResequenceConfig::stream("${header.seq}");
        b.channel_capacity = 8;
        assert!(a.is_compatible_with(&b));
        assert!(!a.is_compatible_with(&ResequenceConfig::stream("${header.n}")));
        assert!(!a.is_compatible_with(&ResequenceConfig::batch("${header.seq}")));
    }
}
