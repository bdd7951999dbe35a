//! Per-outbox configuration, with the defaults the issue and spec name, and the validated
//! table name every SQL statement of the crate is built from.

use std::fmt;
use std::time::Duration;

use crate::backoff::Backoff;
use crate::error::{OutboxError, Result};

/// Which messages keep their relative order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ordering {
    /// Order among messages with the same group key; a message without a key is unordered.
    #[default]
    Group,
    /// One order across the whole outbox: one partition, one message in flight.
    Total,
    /// No order: a failure delays only the failing message.
    None,
}

impl Ordering {
    /// Parses `group`, `total` or `none`.
    pub fn parse(text: &str) -> Result<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "group" => Ok(Ordering::Group),
            "total" => Ok(Ordering::Total),
            "none" => Ok(Ordering::None),
            other => Err(OutboxError::Config(format!(
                "ordering `{other}`: expected group, total or none"
            ))),
        }
    }
}

/// How many failed attempts a message gets before it is dead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MaxAttempts {
    /// Retry forever; the group stays blocked until the message succeeds or is discarded.
    #[default]
    Infinity,
    /// After this many failures the message is dead and its group moves on.
    Limit(u32),
}

impl MaxAttempts {
    /// Parses `infinity` or a positive number.
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("infinity") || t.eq_ignore_ascii_case("inf") {
            return Ok(MaxAttempts::Infinity);
        }
        match t.parse::<u32>() {
            Ok(n) if n > 0 => Ok(MaxAttempts::Limit(n)),
            _ => Err(OutboxError::Config(format!(
                "max_attempts `{t}`: expected `infinity` or a number ≥ 1"
            ))),
        }
    }

    /// True when a message that has now failed `attempts` times is dead.
    pub fn exhausted(self, attempts: u32) -> bool {
        matches!(self, MaxAttempts::Limit(n) if attempts >= n)
    }
}

/// A validated SQL identifier: 1–48 characters of `[a-z0-9_]`, not starting with a digit.
///
/// The only way table names reach SQL text, so no statement is ever built from an
/// unvalidated name. The length leaves room for the `_dead` and `_meta` suffixes within
/// PostgreSQL's 63-byte identifier limit.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TableName(String);

impl TableName {
    /// Validates `name`.
    pub fn new(name: &str) -> Result<Self> {
        let ok = !name.is_empty()
            && name.len() <= 48
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if ok {
            Ok(TableName(name.to_string()))
        } else {
            Err(OutboxError::InvalidName {
                name: name.to_string(),
            })
        }
    }

    /// The table holding pending messages.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The table holding dead messages (kept out of the hot index).
    pub fn dead(&self) -> String {
        format!("{}_dead", self.0)
    }

    /// The table holding the outbox's settings (partition count, schema version).
    pub fn meta(&self) -> String {
        format!("{}_meta", self.0)
    }
}

impl fmt::Display for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The configuration of one outbox.
#[derive(Clone, Debug)]
pub struct OutboxConfig {
    /// The outbox name (used in metrics, logs and the default table name).
    pub name: String,
    /// The table; defaults to `camel_outbox_<name>`.
    pub table: Option<String>,
    /// Ordering mode (default `group`).
    pub ordering: Ordering,
    /// Number of partitions, each drained by one worker (default 1; `total` needs 1).
    pub partitions: u32,
    /// Failures before a message is dead (default infinity: strict).
    pub max_attempts: MaxAttempts,
    /// Delay before a failed message is retried (default 1 s … 60 s, jitter).
    pub backoff: Backoff,
    /// PostgreSQL: publishers of one group queue up on a transaction-scoped advisory
    /// lock, so ids follow commit order within a group (default false).
    pub serialize_writes: bool,
    /// Rows read per query and confirmed rows deleted per statement (default 500).
    pub batch_size: u32,
    /// How often a worker polls when nothing woke it (default 500 ms).
    pub poll_interval: Duration,
    /// Groups of one partition in flight at once (default 64).
    pub max_inflight: u32,
    /// How often a worker re-reads the whole partition for rows that committed after the
    /// scan passed their id, or that `retry_dead` put back (default 5 s).
    pub sweep_interval: Duration,
    /// How often a worker waiting for a partition another process owns tries again
    /// (default 1 s). Bounds the takeover time after a crash.
    pub takeover_interval: Duration,
    /// PostgreSQL: publish also sends `NOTIFY` and workers `LISTEN` (default false:
    /// `NOTIFY` serialises all commits of the database).
    pub listen_notify: bool,
    /// PostgreSQL: workers are woken by the outbox table's inserts read from a logical
    /// replication stream (a temporary slot per relay; Cargo feature `replication`;
    /// default false). Wakes for publishes of every process without `NOTIFY`'s commit
    /// lock; the rows are still read by the workers, so order and ownership do not change.
    pub logical_replication: bool,
}

impl OutboxConfig {
    /// The defaults for outbox `name`.
    pub fn new(name: &str) -> Self {
        OutboxConfig {
            name: name.to_string(),
            table: None,
            ordering: Ordering::Group,
            partitions: 1,
            max_attempts: MaxAttempts::Infinity,
            backoff: Backoff::default(),
            serialize_writes: false,
            batch_size: 500,
            poll_interval: Duration::from_millis(500),
            max_inflight: 64,
            sweep_interval: Duration::from_secs(5),
            takeover_interval: Duration::from_secs(1),
            listen_notify: false,
            logical_replication: false,
        }
    }

    /// Checks the values and returns the validated table name.
    pub fn validate(&self) -> Result<TableName> {
        TableName::new(&self.name)?;
        let table = match &self.table {
            Some(t) => TableName::new(t)?,
            None => TableName::new(&format!("camel_outbox_{}", self.name))?,
        };
        let bad = |m: &str| Err(OutboxError::Config(m.to_string()));
        if self.partitions == 0 || self.partitions > 1024 {
            return bad("partitions must be between 1 and 1024");
        }
        if self.ordering == Ordering::Total && self.partitions != 1 {
            return bad("ordering `total` uses exactly one partition; remove `partitions`");
        }
        if self.batch_size == 0 || self.batch_size > 10_000 {
            return bad("batch_size must be between 1 and 10000");
        }
        if self.max_inflight == 0 {
            return bad("max_inflight must be at least 1");
        }
        if self.backoff.min > self.backoff.max {
            return bad("backoff min must not exceed backoff max");
        }
        if self.poll_interval.is_zero() || self.takeover_interval.is_zero() {
            return bad("poll_interval and takeover_interval must be positive");
        }
        Ok(table)
    }

    /// Groups in flight at once in one partition, after the ordering mode's rule.
    pub(crate) fn effective_inflight(&self) -> usize {
        match self.ordering {
            Ordering::Total => 1,
            _ => self.max_inflight as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_validated() {
        assert!(TableName::new("orders_1").is_ok());
        for bad in [
            "",
            "Orders",
            "1abc",
            "a;drop table x",
            "a-b",
            &"x".repeat(49),
        ] {
            assert!(TableName::new(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn defaults_follow_the_issue() {
        let c = OutboxConfig::new("orders");
        assert_eq!(c.validate().unwrap().as_str(), "camel_outbox_orders");
        assert_eq!(c.ordering, Ordering::Group);
        assert_eq!(c.partitions, 1);
        assert_eq!(c.max_attempts, MaxAttempts::Infinity);
        assert_eq!(c.max_inflight, 64);
        assert_eq!(c.backoff, Backoff::default());
    }

    #[test]
    fn total_ordering_refuses_partitions() {
        let mut c = OutboxConfig::new("audit");
        c.ordering = Ordering::Total;
        c.partitions = 4;
        assert!(c.validate().is_err());
    }

    #[test]
    fn parses_modes_and_attempts() {
        assert_eq!(Ordering::parse("Total").unwrap(), Ordering::Total);
        assert!(Ordering::parse("sorted").is_err());
        assert_eq!(MaxAttempts::parse("3").unwrap(), MaxAttempts::Limit(3));
        assert_eq!(
            MaxAttempts::parse("infinity").unwrap(),
            MaxAttempts::Infinity
        );
        assert!(MaxAttempts::parse("0").is_err());
        assert!(MaxAttempts::Limit(3).exhausted(3));
        assert!(!MaxAttempts::Infinity.exhausted(u32::MAX));
    }
}
