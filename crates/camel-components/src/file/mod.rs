//! `file:DIR` — read files from a directory (consumer) or write bodies to files (producer).
//!
//! The consumer polls `DIR`: every file whose name matches `include` becomes one exchange
//! (body = the file's bytes, headers below), taken in name order. After the route
//! succeeds the file is moved to `DIR/.camel/` (or `move`), deleted (`delete`), or left
//! where it is and never taken again by this consumer (`noop`). When the route fails the
//! file stays and is tried again on a later poll. Dot-files and dot-folders (so `.camel`
//! itself) are never taken. Only regular files are taken: FIFOs, sockets and devices are
//! skipped unopened, symbolic links are skipped unless `follow_symlinks` is set and then
//! taken only when they resolve inside `DIR`; a skipped entry is logged (at most once a
//! minute) and never keeps the rest of the folder from being taken.
//!
//! The producer writes the body to `DIR/NAME`, where NAME is the `file_name` expression
//! (simple language), else the `CamelFileName` header, else the exchange id. NAME may
//! contain sub-folders, which are created, but never `..` or an absolute path, and a
//! symbolic link on the way must resolve inside `DIR`: a message cannot write outside
//! `DIR`. `Append` refuses a name that is a link. An `Override` write goes to a hidden,
//! short temporary file first and is renamed into place, so a consumer of `DIR` never
//! reads half a file.
//!
//! # URI options
//!
//! Consumer:
//!
//! | Option | Default | Meaning |
//! |---|---|---|
//! | `include` | all | Glob on the file name (`*.csv`). Camel's `include` is a regex; this one is a glob. |
//! | `exclude` | none | Glob on the file name; matching files are skipped. |
//! | `noop` | `false` | Leave the file in place; it is not taken again while the route runs. |
//! | `delete` | `false` | Delete the file after success. |
//! | `move` | `.camel` | Folder (relative to `DIR`, or absolute) the file is moved to after success. |
//! | `move_failed` | none | Folder the file is moved to after a failure, instead of staying for a retry. |
//! | `initial_delay` | `1000` (ms) | Time before the first poll. |
//! | `delay` | `500` (ms) | Time between polls. |
//! | `recursive` | `false` | Also read sub-folders (except dot-folders and the `move` folder). |
//! | `max_messages_per_poll` | `0` | At most this many files per poll; `0` takes all. |
//! | `follow_symlinks` | `false` | Take links whose target resolves inside `DIR`. |
//! | `idempotent` | `false` (`true` with `noop`) | Skip files taken before, by key, remembering the last 1000 keys in memory. |
//! | `idempotent_key` | absolute path | Simple expression for the key (`${file:name}-${file:modified}`). |
//! | `idempotent_eager` | `true` | Accepted; one consumer takes its files one at a time either way. |
//! | `scheduler` | none | `spring` or `quartz`: poll on `scheduler.cron` (and `scheduler.time_zone`) instead of every `delay`. |
//! | `partition`, `partitions` | none | Take only the files whose name (relative to `DIR`) hashes to partition `partition` of `partitions`. Set by a partitioned route (`partitions: N`, docs/cluster.md), not by hand. camel-rs only. |
//! | `lazy_body` | `false` | Leave the body empty instead of reading the file; a `split` reads it from `CamelFileAbsolutePath` (with `streaming`, in chunks: any size in bounded memory). camel-rs only: Camel's file body is always lazy. |
//!
//! Producer:
//!
//! | Option | Default | Meaning |
//! |---|---|---|
//! | `file_name` | none | Simple expression for the file name (`${header.id}.json`). |
//! | `file_exist` | `Override` | When the file exists: `Override`, `Append`, `Fail` or `Ignore`. |
//!
//! Both: `auto_create` (default `true`) creates `DIR` (and the producer's sub-folders).
//!
//! Headers set by the consumer: `CamelFileName` (path relative to `DIR`, `/`-separated),
//! `CamelFileNameOnly`, `CamelFileLength`, `CamelFileLastModified` (ms since the epoch),
//! `CamelFileAbsolutePath`. The producer sets `CamelFileNameProduced` (the path written).
//!
//! ```
//! use camel_api::{Component, EndpointUri, Exchange};
//! use camel_components::{BareContext, FileComponent};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let dir = tempfile::tempdir().unwrap();
//! let uri = EndpointUri::parse(&format!("file:{}", dir.path().display())).unwrap();
//! let endpoint = FileComponent.endpoint(uri, &BareContext).unwrap();
//! let ex = Exchange::new("hello").with_header("CamelFileName", "out/greeting.txt");
//! endpoint.producer().unwrap().process(ex).await.unwrap();
//! let written = std::fs::read_to_string(dir.path().join("out/greeting.txt")).unwrap();
//! assert_eq!(written, "hello");
//! # }
//! ```

mod consumer;
mod cron_poll;
mod folder;
mod idempotent;
mod path;
mod producer;

pub use idempotent::CAPACITY as IDEMPOTENT_CAPACITY;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use camel_api::{
    BoxExpression, BoxProcessor, CamelError, Component, ComponentContext, Consumer, Endpoint,
    EndpointUri,
};
use glob::Pattern;

/// Header names the file component sets and reads (besides `camel_api::names::FILE_NAME`).
pub mod headers {
    /// The file's name without its folders.
    pub const FILE_NAME_ONLY: &str = "CamelFileNameOnly";
    /// The file's size in bytes.
    pub const FILE_LENGTH: &str = "CamelFileLength";
    /// The file's last modification, in milliseconds since the Unix epoch.
    pub const FILE_LAST_MODIFIED: &str = "CamelFileLastModified";
    /// The file's absolute path.
    pub const FILE_ABSOLUTE_PATH: &str = "CamelFileAbsolutePath";
    /// The path the producer wrote.
    pub const FILE_NAME_PRODUCED: &str = "CamelFileNameProduced";
}

const OPTIONS: &[&str] = &[
    "include",
    "exclude",
    "noop",
    "delete",
    "move",
    "move_failed",
    "initial_delay",
    "delay",
    "recursive",
    "max_messages_per_poll",
    "follow_symlinks",
    "lazy_body",
    "idempotent",
    "idempotent_key",
    "idempotent_eager",
    "partition",
    "partitions",
    "scheduler",
    "scheduler.cron",
    "scheduler.time_zone",
    "file_name",
    "file_exist",
    "auto_create",
];
const DEFAULT_MOVE: &str = ".camel";

/// The `file` component. Stateless: each endpoint owns its folder and options.
#[derive(Clone, Copy, Debug, Default)]
pub struct FileComponent;

/// What the consumer does with a file once the route succeeded.
#[derive(Clone, Debug, PartialEq, Eq)]
enum AfterSuccess {
    Leave,
    Delete,
    MoveTo(PathBuf),
}

/// The consumer's options.
#[derive(Clone, Debug)]
struct ConsumerOptions {
    include: Option<Pattern>,
    exclude: Option<Pattern>,
    after_success: AfterSuccess,
    move_failed: Option<PathBuf>,
    initial_delay: Duration,
    delay: Duration,
    recursive: bool,
    /// 0 = no limit.
    max_per_poll: usize,
    /// Take symbolic links whose target stays inside the folder.
    follow_symlinks: bool,
    /// Hand the file over unread (empty body); a streaming `split` reads it.
    lazy_body: bool,
    /// Skip files whose key was taken already (`idempotent`, `idempotent_key`).
    idempotent: Option<idempotent::Idempotent>,
    /// With `noop`: remember the names taken so they are not taken again.
    remember_noop: bool,
    /// Poll on this cron expression instead of every `delay` (`scheduler.cron`).
    schedule: Option<crate::schedule::CronExpression>,
    /// A partitioned route's share: take only names hashing to `.0` of `.1`.
    partition: Option<(u32, u32)>,
}

/// What the producer does when the target file exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FileExist {
    Override,
    Append,
    Fail,
    Ignore,
}

/// Why the file producer refused or failed a write.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// The file name would leave the endpoint's folder (`..`, an absolute path).
    #[error("file name `{0}` must stay inside the endpoint folder (no `..`, no absolute path)")]
    OutsideFolder(String),
    /// A folder of the file name is a symbolic link that resolves outside the endpoint
    /// folder.
    #[error("file name `{name}` goes through the link `{link}` to `{target}`, outside the endpoint folder")]
    LinkOutside {
        /// The message's file name.
        name: String,
        /// The link met on the way.
        link: PathBuf,
        /// Where it resolves.
        target: PathBuf,
    },
    /// `file_exist=Append` and the file is a symbolic link.
    #[error("`{0}` is a symbolic link; file_exist=Append does not write through links")]
    AppendToLink(PathBuf),
    /// The file name is empty.
    #[error("the file name is empty")]
    EmptyName,
    /// The file exists and `file_exist=Fail`.
    #[error("`{0}` already exists (file_exist=Fail)")]
    Exists(PathBuf),
    /// Reading or writing failed.
    #[error("`{path}`: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl From<FileError> for CamelError {
    fn from(error: FileError) -> Self {
        CamelError::external("file", error)
    }
}

impl Component for FileComponent {
    fn scheme(&self) -> &str {
        "file"
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let dir = PathBuf::from(crate::endpoint_name(&uri, "file:inbox")?);
        let raw = uri.raw();
        let bad = |reason: &str| CamelError::invalid_uri(raw.clone(), reason);
        let p = &mut uri.parameters;
        let glob = |text: Option<String>| -> Result<Option<Pattern>, CamelError> {
            text.map(|t| {
                Pattern::new(&t)
                    .map_err(|e| CamelError::invalid_uri(raw.clone(), format!("glob `{t}`: {e}")))
            })
            .transpose()
        };
        let include = glob(p.take_str("include"))?;
        let exclude = glob(p.take_str("exclude"))?;
        let noop = p.take_bool("noop")?.unwrap_or(false);
        let delete = p.take_bool("delete")?.unwrap_or(false);
        let move_to = p.take_str("move");
        let after_success = match (noop, delete, move_to) {
            (true, true, _) => return Err(bad("`noop` and `delete` cannot both be true")),
            (_, true, Some(_)) => return Err(bad("`delete` and `move` cannot be used together")),
            (true, false, _) => AfterSuccess::Leave,
            (false, true, None) => AfterSuccess::Delete,
            (false, false, target) => {
                AfterSuccess::MoveTo(dir.join(target.as_deref().unwrap_or(DEFAULT_MOVE)))
            }
        };
        let remembered = idempotent::take(p, ctx, noop, &bad)?;
        let schedule = cron_poll::take(p, &raw)?;
        let partition = camel_cluster::partition_options(
            p.take_str("partition").as_deref(),
            p.take_str("partitions").as_deref(),
        )
        .map_err(|why| bad(&why))?;
        let consumer = ConsumerOptions {
            include,
            exclude,
            after_success,
            move_failed: p.take_str("move_failed").map(|m| dir.join(m)),
            initial_delay: p
                .take_duration("initial_delay")?
                .unwrap_or(Duration::from_millis(1000)),
            delay: p
                .take_duration("delay")?
                .unwrap_or(Duration::from_millis(500)),
            recursive: p.take_bool("recursive")?.unwrap_or(false),
            max_per_poll: p.take::<usize>("max_messages_per_poll")?.unwrap_or(0),
            follow_symlinks: p.take_bool("follow_symlinks")?.unwrap_or(false),
            lazy_body: p.take_bool("lazy_body")?.unwrap_or(false),
            idempotent: remembered.idempotent,
            remember_noop: remembered.remember_noop,
            schedule,
            partition,
        };
        let file_name = p
            .take_str("file_name")
            .map(|text| ctx.expression("simple", &text))
            .transpose()?;
        let file_exist =
            match p.take_choice("file_exist", &["override", "append", "fail", "ignore"])? {
                Some("append") => FileExist::Append,
                Some("fail") => FileExist::Fail,
                Some("ignore") => FileExist::Ignore,
                _ => FileExist::Override,
            };
        let auto_create = p.take_bool("auto_create")?.unwrap_or(true);
        uri.parameters.finish(OPTIONS)?;
        Ok(Arc::new(FileEndpoint {
            uri: raw,
            dir,
            consumer,
            file_name,
            file_exist,
            auto_create,
        }))
    }
}

#[derive(Debug)]
struct FileEndpoint {
    uri: Arc<str>,
    dir: PathBuf,
    consumer: ConsumerOptions,
    file_name: Option<BoxExpression>,
    file_exist: FileExist,
    auto_create: bool,
}

impl Endpoint for FileEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Ok(BoxProcessor::new(producer::FileProducer {
            dir: self.dir.clone(),
            file_name: self.file_name.clone(),
            file_exist: self.file_exist,
            auto_create: self.auto_create,
        })
        .named("file"))
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        Ok(Box::new(consumer::FileConsumer::new(
            self.uri.clone(),
            self.dir.clone(),
            self.consumer.clone(),
            self.auto_create,
        )))
    }
}
