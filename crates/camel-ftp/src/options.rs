//! The endpoint options, read from `ftp://[user[:password]@]host[:port]/directory?…`
//! with Camel's names in snake_case (camelCase is accepted).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use camel_api::{percent_decode, BoxExpression, CamelError, ComponentContext, EndpointUri};
use glob::Pattern;
use regex::Regex;

use crate::Protocol;

mod connection;

pub(crate) use connection::shown_uri;
use connection::{take_connection, Authority, CONNECTION_PARAMETERS};
pub use connection::{Connection, IMPLICIT_FTPS_PORT};

const CONSUMER_PARAMETERS: &[&str] = &[
    "include",
    "exclude",
    "ant_include",
    "ant_exclude",
    "noop",
    "delete",
    "move",
    "move_failed",
    "idempotent",
    "read_lock",
    "read_lock_check_interval",
    "read_lock_min_length",
    "delay",
    "initial_delay",
    "max_messages_per_poll",
    "recursive",
    "local_work_directory",
    "spool_threshold",
];

const PRODUCER_PARAMETERS: &[&str] = &["file_name", "file_exist", "temp_prefix", "auto_create"];

/// Files above this size are downloaded to a local file rather than held in memory: 8 MiB.
pub const DEFAULT_SPOOL_THRESHOLD: u64 = 8 * 1024 * 1024;

/// Names remembered by `noop`/`idempotent`: the oldest is forgotten past this many, so a
/// folder of millions of files cannot grow the consumer's memory without bound.
pub const IDEMPOTENT_CAPACITY: usize = 10_000;

/// What the consumer does with a file once the route succeeded.
#[derive(Clone, Debug)]
pub enum AfterSuccess {
    /// Leave it, and remember its name so it is not taken again (`noop`, or nothing said).
    Leave,
    /// Delete it (`delete=true`).
    Delete,
    /// Rename it to this target (`move`).
    Move(MoveTarget),
}

/// Where `move`/`move_failed` put a file: a folder beside it, or a simple expression.
#[derive(Clone, Debug)]
pub enum MoveTarget {
    /// A folder relative to the endpoint's directory (`.done`); the file keeps its name.
    Folder(String),
    /// A simple expression giving the new path relative to the endpoint's directory
    /// (`.done/${file:name}.bak`).
    Expression(BoxExpression),
}

/// `readLock`: when a listed file may be taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadLock {
    /// At once.
    None,
    /// Once its size and modification time stayed the same for `read_lock_check_interval`.
    Changed,
}

/// A consumer's options.
#[derive(Clone, Debug)]
pub struct ConsumerOptions {
    /// Regex the whole file name must match.
    pub include: Option<Regex>,
    /// Regex: matching file names are skipped.
    pub exclude: Option<Regex>,
    /// Ant-style globs on the path relative to the directory (comma-separated).
    pub ant_include: Vec<Pattern>,
    /// Ant-style globs; matching paths are skipped.
    pub ant_exclude: Vec<Pattern>,
    /// What happens after success.
    pub after_success: AfterSuccess,
    /// Where a file goes after a failed route (else it stays for a retry).
    pub move_failed: Option<MoveTarget>,
    /// Skip files taken before (by path), remembering up to [`IDEMPOTENT_CAPACITY`].
    pub idempotent: bool,
    /// When a file may be taken.
    pub read_lock: ReadLock,
    /// `read_lock=changed`: how long size and time must stay unchanged.
    pub read_lock_check_interval: Duration,
    /// `read_lock=changed`: files shorter than this are not taken yet.
    pub read_lock_min_length: u64,
    /// Time between polls.
    pub delay: Duration,
    /// Time before the first poll.
    pub initial_delay: Duration,
    /// Files per poll; 0 takes all.
    pub max_messages_per_poll: usize,
    /// Also take files in sub-folders.
    pub recursive: bool,
    /// Where downloads above `spool_threshold` go (the system's temporary folder if `None`).
    pub local_work_directory: Option<PathBuf>,
    /// Files larger than this are downloaded to a local file and handed over by path.
    pub spool_threshold: u64,
}

/// What the producer does when the target exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileExist {
    /// Replace it.
    Override,
    /// Append the body.
    Append,
    /// Fail the exchange.
    Fail,
    /// Leave the existing file, and the exchange succeeds.
    Ignore,
}

/// A producer's options.
#[derive(Clone, Debug)]
pub struct ProducerOptions {
    /// Simple expression for the name (else `CamelFileName`, else the exchange id).
    pub file_name: Option<BoxExpression>,
    /// When the file exists.
    pub file_exist: FileExist,
    /// Upload under this prefix, then rename to the real name.
    pub temp_prefix: Option<String>,
    /// Create missing folders.
    pub auto_create: bool,
}

/// An endpoint's options.
#[derive(Clone)]
pub struct FtpOptions {
    /// The URI as written (shown only redacted).
    pub uri: String,
    /// Where to connect.
    pub connection: Connection,
    /// The directory, relative to the login folder (absolute when it starts with `/`).
    pub directory: String,
    /// Options of `from`.
    pub consumer: ConsumerOptions,
    /// Options of `to`.
    pub producer: ProducerOptions,
}

impl fmt::Debug for FtpOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The URI as written may carry the password and the key's passphrase.
        f.debug_struct("FtpOptions")
            .field("uri", &shown_uri(&self.uri))
            .field("connection", &self.connection)
            .field("directory", &self.directory)
            .field("consumer", &self.consumer)
            .field("producer", &self.producer)
            .finish()
    }
}

impl FtpOptions {
    /// Reads an endpoint's URI, rejecting unknown parameters.
    pub fn from_uri(
        protocol: Protocol,
        uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Self, CamelError> {
        // The errors of `camel_api` show the URI with its credentials (the password, the
        // key's passphrase) masked.
        Self::read(protocol, uri, ctx)
    }

    fn read(
        protocol: Protocol,
        mut uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Self, CamelError> {
        let raw = uri.as_str().to_string();
        let shown = shown_uri(&raw);
        let invalid = |why: String| CamelError::invalid_uri(shown.clone(), why);
        let path = uri.path().trim().to_string();
        let (authority, directory) = match path.find('/') {
            Some(slash) => (&path[..slash], &path[slash + 1..]),
            None => (path.as_str(), ""),
        };
        let (user_info, host_port) = match authority.rfind('@') {
            Some(at) => (Some(&authority[..at]), &authority[at + 1..]),
            None => (None, authority),
        };
        let (host, port) = match host_port.rsplit_once(':') {
            Some((h, p)) => {
                let port = p
                    .parse::<u16>()
                    .map_err(|_| invalid(format!("`{p}` is not a port number")))?;
                (h, Some(port))
            }
            // The default depends on `isImplicit`, read below.
            None => (host_port, None),
        };
        if host.is_empty() {
            return Err(invalid(format!(
                "the URI needs a host, as in {}://user@host:port/folder",
                protocol.scheme()
            )));
        }
        let (mut username, mut password) = (None, None);
        if let Some(info) = user_info {
            let (u, p) = match info.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (info, None),
            };
            username = Some(percent_decode(u)).filter(|u| !u.is_empty());
            password = p.map(percent_decode);
        }
        let p = &mut uri.parameters;
        let authority = Authority {
            host: host.to_string(),
            port,
            username,
            password,
        };
        let connection = take_connection(protocol, authority, p, &invalid)?;
        let directory = percent_decode(directory.trim_end_matches('/'));
        let consumer = take_consumer(p, ctx, &invalid)?;
        let producer = take_producer(p, ctx)?;
        let known: Vec<&str> = CONNECTION_PARAMETERS
            .iter()
            .chain(CONSUMER_PARAMETERS)
            .chain(PRODUCER_PARAMETERS)
            .copied()
            .collect();
        uri.parameters.finish(&known)?;
        Ok(FtpOptions {
            uri: raw,
            connection,
            directory,
            consumer,
            producer,
        })
    }
}

fn move_target(
    text: Option<String>,
    ctx: &dyn ComponentContext,
) -> Result<Option<MoveTarget>, CamelError> {
    let Some(text) = text else {
        return Ok(None);
    };
    if text.contains("${") {
        return Ok(Some(MoveTarget::Expression(
            ctx.expression("simple", &text)?,
        )));
    }
    Ok(Some(MoveTarget::Folder(
        text.trim_end_matches('/').to_string(),
    )))
}

fn take_consumer(
    p: &mut camel_api::Parameters,
    ctx: &dyn ComponentContext,
    invalid: &dyn Fn(String) -> CamelError,
) -> Result<ConsumerOptions, CamelError> {
    let regex = |name: &str, text: Option<String>| -> Result<Option<Regex>, CamelError> {
        text.map(|t| {
            // Camel matches the whole name.
            Regex::new(&format!("^(?:{t})$"))
                .map_err(|e| invalid(format!("`{name}` is not a regular expression: {e}")))
        })
        .transpose()
    };
    let globs = |name: &str, text: Option<String>| -> Result<Vec<Pattern>, CamelError> {
        text.map(|t| {
            t.split(',')
                .map(str::trim)
                .filter(|g| !g.is_empty())
                .map(|g| Pattern::new(g).map_err(|e| invalid(format!("`{name}` glob `{g}`: {e}"))))
                .collect()
        })
        .unwrap_or_else(|| Ok(Vec::new()))
    };
    let include = regex("include", p.take_str("include"))?;
    let exclude = regex("exclude", p.take_str("exclude"))?;
    let ant_include = globs("antInclude", p.take_str("ant_include"))?;
    let ant_exclude = globs("antExclude", p.take_str("ant_exclude"))?;
    let noop = p.take_bool("noop")?.unwrap_or(false);
    let delete = p.take_bool("delete")?.unwrap_or(false);
    let moved = move_target(p.take_str("move"), ctx)?;
    let after_success = match (noop, delete, moved) {
        (true, true, _) => return Err(invalid("`noop` and `delete` cannot both be true".into())),
        (true, _, Some(_)) => {
            return Err(invalid("`noop` and `move` cannot be used together".into()))
        }
        (_, true, Some(_)) => {
            return Err(invalid(
                "`delete` and `move` cannot be used together".into(),
            ))
        }
        (false, true, None) => AfterSuccess::Delete,
        (false, false, Some(target)) => AfterSuccess::Move(target),
        // Camel leaves a remote file untouched by default; it is then remembered, so it
        // is not taken again by every poll.
        (_, false, None) => AfterSuccess::Leave,
    };
    let idempotent = p
        .take_bool("idempotent")?
        .unwrap_or(matches!(after_success, AfterSuccess::Leave));
    let read_lock = match p.take_str("read_lock").as_deref().map(str::trim) {
        None | Some("none") => ReadLock::None,
        Some("changed") => ReadLock::Changed,
        Some(other) => {
            return Err(invalid(format!(
                "readLock=`{other}` is not supported on remote files; use `none` or `changed` \
                 (size and time unchanged for readLockCheckInterval)"
            )))
        }
    };
    Ok(ConsumerOptions {
        include,
        exclude,
        ant_include,
        ant_exclude,
        after_success,
        move_failed: move_target(p.take_str("move_failed"), ctx)?,
        idempotent,
        read_lock,
        read_lock_check_interval: p
            .take_duration("read_lock_check_interval")?
            .unwrap_or(Duration::from_millis(1000)),
        read_lock_min_length: p.take::<u64>("read_lock_min_length")?.unwrap_or(1),
        delay: p
            .take_duration("delay")?
            .unwrap_or(Duration::from_millis(500)),
        initial_delay: p
            .take_duration("initial_delay")?
            .unwrap_or(Duration::from_millis(1000)),
        max_messages_per_poll: p.take::<usize>("max_messages_per_poll")?.unwrap_or(0),
        recursive: p.take_bool("recursive")?.unwrap_or(false),
        local_work_directory: p.take_str("local_work_directory").map(PathBuf::from),
        spool_threshold: p
            .take::<u64>("spool_threshold")?
            .unwrap_or(DEFAULT_SPOOL_THRESHOLD),
    })
}

fn take_producer(
    p: &mut camel_api::Parameters,
    ctx: &dyn ComponentContext,
) -> Result<ProducerOptions, CamelError> {
    let file_name = p
        .take_str("file_name")
        .map(|text| ctx.expression("simple", &text))
        .transpose()?;
    let file_exist = match p.take_choice("file_exist", &["override", "append", "fail", "ignore"])? {
        Some("append") => FileExist::Append,
        Some("fail") => FileExist::Fail,
        Some("ignore") => FileExist::Ignore,
        _ => FileExist::Override,
    };
    Ok(ProducerOptions {
        file_name,
        file_exist,
        temp_prefix: p.take_str("temp_prefix").filter(|t| !t.is_empty()),
        auto_create: p.take_bool("auto_create")?.unwrap_or(true),
    })
}

/// `dir/name`, or `name` when `dir` is empty.
pub(crate) fn join(dir: &str, name: &str) -> String {
    match (dir.trim_end_matches('/'), name.trim_start_matches('/')) {
        ("", name) => name.to_string(),
        (dir, "") => dir.to_string(),
        (dir, name) => format!("{dir}/{name}"),
    }
}

#[cfg(test)]
mod tests;
