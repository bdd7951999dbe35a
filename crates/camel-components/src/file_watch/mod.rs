//! `file-watch:DIR` — a route source with one exchange per change in a folder: a file
//! (or folder, link, FIFO …) created, modified or deleted (Camel's camel-file-watch).
//!
//! The folder is looked at every `delay` and compared with the previous look (see
//! ADR 0110 for why polling and not inotify): an entry that appeared is `CREATE`, one
//! whose length or modification time changed is `MODIFY`, one that went is `DELETE`.
//! What was there when the route started raises no event. Entries are read with
//! `lstat` and never opened, and links are never followed, so a FIFO, a device or a link
//! to `/` can neither block nor widen the watch. A change undone between two looks (a
//! file written and removed within `delay`) is not seen.
//!
//! Each exchange has the absolute path as its body and Camel's headers:
//! `CamelFileEventType` (`CREATE`, `MODIFY`, `DELETE`), `CamelFileName` and
//! `CamelFileRelativePath` and `CamelFileNameConsumed` (relative to `DIR`, `/`-separated),
//! `CamelFileNameOnly`, `CamelFileAbsolute` (`true`), `CamelFileAbsolutePath` and
//! `CamelFilePath`, `CamelFileParent`, and `CamelFileLastModified` and
//! `CamelMessageTimestamp` (when the change was seen, ms since the Unix epoch).
//!
//! # URI options
//!
//! | Option | Default | Meaning |
//! |---|---|---|
//! | `events` | `CREATE,MODIFY,DELETE` | The kinds of event to send. |
//! | `recursive` | `true` | Watch sub-folders too (new ones included). |
//! | `ant_include` | `**` | Ant pattern on the relative path (`**/*.csv`). |
//! | `auto_create` | `true` | Create `DIR` when missing; otherwise a missing `DIR` fails the start. |
//! | `queue_size` | `10000` | The most events one look sends; the rest of that look's events are dropped with a warning (Camel's OVERFLOW). |
//! | `delay` | `500` (ms) | Time between looks. camel-rs only. |
//! | `concurrent_consumers`, `poll_threads`, `use_file_hashing` | | Accepted; events go one at a time, and a change is a change of length or modification time. |
//!
//! ```
//! use camel_api::{Component, EndpointUri};
//! use camel_components::{BareContext, FileWatchComponent};
//!
//! let uri = EndpointUri::parse("file-watch:inbox?events=CREATE,DELETE&antInclude=**/*.csv").unwrap();
//! assert!(FileWatchComponent.endpoint(uri, &BareContext).is_ok());
//! ```

mod ant;
mod consumer;
mod snapshot;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Consumer, Endpoint, EndpointUri,
};

use ant::AntPattern;
pub use snapshot::{FileEvent, MAX_ENTRIES};

/// Header with the kind of event: `CREATE`, `MODIFY` or `DELETE`.
pub const FILE_EVENT_TYPE: &str = "CamelFileEventType";

const OPTIONS: &[&str] = &[
    "events",
    "recursive",
    "ant_include",
    "auto_create",
    "queue_size",
    "delay",
    "concurrent_consumers",
    "poll_threads",
    "use_file_hashing",
];
const DEFAULT_QUEUE_SIZE: usize = 10_000;
const DEFAULT_DELAY: Duration = Duration::from_millis(500);

/// The `file-watch` component. Stateless: each endpoint owns its folder.
#[derive(Clone, Copy, Debug, Default)]
pub struct FileWatchComponent;

/// What one endpoint watches and sends.
#[derive(Clone, Debug)]
struct Watch {
    dir: PathBuf,
    events: BTreeSet<FileEvent>,
    recursive: bool,
    include: AntPattern,
    auto_create: bool,
    queue_size: usize,
    delay: Duration,
}

impl Component for FileWatchComponent {
    fn scheme(&self) -> &str {
        "file-watch"
    }

    fn endpoint(
        &self,
        uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.raw();
        let watch = Watch::parse(uri)?;
        Ok(Arc::new(FileWatchEndpoint { uri: raw, watch }))
    }
}

impl Watch {
    /// The watch a URI asks for.
    fn parse(mut uri: EndpointUri) -> Result<Watch, CamelError> {
        let raw = uri.raw();
        let bad = |reason: String| CamelError::invalid_uri(raw.clone(), reason);
        // `uri: file-watch` with `path` in `parameters`, as Kaoto writes it.
        let path = match uri.path() {
            "" => uri.parameters.take_str("path").unwrap_or_default(),
            path => path.to_string(),
        };
        if path.is_empty() {
            return Err(bad(
                "this endpoint needs a folder, as in `file-watch:inbox`".into(),
            ));
        }
        let p = &mut uri.parameters;
        let events = match p.take_str("events") {
            None => [FileEvent::Create, FileEvent::Modify, FileEvent::Delete].into(),
            Some(text) => text
                .split(',')
                .map(|e| match e.trim().to_ascii_uppercase().as_str() {
                    "CREATE" => Ok(FileEvent::Create),
                    "MODIFY" => Ok(FileEvent::Modify),
                    "DELETE" => Ok(FileEvent::Delete),
                    other => Err(bad(format!(
                        "parameter `events`: `{other}` is not an event; use CREATE, MODIFY, DELETE"
                    ))),
                })
                .collect::<Result<BTreeSet<_>, _>>()?,
        };
        let include = p.take_str("ant_include").unwrap_or_else(|| "**".into());
        let watch = Watch {
            dir: PathBuf::from(path),
            events,
            recursive: p.take_bool("recursive")?.unwrap_or(true),
            include: AntPattern::new(if include.trim().is_empty() {
                "**"
            } else {
                &include
            }),
            auto_create: p.take_bool("auto_create")?.unwrap_or(true),
            queue_size: p.take::<usize>("queue_size")?.unwrap_or(DEFAULT_QUEUE_SIZE),
            delay: p.take_duration("delay")?.unwrap_or(DEFAULT_DELAY),
        };
        if watch.delay.is_zero() || watch.queue_size == 0 {
            return Err(bad("`delay` and `queue_size` must be more than 0".into()));
        }
        // Camel's JVM tuning: nothing here runs on those threads or hashes.
        for ignored in ["concurrent_consumers", "poll_threads"] {
            p.take::<u32>(ignored)?;
        }
        p.take_bool("use_file_hashing")?;
        uri.parameters.finish(OPTIONS)?;
        Ok(watch)
    }
}

#[derive(Debug)]
struct FileWatchEndpoint {
    uri: Arc<str>,
    watch: Watch,
}

impl Endpoint for FileWatchEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Err(CamelError::invalid_uri(
            self.uri.clone(),
            "file-watch can only start a route (`from`); write files with `file:`",
        ))
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        Ok(Box::new(consumer::FileWatchConsumer {
            uri: self.uri.clone(),
            watch: self.watch.clone(),
        }))
    }
}

#[cfg(test)]
mod tests;
