//! The polling file consumer: list, sort, send one exchange per file, then move, delete
//! or remember it.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use async_trait::async_trait;
use camel_api::{names, CamelError, Consumer, ConsumerContext, Exchange};

use super::path::{is_hidden, relative_name};
use super::{headers, AfterSuccess, ConsumerOptions, FileError};

/// One file found by a poll.
#[derive(Debug)]
struct Found {
    /// `/`-separated, relative to the endpoint folder; also the sort key.
    name: String,
    path: PathBuf,
}

pub(super) struct FileConsumer {
    uri: Arc<str>,
    dir: PathBuf,
    options: ConsumerOptions,
    auto_create: bool,
    /// With `noop`: files already handled successfully in this run.
    done: HashSet<String>,
}

impl fmt::Debug for FileConsumer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileConsumer")
            .field("uri", &self.uri)
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

/// How a poll ended.
enum Poll {
    Done,
    /// The route is closed: stop polling.
    Stopped,
}

impl FileConsumer {
    pub(super) fn new(
        uri: Arc<str>,
        dir: PathBuf,
        options: ConsumerOptions,
        auto_create: bool,
    ) -> Self {
        FileConsumer {
            uri,
            dir,
            options,
            auto_create,
            done: HashSet::new(),
        }
    }

    /// Files to take in this poll, sorted by name.
    async fn scan(&self) -> Result<Vec<Found>, FileError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| FileError::Io { path, source }
        };
        let skip_dir = match &self.options.after_success {
            AfterSuccess::MoveTo(target) => Some(target.as_path()),
            _ => None,
        };
        let mut found = Vec::new();
        let mut folders = vec![self.dir.clone()];
        while let Some(folder) = folders.pop() {
            let mut entries = tokio::fs::read_dir(&folder).await.map_err(io(&folder))?;
            while let Some(entry) = entries.next_entry().await.map_err(io(&folder))? {
                let file_name = entry.file_name().to_string_lossy().into_owned();
                if is_hidden(&file_name) {
                    continue;
                }
                let path = entry.path();
                let kind = entry.file_type().await.map_err(io(&path))?;
                if kind.is_dir() {
                    let moved_here = skip_dir.is_some_and(|d| d == path);
                    let failed_here = self.options.move_failed.as_deref() == Some(&path);
                    if self.options.recursive && !moved_here && !failed_here {
                        folders.push(path);
                    }
                    continue;
                }
                if !self.wanted(&file_name) {
                    continue;
                }
                let name = relative_name(&self.dir, &path);
                if !self.done.contains(&name) {
                    found.push(Found { name, path });
                }
            }
        }
        found.sort_by(|a, b| a.name.cmp(&b.name));
        if self.options.max_per_poll > 0 {
            found.truncate(self.options.max_per_poll);
        }
        Ok(found)
    }

    fn wanted(&self, file_name: &str) -> bool {
        self.options
            .include
            .as_ref()
            .is_none_or(|p| p.matches(file_name))
            && !self
                .options
                .exclude
                .as_ref()
                .is_some_and(|p| p.matches(file_name))
    }

    async fn poll(&mut self, ctx: &ConsumerContext) -> Result<Poll, FileError> {
        for file in self.scan().await? {
            if ctx.is_cancelled() {
                break;
            }
            let Some(exchange) = read(&file).await? else {
                continue; // Gone since the listing (another consumer took it).
            };
            let id = exchange.id;
            match ctx.send(exchange).await {
                Ok(_) => self.succeeded(file).await,
                Err(CamelError::Stopping(_)) => return Ok(Poll::Stopped),
                Err(error) => {
                    tracing::warn!(uri = %self.uri, file = %file.name, exchange_id = %id, %error,
                        "route failed; the file stays for a later poll");
                    if let Some(target) = &self.options.move_failed {
                        move_file(&file, target).await;
                    }
                }
            }
        }
        Ok(Poll::Done)
    }

    async fn succeeded(&mut self, file: Found) {
        match &self.options.after_success {
            AfterSuccess::Leave => {
                self.done.insert(file.name);
            }
            AfterSuccess::Delete => {
                if let Err(error) = tokio::fs::remove_file(&file.path).await {
                    tracing::warn!(uri = %self.uri, file = %file.name, %error, "cannot delete a consumed file");
                }
            }
            AfterSuccess::MoveTo(target) => move_file(&file, target).await,
        }
    }
}

/// The exchange for `file`, or `None` when it disappeared.
async fn read(file: &Found) -> Result<Option<Exchange>, FileError> {
    let io = |source| FileError::Io {
        path: file.path.clone(),
        source,
    };
    let not_found = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    let (meta, bytes) =
        match tokio::join!(tokio::fs::metadata(&file.path), tokio::fs::read(&file.path)) {
            (Ok(meta), Ok(bytes)) => (meta, bytes),
            (Err(e), _) | (_, Err(e)) if not_found(&e) => return Ok(None),
            (Err(e), _) | (_, Err(e)) => return Err(io(e)),
        };
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let only = file
        .name
        .rsplit('/')
        .next()
        .unwrap_or(&file.name)
        .to_string();
    let absolute = std::path::absolute(&file.path).unwrap_or_else(|_| file.path.clone());
    Ok(Some(
        Exchange::new(bytes)
            .with_header(names::FILE_NAME, file.name.as_str())
            .with_header(headers::FILE_NAME_ONLY, only)
            .with_header(headers::FILE_LENGTH, meta.len())
            .with_header(headers::FILE_LAST_MODIFIED, modified)
            .with_header(
                headers::FILE_ABSOLUTE_PATH,
                absolute.to_string_lossy().into_owned(),
            ),
    ))
}

/// Moves `file` under `target`, keeping its relative name. A failure is logged: the file
/// then stays and is taken again by a later poll.
async fn move_file(file: &Found, target: &Path) {
    let to = target.join(&file.name);
    let moved = async {
        if let Some(parent) = to.parent() {
            tokio::fs::create_dir_all(parent).await?;
        }
        tokio::fs::rename(&file.path, &to).await
    };
    if let Err(error) = moved.await {
        tracing::warn!(file = %file.name, to = %to.display(), %error, "cannot move a consumed file");
    }
}

#[async_trait]
impl Consumer for FileConsumer {
    async fn run(mut self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        if self.auto_create {
            tokio::fs::create_dir_all(&self.dir)
                .await
                .map_err(|source| FileError::Io {
                    path: self.dir.clone(),
                    source,
                })?;
        }
        let mut wait = self.options.initial_delay;
        loop {
            tokio::select! {
                biased;
                () = ctx.cancelled() => return Ok(()),
                () = tokio::time::sleep(wait) => {}
            }
            wait = self.options.delay;
            match self.poll(&ctx).await {
                Ok(Poll::Done) => {}
                Ok(Poll::Stopped) => return Ok(()),
                // A folder that vanished or cannot be read: say so and try again later.
                Err(error) => tracing::warn!(uri = %self.uri, %error, "file poll failed"),
            }
        }
    }
}

#[cfg(test)]
mod tests;
