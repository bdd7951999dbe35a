//! The polling file consumer: list, sort, send one exchange per file, then move, delete
//! or remember it.

use std::collections::HashSet;
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use camel_api::{CamelError, Consumer, ConsumerContext};

use super::folder::resolve_parent;
use super::idempotent::KeyMemory;
use super::{AfterSuccess, ConsumerOptions, FileError};

mod read;
mod scan;
mod skip_log;

use scan::{Found, Skip};
use skip_log::SkipLog;

pub(super) struct FileConsumer {
    uri: Arc<str>,
    dir: PathBuf,
    options: ConsumerOptions,
    auto_create: bool,
    /// With `noop`: files already handled successfully in this run.
    done: HashSet<String>,
    /// With `idempotent`: the keys of the files taken.
    keys: KeyMemory,
    skips: SkipLog,
}

impl fmt::Debug for FileConsumer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileConsumer")
            .field("uri", &self.uri)
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

/// Whether a file may be taken, under `idempotent`.
enum Claim {
    /// Yes; with the key taken, if the consumer is idempotent.
    Taken(Option<String>),
    /// Its key was taken before: skip it.
    Seen,
    /// It went away since the listing.
    Gone,
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
            keys: KeyMemory::default(),
            skips: SkipLog::default(),
        }
    }

    async fn poll(&mut self, ctx: &ConsumerContext) -> Result<Poll, FileError> {
        let listing = scan::list(&self.dir, &self.options, &self.done).await?;
        let mut skipped = listing.skipped;
        let outcome = self.take(listing.files, ctx, &mut skipped).await;
        self.report(&skipped);
        Ok(outcome)
    }

    /// Sends one exchange per file, up to `max_messages_per_poll`; a file that cannot be
    /// read joins `skipped` and the rest are still taken.
    async fn take(
        &mut self,
        files: Vec<Found>,
        ctx: &ConsumerContext,
        skipped: &mut Vec<(String, Skip)>,
    ) -> Poll {
        let mut sent = 0;
        for file in files {
            let full = self.options.max_per_poll > 0 && sent == self.options.max_per_poll;
            if full || ctx.is_cancelled() {
                break;
            }
            let key = match self.claim(&file).await {
                Ok(Claim::Taken(key)) => key,
                Ok(Claim::Seen | Claim::Gone) => continue,
                Err(skip) => {
                    skipped.push((file.name, skip));
                    continue;
                }
            };
            let exchange = match read::read(&file, self.options.lazy_body).await {
                Ok(Some(exchange)) => exchange,
                Ok(None) => {
                    // Gone since the listing (another consumer took it).
                    self.release(key.as_deref());
                    continue;
                }
                Err(skip) => {
                    self.release(key.as_deref());
                    skipped.push((file.name, skip));
                    continue;
                }
            };
            let id = exchange.id;
            sent += 1;
            match ctx.send(exchange).await {
                Ok(_) => self.succeeded(file).await,
                Err(CamelError::Stopping(_)) => {
                    self.release(key.as_deref());
                    return Poll::Stopped;
                }
                Err(error) => {
                    // Given back, so the file is tried again (unless moved away below).
                    self.release(key.as_deref());
                    tracing::warn!(uri = %self.uri, file = %file.name, exchange_id = %id, %error,
                        "route failed; the file stays for a later poll");
                    if let Some(target) = &self.options.move_failed {
                        move_file(&self.dir, &file, target).await;
                    }
                }
            }
        }
        Poll::Done
    }

    /// With `idempotent`: takes the file's key, or says the file was taken before.
    async fn claim(&mut self, file: &Found) -> Result<Claim, Skip> {
        let Some(idempotent) = &self.options.idempotent else {
            return Ok(Claim::Taken(None));
        };
        let key = match &idempotent.key {
            None => read::absolute(file),
            Some(expression) => {
                let Some(headers) = read::headers_only(file).await? else {
                    return Ok(Claim::Gone);
                };
                expression
                    .evaluate(&headers)
                    .map_err(|e| {
                        Skip::Unreadable(std::io::Error::other(format!("idempotent_key: {e}")))
                    })?
                    .to_string()
            }
        };
        if self.keys.contains(&key) {
            tracing::debug!(uri = %self.uri, file = %file.name, %key,
                "file taken before (idempotent): skipped");
            return Ok(Claim::Seen);
        }
        self.keys.insert(key.clone());
        Ok(Claim::Taken(Some(key)))
    }

    /// Gives a key back: the file was not handled.
    fn release(&mut self, key: Option<&str>) {
        if let Some(key) = key {
            self.keys.remove(key);
        }
    }

    /// Warns about skipped entries, each at most once per `skip_log::REPEAT_AFTER`.
    fn report(&mut self, skipped: &[(String, Skip)]) {
        let now = tokio::time::Instant::now();
        let due: HashSet<&str> = self
            .skips
            .due(skipped.iter().map(|(name, _)| name.as_str()), now)
            .into_iter()
            .collect();
        for (name, reason) in skipped.iter().filter(|(n, _)| due.contains(n.as_str())) {
            tracing::warn!(uri = %self.uri, file = %name, reason = %reason,
                "file skipped; the rest of the folder is still taken");
        }
    }

    async fn succeeded(&mut self, file: Found) {
        match &self.options.after_success {
            AfterSuccess::Leave => {
                if self.options.remember_noop {
                    self.done.insert(file.name);
                }
            }
            AfterSuccess::Delete => {
                if let Err(error) = tokio::fs::remove_file(&file.path).await {
                    tracing::warn!(uri = %self.uri, file = %file.name, %error, "cannot delete a consumed file");
                }
            }
            AfterSuccess::MoveTo(target) => move_file(&self.dir, &file, target).await,
        }
    }
}

/// Moves `file` under `target`, keeping its relative name. A failure is logged: the file
/// then stays and is taken again by a later poll.
///
/// A move folder inside `dir` (`.camel`, `move=done`) is resolved from `dir` like a
/// produced file, so a link planted in its place cannot carry consumed files out of the
/// folder; an absolute or `..` move folder is the route author's choice, and only the
/// file's own sub-folders are resolved beneath it.
async fn move_file(dir: &Path, file: &Found, target: &Path) {
    let (base, relative) = match target.strip_prefix(dir) {
        Ok(rest) if rest.components().all(|c| matches!(c, Component::Normal(_))) => {
            (dir.to_path_buf(), rest.join(&file.name))
        }
        _ => (target.to_path_buf(), PathBuf::from(&file.name)),
    };
    let (from, name) = (file.path.clone(), file.name.clone());
    let moved = tokio::task::spawn_blocking(move || {
        let folder = resolve_parent(&base, &relative, &name, true)?;
        let to = folder.join(relative.file_name().unwrap_or_default());
        std::fs::rename(&from, &to).map_err(|source| FileError::Io { path: to, source })
    })
    .await;
    let error = match moved {
        Ok(Ok(())) => return,
        Ok(Err(error)) => error.to_string(),
        Err(panicked) => panicked.to_string(),
    };
    tracing::warn!(file = %file.name, to = %target.display(), %error, "cannot move a consumed file");
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
            if let Some(cron) = &self.options.schedule {
                // On a cron scheduler, the polls are the cron's firings (no initial delay).
                let clock = crate::schedule::SystemClock;
                let now = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now());
                let Some(at) = cron.next_after(now) else {
                    tracing::warn!(uri = %self.uri, cron = %cron, "the cron schedule has no more firings: polling stops");
                    return Ok(());
                };
                if !crate::schedule::sleep_until(&clock, at, &ctx).await {
                    return Ok(());
                }
            } else {
                tokio::select! {
                    biased;
                    () = ctx.cancelled() => return Ok(()),
                    () = tokio::time::sleep(wait) => {}
                }
                wait = self.options.delay;
            }
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
mod entry_tests;
#[cfg(test)]
mod option_tests;
#[cfg(test)]
mod tests;
