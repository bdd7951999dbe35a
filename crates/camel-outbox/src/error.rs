//! Errors of the outbox, typed so callers can tell a configuration mistake from a
//! database failure, and converted into [`CamelError`] at the component boundary.

use camel_api::CamelError;

/// Everything that can go wrong in the outbox.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutboxError {
    /// A configuration value is invalid (the message says which and why).
    #[error("outbox configuration: {0}")]
    Config(String),
    /// A table or outbox name that could be used to inject SQL was refused.
    #[error("invalid outbox or table name `{name}`: use 1 to 48 characters from a-z, 0-9 and _, starting with a letter or _")]
    InvalidName {
        /// The refused name.
        name: String,
    },
    /// The database URL is neither `postgres://…` nor `sqlite:…`, or a feature is off.
    #[error("unsupported datasource `{0}`: expected postgres://… or sqlite:…")]
    UnsupportedDatasource(String),
    /// The outbox holds a backlog that was published with another partition count.
    #[error(
        "outbox `{outbox}` was published with partitions = {stored} and still holds {pending} \
         pending message(s); starting with partitions = {configured} could reorder or orphan \
         them. Start with partitions = {stored} (or without `partitions`, to take the stored \
         count) until `camel outbox counts` shows pending 0, then change it"
    )]
    PartitionsChanged {
        /// The outbox name.
        outbox: String,
        /// The partition count stored with the backlog.
        stored: u32,
        /// The partition count this process was started with.
        configured: u32,
        /// Pending messages at the time of the check.
        pending: u64,
    },
    /// Another relay already relays this outbox of this SQLite file, or (in another
    /// process) an outbox of the same file.
    #[error(
        "another relay is already running on SQLite file `{database}` ({holder}), so outbox \
         table `{table}` is not relayed here. The outboxes of a SQLite file are relayed by one \
         process, which holds a lock on the database file itself: stop the other `camel run` \
         or route, or use PostgreSQL to relay from several processes"
    )]
    RelayRunning {
        /// The outbox table.
        table: String,
        /// The database file, resolved (symlinks followed).
        database: String,
        /// Who holds it: another route of this process, or another process.
        holder: String,
    },
    /// A running relay drains the outbox with another partition count.
    #[error(
        "outbox `{outbox}` is relayed with partitions = {stored} by a running relay; this \
         process was started with partitions = {configured}. Start it with partitions = \
         {stored} (or without `partitions`, to take the stored count); to change the count, \
         stop every relay, wait until `camel outbox counts` shows pending 0, then start with \
         the new count"
    )]
    PartitionsInUse {
        /// The outbox name.
        outbox: String,
        /// The partition count the running relay uses.
        stored: u32,
        /// The partition count this process was started with.
        configured: u32,
    },
    /// The stored partition count changed between this relay's start and its workers
    /// taking their partitions (another process with another count, in that window).
    #[error(
        "outbox `{outbox}`: the stored partition count is {stored}, but this relay was \
         started with partitions = {running} and another process changed it meanwhile; the \
         relay stops rather than leave partitions undrained. Restart it with partitions = \
         {stored} (or without `partitions`, to take the stored count)"
    )]
    PartitionsChangedUnderRelay {
        /// The outbox name.
        outbox: String,
        /// The partition count now stored.
        stored: u32,
        /// The partition count the relay runs with.
        running: u32,
    },
    /// The worker lost ownership of its partition (its connection closed).
    #[error("partition {partition} of outbox `{outbox}`: ownership lost")]
    OwnershipLost {
        /// The outbox name.
        outbox: String,
        /// The partition.
        partition: u32,
    },
    /// A stored row could not be decoded.
    #[error("corrupt outbox row {id}: {reason}")]
    CorruptRow {
        /// The row id.
        id: i64,
        /// Why.
        reason: String,
    },
    /// The database cannot be reached.
    #[error("cannot reach the outbox database {database}: {reason}")]
    Unreachable {
        /// The database, without credentials.
        database: String,
        /// Why (a timeout, a refused connection).
        reason: String,
    },
    /// The admin was pointed at an outbox whose tables do not exist.
    #[error("no outbox named `{outbox}` (table `{table}`) in {database}; check --outbox, --table and --db")]
    NoSuchOutbox {
        /// The outbox name.
        outbox: String,
        /// The table looked for.
        table: String,
        /// The database, without credentials.
        database: String,
    },
    /// The database reported an error.
    #[error("outbox database: {0}")]
    Database(#[from] sqlx::Error),
}

impl From<OutboxError> for CamelError {
    fn from(e: OutboxError) -> Self {
        match e {
            OutboxError::Config(_)
            | OutboxError::InvalidName { .. }
            | OutboxError::UnsupportedDatasource(_) => CamelError::invalid_uri("outbox", e),
            other => CamelError::external("outbox", other),
        }
    }
}

/// Result alias of the crate.
pub type Result<T, E = OutboxError> = std::result::Result<T, E>;
