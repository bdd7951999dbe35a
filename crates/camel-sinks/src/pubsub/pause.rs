//! Ordering keys paused after a failed publish.
//!
//! Publishing later messages of a key whose earlier message failed would reorder the
//! key; so the key is paused, its later messages fail fast, and it resumes when the
//! failed message itself is tried again (or on an explicit resume).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::codec::Entry;

/// Paused keys, each with the idempotency key of the message whose retry resumes it.
#[derive(Debug, Default)]
pub(crate) struct PausedKeys {
    keys: Mutex<HashMap<Arc<str>, Arc<str>>>,
}

/// What to do with a batch of one ordering key.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Gate {
    /// Publish from this index on; the entries before it fail fast.
    PublishFrom(usize),
    /// The key is paused and the batch holds no retry of the failed message.
    Paused,
}

impl PausedKeys {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Arc<str>>> {
        self.keys.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Decides for a batch whose entries all share `key`.
    pub(crate) fn gate(&self, key: Option<&Arc<str>>, entries: &[Entry]) -> Gate {
        let Some(key) = key else {
            return Gate::PublishFrom(0);
        };
        let mut keys = self.lock();
        let Some(failed) = keys.get(key) else {
            return Gate::PublishFrom(0);
        };
        match entries.iter().position(|e| &e.idempotency_key == failed) {
            Some(at) => {
                keys.remove(key);
                Gate::PublishFrom(at)
            }
            None => Gate::Paused,
        }
    }

    /// Pauses `key` after the publish starting with `head` failed.
    pub(crate) fn pause(&self, key: &Arc<str>, head: &Arc<str>) {
        self.lock().insert(key.clone(), head.clone());
    }

    /// Resumes `key`; true if it was paused.
    pub(crate) fn resume(&self, key: &str) -> bool {
        self.lock().remove(key).is_some()
    }
}
