//! The watching loop: look, compare with the last look, send one exchange per event.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use camel_api::{names, CamelError, Consumer, ConsumerContext, Exchange};

use super::snapshot::{self, changes, FileEvent, Snapshot, MAX_ENTRIES};
use super::{Watch, FILE_EVENT_TYPE};

#[derive(Debug)]
pub(super) struct FileWatchConsumer {
    pub(super) uri: Arc<str>,
    pub(super) watch: Watch,
}

/// The folder as last seen, and what the endpoint wants to hear of it.
#[derive(Debug)]
pub(super) struct Watcher {
    uri: Arc<str>,
    watch: Watch,
    /// The absolute folder, for the path headers.
    base: PathBuf,
    last: Snapshot,
}

impl Watcher {
    /// Creates the folder if asked to and takes the first look: what is there now raises
    /// no event.
    pub(super) async fn start(uri: Arc<str>, watch: Watch) -> Result<Watcher, CamelError> {
        let dir = &watch.dir;
        if !tokio::fs::try_exists(dir).await.unwrap_or(false) {
            if !watch.auto_create {
                return Err(CamelError::invalid_uri(
                    uri,
                    format!(
                        "the folder `{}` does not exist (auto_create=false)",
                        dir.display()
                    ),
                ));
            }
            tokio::fs::create_dir_all(dir)
                .await
                .map_err(|e| CamelError::external(format!("file-watch `{}`", dir.display()), e))?;
        }
        let base = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
        let last = look(&uri, &watch).await?;
        tracing::info!(uri = %uri, entries = last.entries.len(), "file-watch is watching");
        Ok(Watcher {
            uri,
            watch,
            base,
            last,
        })
    }

    /// Looks again: the wanted events since the last look, cut to `queue_size`.
    pub(super) async fn changes(&mut self) -> Result<Vec<(FileEvent, String)>, CamelError> {
        let now = look(&self.uri, &self.watch).await?;
        let events = changes(&self.last, &now);
        self.last = now;
        let mut wanted: Vec<_> = events
            .into_iter()
            .filter(|(kind, name)| {
                self.watch.events.contains(kind) && self.watch.include.matches(name)
            })
            .collect();
        if wanted.len() > self.watch.queue_size {
            tracing::warn!(uri = %self.uri, events = wanted.len(), queue_size = self.watch.queue_size,
                "file-watch OVERFLOW: events past queue_size are dropped");
            wanted.truncate(self.watch.queue_size);
        }
        Ok(wanted)
    }

    pub(super) fn exchange(&self, kind: FileEvent, name: &str) -> Exchange {
        event_exchange(&self.base, kind, name)
    }
}

/// A look at the folder, off the async workers (a big tree takes a while).
async fn look(uri: &Arc<str>, watch: &Watch) -> Result<Snapshot, CamelError> {
    let (dir, recursive) = (watch.dir.clone(), watch.recursive);
    let scanned = tokio::task::spawn_blocking(move || snapshot::scan(&dir, recursive))
        .await
        .map_err(|e| CamelError::processor(format!("file-watch scan: {e}")))?;
    let snapshot = scanned
        .map_err(|e| CamelError::external(format!("file-watch `{}`", watch.dir.display()), e))?;
    if snapshot.truncated {
        tracing::warn!(uri = %uri, limit = MAX_ENTRIES,
            "file-watch sees only the first entries of a folder this large");
    }
    Ok(snapshot)
}

#[async_trait]
impl Consumer for FileWatchConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let delay = self.watch.delay;
        let mut watcher = Watcher::start(self.uri.clone(), self.watch).await?;
        loop {
            tokio::select! {
                biased;
                () = ctx.cancelled() => return Ok(()),
                () = tokio::time::sleep(delay) => {}
            }
            let events = match watcher.changes().await {
                Ok(events) => events,
                // The folder went away or cannot be read: say so and look again later.
                Err(error) => {
                    tracing::warn!(uri = %self.uri, %error, "file-watch cannot read its folder");
                    continue;
                }
            };
            for (kind, name) in events {
                if ctx.is_cancelled() {
                    return Ok(());
                }
                match ctx.send(watcher.exchange(kind, &name)).await {
                    Ok(_) => {}
                    Err(CamelError::Stopping(_)) => return Ok(()),
                    Err(error) => tracing::warn!(uri = %self.uri, file = %name,
                        event = kind.name(), %error, "file-watch exchange failed"),
                }
            }
        }
    }
}

/// The exchange of one event on `name` (relative to `base`).
fn event_exchange(base: &Path, kind: FileEvent, name: &str) -> Exchange {
    let absolute = base.join(name);
    let absolute_text = absolute.to_string_lossy().into_owned();
    let parent = absolute
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let only = name.rsplit('/').next().unwrap_or(name).to_string();
    let seen = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    Exchange::new(absolute_text.clone())
        .with_header(FILE_EVENT_TYPE, kind.name())
        .with_header(names::FILE_NAME, name)
        .with_header("CamelFileRelativePath", name)
        .with_header("CamelFileNameConsumed", name)
        .with_header("CamelFileNameOnly", only)
        .with_header("CamelFileAbsolute", true)
        .with_header("CamelFileAbsolutePath", absolute_text.clone())
        .with_header("CamelFilePath", absolute_text)
        .with_header("CamelFileParent", parent)
        .with_header("CamelFileLastModified", seen)
        .with_header(crate::scheduler::MESSAGE_TIMESTAMP, seen)
}
