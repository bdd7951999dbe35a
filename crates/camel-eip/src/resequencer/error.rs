//! The resequencer's own failures, typed so a caller can tell a refused exchange from a
//! broken configuration, and converted into [`CamelError`] at the service boundary.

use std::fmt;
use std::sync::Arc;

use camel_api::CamelError;

/// Why the resequencer refused an exchange or a configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResequenceError {
    /// The sequence or sort expression could not be evaluated to a usable key.
    InvalidKey {
        /// The expression text.
        expression: String,
        /// Why the value is unusable.
        reason: String,
    },
    /// Under `reject_old`, a sequence number at or below the last delivered one.
    RejectedOld {
        /// The refused number.
        sequence: u64,
        /// The last number delivered (or given up on) so far.
        last_delivered: u64,
    },
    /// The configuration cannot work (for example a dead-letter choice without a
    /// dead-letter endpoint).
    Config(String),
    /// The resequencer was shut down and takes no more exchanges.
    Stopped,
}

impl fmt::Display for ResequenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResequenceError::InvalidKey { expression, reason } => {
                write!(f, "resequence key `{expression}` is unusable: {reason}")
            }
            ResequenceError::RejectedOld {
                sequence,
                last_delivered,
            } => write!(
                f,
                "sequence {sequence} is at or below the last delivered {last_delivered} (reject_old)"
            ),
            ResequenceError::Config(why) => write!(f, "invalid resequence configuration: {why}"),
            ResequenceError::Stopped => f.write_str("the resequencer is stopped"),
        }
    }
}

impl std::error::Error for ResequenceError {}

impl From<ResequenceError> for CamelError {
    /// A stopped resequencer becomes [`CamelError::Stopping`]; every other case keeps the
    /// typed error as the `source` of [`CamelError::External`], so callers can downcast.
    fn from(e: ResequenceError) -> Self {
        match e {
            ResequenceError::Stopped => CamelError::Stopping("resequencer".into()),
            other => CamelError::External {
                context: "resequence".into(),
                source: Arc::new(other),
            },
        }
    }
}

impl ResequenceError {
    /// The typed error inside a [`CamelError`] made from one, if it is.
    pub fn from_camel(e: &CamelError) -> Option<&ResequenceError> {
        match e {
            CamelError::External { source, .. } => source.downcast_ref(),
            _ => None,
        }
    }
}
