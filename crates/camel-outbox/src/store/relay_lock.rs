//! SQLite has no session locks to elect one relay per partition, so one process relays
//! the outboxes of a database file: its relays hold an exclusive lock on the database
//! file itself, and a relay in another process refuses to start, as does a second relay
//! of the same outbox in this process. See ADR 0034 and ADR 0096.
//!
//! The lock is taken on the file, not on its path: on the inode the path resolves to, so
//! a symlink, a hard link or another spelling of the path is the same database, and
//! since a running relay keeps the file open, nothing deleted or renamed from under it
//! frees the lock (an earlier version locked a file beside the database, which anyone
//! could delete). The operating system drops the lock when the process dies, so a crash
//! leaves nothing to clean up.
//!
//! The lock is a `flock` on a descriptor of the database file that this process opens
//! once per file and never closes: closing any descriptor of a file drops every POSIX
//! lock the process holds on it, and SQLite's own locks are POSIX locks. `flock` locks
//! are separate from those on local file systems (not on NFS, where SQLite's locking is
//! unreliable anyway). Releasing the relay lock unlocks the descriptor and keeps it.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::config::TableName;
use crate::error::{OutboxError, Result};

/// A database file as the file system knows it: device and inode.
type FileId = (u64, u64);

/// The database files this process has opened for relay locks, by identity.
#[derive(Debug)]
struct Opened {
    /// The descriptor the lock is taken on; never closed (see the module docs).
    file: File,
    /// Descriptors opened in a race for the same file, kept open for the same reason.
    _spare: Vec<File>,
    /// Outbox tables of the file relayed in this process.
    tables: HashSet<String>,
    /// True while this process holds the file's lock (some table is relayed).
    locked: bool,
}

static FILES: Mutex<Option<HashMap<FileId, Opened>>> = Mutex::new(None);

fn files() -> std::sync::MutexGuard<'static, Option<HashMap<FileId, Opened>>> {
    FILES.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata, _resolved: &Path) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// Without inodes the resolved path stands for the file.
#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata, resolved: &Path) -> FileId {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    resolved.hash(&mut h);
    (h.finish(), 0)
}

/// The database file `database` resolves to (symlinks followed), created empty when
/// missing (an empty file is an empty SQLite database), and its identity. The file is
/// opened only when this process has not opened it before.
fn open(database: &Path) -> Result<(FileId, PathBuf)> {
    if let Some(dir) = database.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| io_error(database, e))?;
    }
    let resolved = resolve(database);
    let mut all = files();
    let all = all.get_or_insert_with(HashMap::new);
    // Known already: no second descriptor (opening one is harmless, closing it is not).
    if let Ok(meta) = std::fs::metadata(&resolved) {
        let id = identity(&meta, &resolved);
        if all.contains_key(&id) {
            return Ok((id, resolved));
        }
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&resolved)
        .map_err(|e| io_error(&resolved, e))?;
    let resolved = resolve(database);
    let id = identity(
        &file.metadata().map_err(|e| io_error(&resolved, e))?,
        &resolved,
    );
    match all.get_mut(&id) {
        Some(known) => known._spare.push(file),
        None => {
            all.insert(
                id,
                Opened {
                    file,
                    _spare: Vec::new(),
                    tables: HashSet::new(),
                    locked: false,
                },
            );
        }
    }
    Ok((id, resolved))
}

/// `path` made absolute with its symlinks resolved, as far as it exists.
fn resolve(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// True when a relay in another process holds the lock of the database file `database`
/// (it may relay any outbox of the file).
#[cfg(feature = "sqlite")]
pub(crate) fn held_elsewhere(database: &Path, _table: &TableName) -> Result<bool> {
    let (id, resolved) = open(database)?;
    let mut all = files();
    let Some(opened) = all.as_mut().and_then(|a| a.get_mut(&id)) else {
        return Ok(false);
    };
    if opened.locked {
        return Ok(false);
    }
    match opened.file.try_lock() {
        Ok(()) => {
            opened.file.unlock().map_err(|e| io_error(&resolved, e))?;
            Ok(false)
        }
        Err(std::fs::TryLockError::WouldBlock) => Ok(true),
        Err(std::fs::TryLockError::Error(e)) => Err(io_error(&resolved, e)),
    }
}

/// The exclusive right to relay one outbox of one SQLite file; released on drop.
#[derive(Debug)]
pub struct RelayLock {
    id: FileId,
    table: String,
    path: PathBuf,
}

impl RelayLock {
    /// Takes the lock without waiting; fails with [`OutboxError::RelayRunning`] when a
    /// relay of this outbox runs in this process, or any relay of the file in another.
    /// Creates the database file (empty) when it is missing.
    pub fn acquire(database: &Path, table: &TableName) -> Result<Self> {
        let (id, path) = open(database)?;
        let mut all = files();
        let Some(opened) = all.as_mut().and_then(|a| a.get_mut(&id)) else {
            return Err(io_error(&path, std::io::ErrorKind::NotFound.into()));
        };
        let refused = |holder: &str| OutboxError::RelayRunning {
            table: table.to_string(),
            database: path.display().to_string(),
            holder: holder.to_string(),
        };
        if opened.tables.contains(table.as_str()) {
            return Err(refused("another route of this process relays this outbox"));
        }
        if !opened.locked {
            match opened.file.try_lock() {
                Ok(()) => opened.locked = true,
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(refused(
                        "another process holds the lock on the database file: it relays an outbox of it",
                    ))
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io_error(&path, e)),
            }
        }
        opened.tables.insert(table.to_string());
        Ok(RelayLock {
            id,
            table: table.to_string(),
            path,
        })
    }

    /// The database file the lock is held on, resolved (symlinks followed).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RelayLock {
    fn drop(&mut self) {
        let mut all = files();
        let Some(opened) = all.as_mut().and_then(|a| a.get_mut(&self.id)) else {
            return;
        };
        opened.tables.remove(&self.table);
        if opened.tables.is_empty() && opened.locked {
            // Unlocked, not closed (see the module docs). An unlock that fails leaves the
            // lock held until the process ends: a later relay of this process finds it
            // still held here, which is safe.
            if opened.file.unlock().is_ok() {
                opened.locked = false;
            }
        }
    }
}

fn io_error(path: &Path, e: std::io::Error) -> OutboxError {
    OutboxError::Config(format!(
        "relay lock on SQLite file `{}`: {e}",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_outbox_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("outbox.db");
        let table = TableName::new("camel_outbox_orders").unwrap();
        let first = RelayLock::acquire(&db, &table).unwrap();
        let err = RelayLock::acquire(&db, &table).unwrap_err();
        assert!(matches!(err, OutboxError::RelayRunning { .. }), "{err}");
        // Another outbox in the same file has its own lock in this process.
        let other = TableName::new("camel_outbox_audit").unwrap();
        let audit = RelayLock::acquire(&db, &other).unwrap();
        drop(first);
        RelayLock::acquire(&db, &table).unwrap();
        drop(audit);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_or_a_second_spelling_is_the_same_database() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("outbox.db");
        let table = TableName::new("camel_outbox_orders").unwrap();
        let first = RelayLock::acquire(&db, &table).unwrap();
        let link = dir.path().join("link.db");
        std::os::unix::fs::symlink(&db, &link).unwrap();
        let err = RelayLock::acquire(&link, &table).unwrap_err();
        assert!(matches!(err, OutboxError::RelayRunning { .. }), "{err}");
        let dotted = dir.path().join(".").join("outbox.db");
        assert!(RelayLock::acquire(&dotted, &table).is_err());
        assert_eq!(first.path(), std::fs::canonicalize(&db).unwrap());
    }
}
