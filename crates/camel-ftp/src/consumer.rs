//! `from: ftp://…`: list, filter, download, route, then delete, move or remember, at
//! least once.
//!
//! Each poll lists the directory (and its sub-folders with `recursive`), keeps the files
//! the filters accept, and takes them in name order, one at a time, over one session kept
//! open between polls. Only after a file's route succeeded is it deleted (`delete`),
//! renamed (`move`), or remembered so that it is not taken again (`noop`, or neither
//! said: Camel leaves a remote file untouched by default). A failed route leaves the file
//! (or renames it by `moveFailed`), and the file is skipped for a while (1 s doubling to
//! 60 s while it keeps failing, unless it changes) so one bad file is not downloaded in
//! a tight loop. A session that fails is closed and opened again after a pause (200 ms
//! doubling to 30 s); the consumer's health says why meanwhile.
//!
//! A file larger than `spoolThreshold` is downloaded to a file in `localWorkDirectory`
//! (the system's temporary folder by default) and handed over as the `file` consumer's
//! lazy body is: an empty body and `CamelFileAbsolutePath`, so a streaming `split` or an
//! upload reads it in pieces. The local copy is removed once the exchange is done.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use camel_api::{Body, CamelError, Consumer, ConsumerContext, Exchange};
use tempfile::NamedTempFile;
use tokio::time::Instant;

use crate::headers;
use crate::idempotent::KeyMemory;
use crate::options::{
    join, shown_uri, AfterSuccess, FtpOptions, MoveTarget, ReadLock, IDEMPOTENT_CAPACITY,
};
use crate::read_lock::ChangedLock;
use crate::remote::{parent, EntryKind, RemoteError, RemoteResult, Session};

const FIRST_RETRY: Duration = Duration::from_secs(1);
const MAX_RETRY: Duration = Duration::from_secs(60);
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The consumer of one remote directory.
#[derive(Debug)]
pub(crate) struct FtpConsumer {
    options: Arc<FtpOptions>,
}

/// One file a listing found.
#[derive(Debug, Clone)]
struct Found {
    /// Relative to the endpoint's directory, `/`-separated.
    name: String,
    /// The path on the server.
    path: String,
    size: u64,
    modified: Option<i64>,
}

/// A file whose route failed: skipped until `at` unless it changed.
#[derive(Debug)]
struct Failed {
    size: u64,
    modified: Option<i64>,
    at: Instant,
    wait: Duration,
}

/// What the consumer keeps from one poll to the next.
struct State {
    session: Option<Session>,
    failed: HashMap<String, Failed>,
    lock: ChangedLock,
    taken: KeyMemory,
}

enum Poll {
    /// Every wanted file was taken: wait `delay`.
    Done,
    /// `maxMessagesPerPoll` was reached: poll again at once.
    Full,
    /// The route is stopping.
    Stopped,
}

impl FtpConsumer {
    pub(crate) fn new(options: Arc<FtpOptions>) -> Self {
        FtpConsumer { options }
    }

    async fn poll(&self, ctx: &ConsumerContext, state: &mut State) -> RemoteResult<Poll> {
        if state.session.is_none() {
            state.session = Some(Session::open(&self.options.connection).await?);
        }
        let Some(session) = state.session.as_mut() else {
            return Ok(Poll::Done);
        };
        let files = self.list(session).await?;
        ctx.health().set_healthy();
        let o = &self.options.consumer;
        state.lock.begin_poll();
        let now = Instant::now();
        state.failed.retain(|_, f| f.at + MAX_RETRY > now);
        let mut sent = 0;
        for file in files {
            if ctx.is_cancelled() {
                return Ok(Poll::Stopped);
            }
            if o.max_messages_per_poll > 0 && sent == o.max_messages_per_poll {
                return Ok(Poll::Full);
            }
            if let Some(f) = state.failed.get(&file.path) {
                if f.at > Instant::now() && f.size == file.size && f.modified == file.modified {
                    continue;
                }
            }
            if o.idempotent && state.taken.contains(&file.path) {
                continue;
            }
            if o.read_lock == ReadLock::Changed
                && !state
                    .lock
                    .ready(&file.path, file.size, file.modified, Instant::now())
            {
                continue;
            }
            state.lock.forget(&file.path);
            let retried = state.failed.contains_key(&file.path);
            let (mut exchange, spool) = match self.download(session, &file).await {
                Ok(Some(read)) => read,
                // Gone since the listing: another consumer took it.
                Ok(None) => continue,
                // The server refused this file alone (permissions): the others go on.
                Err(error) if error.refused => {
                    tracing::warn!(uri = %shown_uri(&self.options.uri), file = %file.name, %error,
                        "cannot download the remote file; it is tried again later");
                    remember_failure(&mut state.failed, &file);
                    continue;
                }
                Err(error) => return Err(error),
            };
            if retried {
                exchange
                    .properties
                    .insert(camel_api::error_kind::EXTERNAL_REDELIVERED, true);
            }
            sent += 1;
            if o.idempotent {
                state.taken.insert(file.path.clone());
            }
            let result = ctx.send(exchange).await;
            // The local copy goes whatever the outcome: a retry downloads the file again.
            drop(spool);
            match result {
                Ok(_) => {
                    match self.settle(session, &file).await {
                        Ok(()) => {
                            state.failed.remove(&file.path);
                        }
                        // Refused (permissions): taken again after a pause, a duplicate.
                        Err(error) if error.refused => {
                            tracing::warn!(uri = %shown_uri(&self.options.uri), file = %file.name, %error,
                                "the remote file was routed but could not be deleted or moved; it will be taken again");
                            remember_failure(&mut state.failed, &file);
                        }
                        Err(error) => return Err(error),
                    }
                }
                Err(CamelError::Stopping(_)) => {
                    state.taken.remove(&file.path);
                    return Ok(Poll::Stopped);
                }
                Err(error) => {
                    state.taken.remove(&file.path);
                    tracing::warn!(uri = %shown_uri(&self.options.uri), file = %file.name, %error,
                        "route failed; the remote file stays for a later poll");
                    remember_failure(&mut state.failed, &file);
                    if let Some(target) = &o.move_failed {
                        match self.move_file(session, &file, target).await {
                            Ok(()) => {}
                            Err(error) if error.refused => {
                                tracing::warn!(file = %file.name, %error, "cannot move the failed remote file; it stays");
                            }
                            Err(error) => return Err(error),
                        }
                    }
                }
            }
        }
        Ok(Poll::Done)
    }

    /// The wanted files of the directory (and sub-folders with `recursive`), by name.
    async fn list(&self, session: &mut Session) -> RemoteResult<Vec<Found>> {
        let o = &self.options.consumer;
        let root = &self.options.directory;
        let skip_folders: Vec<String> = [
            match &o.after_success {
                AfterSuccess::Move(MoveTarget::Folder(f)) => Some(f.clone()),
                _ => None,
            },
            match &o.move_failed {
                Some(MoveTarget::Folder(f)) => Some(f.clone()),
                _ => None,
            },
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut out = Vec::new();
        let mut folders = vec![String::new()];
        while let Some(relative) = folders.pop() {
            let entries = match session.list(&join(root, &relative)).await {
                Ok(entries) => entries,
                // A sub-folder gone since its parent was listed.
                Err(e) if e.not_found && !relative.is_empty() => continue,
                Err(e) => return Err(e),
            };
            for entry in entries {
                if entry.name.starts_with('.') {
                    continue;
                }
                let name = join(&relative, &entry.name);
                match entry.kind {
                    EntryKind::Folder => {
                        if o.recursive && !skip_folders.contains(&name) {
                            folders.push(name);
                        }
                    }
                    EntryKind::File => {
                        if self.wanted(&name, &entry.name) {
                            out.push(Found {
                                path: join(root, &name),
                                name,
                                size: entry.size,
                                modified: entry.modified,
                            });
                        }
                    }
                    EntryKind::Other => {}
                }
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    fn wanted(&self, relative: &str, file_name: &str) -> bool {
        let o = &self.options.consumer;
        o.include.as_ref().is_none_or(|r| r.is_match(file_name))
            && !o.exclude.as_ref().is_some_and(|r| r.is_match(file_name))
            && (o.ant_include.is_empty() || o.ant_include.iter().any(|g| g.matches(relative)))
            && !o.ant_exclude.iter().any(|g| g.matches(relative))
    }

    /// The file's headers on an empty exchange: what `move` expressions read.
    fn exchange_of(&self, file: &Found, length: u64) -> Exchange {
        let only = file
            .name
            .rsplit('/')
            .next()
            .unwrap_or(&file.name)
            .to_string();
        let mut exchange = Exchange::new(Body::Empty)
            .with_header(headers::FILE_NAME, file.name.as_str())
            .with_header(headers::FILE_NAME_ONLY, only)
            .with_header(headers::FILE_LENGTH, length)
            .with_header(headers::FILE_HOST, self.options.connection.host.as_str())
            .with_header(headers::FILE_PATH, file.path.as_str())
            .with_header(headers::FILE_PARENT, parent(&file.path));
        if let Some(t) = file.modified {
            exchange = exchange.with_header(headers::FILE_LAST_MODIFIED, t);
        }
        exchange
    }

    /// Downloads `file` into an exchange (into memory, or to a spool file above the
    /// threshold); `None` when the file is gone.
    async fn download(
        &self,
        session: &mut Session,
        file: &Found,
    ) -> RemoteResult<Option<(Exchange, Option<NamedTempFile>)>> {
        let o = &self.options.consumer;
        if file.size > o.spool_threshold {
            let what = format!("spooling `{}` to a local file", file.path);
            let spool = self.spool_file().map_err(|e| RemoteError::new(&what, e))?;
            let mut local =
                tokio::fs::File::from_std(spool.reopen().map_err(|e| RemoteError::new(&what, e))?);
            let n = match session.download(&file.path, &mut local).await {
                Ok(n) => n,
                Err(e) if e.not_found => return Ok(None),
                Err(e) => return Err(e),
            };
            let exchange = self.exchange_of(file, n).with_header(
                headers::FILE_ABSOLUTE_PATH,
                spool.path().to_string_lossy().into_owned(),
            );
            return Ok(Some((exchange, Some(spool))));
        }
        let mut bytes: Vec<u8> = Vec::with_capacity(usize::try_from(file.size).unwrap_or(0));
        match session.download(&file.path, &mut bytes).await {
            Ok(_) => {}
            Err(e) if e.not_found => return Ok(None),
            Err(e) => return Err(e),
        }
        let mut exchange = self.exchange_of(file, bytes.len() as u64);
        exchange.message.body = Body::Bytes(bytes.into());
        Ok(Some((exchange, None)))
    }

    fn spool_file(&self) -> std::io::Result<NamedTempFile> {
        let builder = tempfile::Builder::new()
            .prefix(".camel-ftp-")
            .suffix(".spool")
            .to_owned();
        match &self.options.consumer.local_work_directory {
            Some(dir) => {
                std::fs::create_dir_all(dir)?;
                builder.tempfile_in(dir)
            }
            None => builder.tempfile(),
        }
    }

    /// After success: delete, move, or leave. A failure here means the file is taken
    /// again later (a duplicate), never that it is lost.
    async fn settle(&self, session: &mut Session, file: &Found) -> RemoteResult<()> {
        match &self.options.consumer.after_success {
            AfterSuccess::Leave => Ok(()),
            AfterSuccess::Delete => {
                session.remove(&file.path).await.or_else(
                    |e| {
                        if e.not_found {
                            Ok(())
                        } else {
                            Err(e)
                        }
                    },
                )
            }
            AfterSuccess::Move(target) => self.move_file(session, file, target).await,
        }
    }

    /// Renames `file` to `target`, relative to the endpoint's directory.
    async fn move_file(
        &self,
        session: &mut Session,
        file: &Found,
        target: &MoveTarget,
    ) -> RemoteResult<()> {
        let relative = match target {
            MoveTarget::Folder(folder) => join(folder, &file.name),
            MoveTarget::Expression(expression) => {
                let exchange = self.exchange_of(file, file.size);
                match expression.evaluate(&exchange) {
                    Ok(value) => value.to_string(),
                    Err(error) => {
                        tracing::warn!(file = %file.name, %error,
                            "the move expression failed; the remote file stays");
                        return Ok(());
                    }
                }
            }
        };
        let to = join(&self.options.directory, &relative);
        let folder = parent(&to);
        if !folder.is_empty() {
            session.create_folders(folder).await?;
        }
        session.rename(&file.path, &to).await
    }
}

/// Skips `file` for a while: 1 s after its first failure, doubling up to 60 s.
fn remember_failure(failed: &mut HashMap<String, Failed>, file: &Found) {
    let wait = failed
        .get(&file.path)
        .map(|f| (f.wait * 2).min(MAX_RETRY))
        .unwrap_or(FIRST_RETRY);
    failed.insert(
        file.path.clone(),
        Failed {
            size: file.size,
            modified: file.modified,
            at: Instant::now() + wait,
            wait,
        },
    );
}

#[async_trait]
impl Consumer for FtpConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let o = &self.options.consumer;
        tokio::select! {
            _ = ctx.cancelled() => return Ok(()),
            _ = tokio::time::sleep(o.initial_delay) => {}
        }
        let mut state = State {
            session: None,
            failed: HashMap::new(),
            lock: ChangedLock::new(o.read_lock_check_interval, o.read_lock_min_length),
            taken: KeyMemory::new(IDEMPOTENT_CAPACITY),
        };
        let mut backoff = FIRST_BACKOFF;
        let shown = shown_uri(&self.options.uri);
        while !ctx.is_cancelled() {
            let wait = match self.poll(&ctx, &mut state).await {
                Ok(Poll::Stopped) => break,
                Ok(Poll::Full) => {
                    backoff = FIRST_BACKOFF;
                    continue;
                }
                Ok(Poll::Done) => {
                    backoff = FIRST_BACKOFF;
                    o.delay
                }
                Err(error) => {
                    tracing::warn!(uri = %shown, %error, retry_in = ?backoff,
                        "remote file consumer failed; reconnecting");
                    ctx.health().set_failing(&error);
                    if let Some(session) = state.session.take() {
                        session.close().await;
                    }
                    let wait = backoff;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    wait
                }
            };
            tokio::select! {
                _ = ctx.cancelled() => break,
                _ = tokio::time::sleep(wait) => {}
            }
        }
        if let Some(session) = state.session.take() {
            session.close().await;
        }
        Ok(())
    }
}
