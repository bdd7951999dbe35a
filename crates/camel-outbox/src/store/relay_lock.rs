//! SQLite has no session locks to elect one relay per partition, so one process relays
//! an outbox on a file: its relay holds an exclusive lock on a file beside the database,
//! and a second relay (another process, or another route of this one) refuses to start.
//! The operating system drops the lock when the process dies, so a crash leaves nothing
//! to clean up. See ADR 0034.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::config::TableName;
use crate::error::{OutboxError, Result};

/// The lock files this process holds: its own relay does not stop it from settling the
/// partition count (a second open of a locked file would conflict even in one process).
static HELD: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

fn held() -> std::sync::MutexGuard<'static, Option<HashSet<PathBuf>>> {
    HELD.lock().unwrap_or_else(|p| p.into_inner())
}

/// True when a relay in another process holds the lock of outbox `table` on `database`.
#[cfg(feature = "sqlite")]
pub(crate) fn held_elsewhere(database: &Path, table: &TableName) -> Result<bool> {
    let path = RelayLock::path_for(database, table);
    if held().as_ref().is_some_and(|h| h.contains(&path)) {
        return Ok(false);
    }
    match RelayLock::acquire(database, table) {
        Ok(_probe) => Ok(false),
        Err(OutboxError::RelayRunning { .. }) => Ok(true),
        Err(e) => Err(e),
    }
}

/// The exclusive right to relay one outbox of one SQLite file; released on drop.
#[derive(Debug)]
pub struct RelayLock {
    _file: File,
    path: PathBuf,
}

impl RelayLock {
    /// The lock file of outbox table `table` in the database file `database`:
    /// `<database>-<table>.relay-lock`, beside it.
    pub fn path_for(database: &Path, table: &TableName) -> PathBuf {
        // Absolute, so one file spelled two ways is one entry of `HELD`.
        let database = std::path::absolute(database).unwrap_or_else(|_| database.to_path_buf());
        let mut name = database.into_os_string();
        name.push(format!("-{table}.relay-lock"));
        PathBuf::from(name)
    }

    /// Takes the lock without waiting; fails with [`OutboxError::RelayRunning`] when
    /// another relay holds it.
    pub fn acquire(database: &Path, table: &TableName) -> Result<Self> {
        let path = Self::path_for(database, table);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io_error(&path, e))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io_error(&path, e))?;
        match file.try_lock() {
            Ok(()) => {
                held().get_or_insert_with(HashSet::new).insert(path.clone());
                Ok(RelayLock { _file: file, path })
            }
            Err(std::fs::TryLockError::WouldBlock) => Err(OutboxError::RelayRunning {
                table: table.to_string(),
                lock_file: path.display().to_string(),
            }),
            Err(std::fs::TryLockError::Error(e)) => Err(io_error(&path, e)),
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RelayLock {
    fn drop(&mut self) {
        if let Some(h) = held().as_mut() {
            h.remove(&self.path);
        }
    }
}

fn io_error(path: &Path, e: std::io::Error) -> OutboxError {
    OutboxError::Config(format!("relay lock file `{}`: {e}", path.display()))
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
        // Another outbox in the same file has its own lock.
        let other = TableName::new("camel_outbox_audit").unwrap();
        RelayLock::acquire(&db, &other).unwrap();
        drop(first);
        RelayLock::acquire(&db, &table).unwrap();
    }
}
