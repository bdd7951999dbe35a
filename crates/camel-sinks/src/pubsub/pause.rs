//! Ordering keys paused after a failed publish.
//!
//! Publishing later messages of a key whose earlier message failed would reorder the
//! key; so the key is paused, its later messages fail fast, and it resumes when the
//! failed message itself is tried again (or on an explicit resume).
//!
//! The set belongs to the topic, not to a codec instance: it is kept in the batcher
//! registry ([`BatcherRegistry::destination_state`]), so every route publishing to the
//! topic sees the pause, and it survives an idle stop, a route swap or a reload.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::batcher::BatcherRegistry;
use crate::codec::Entry;

/// The paused ordering keys of one topic, each with the idempotency key of the message
/// whose retry resumes it.
#[derive(Debug, Default)]
pub struct PausedKeys {
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
    pub fn resume(&self, key: &str) -> bool {
        self.lock().remove(key).is_some()
    }

    /// The paused keys, sorted.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.lock().keys().map(|k| k.to_string()).collect();
        keys.sort();
        keys
    }
}

/// The paused ordering keys of `topic` (`projects/P/topics/T`) in `registry`, sorted.
pub fn paused_ordering_keys(registry: &BatcherRegistry, topic: &str) -> Vec<String> {
    registry
        .existing_destination_state::<PausedKeys>(topic)
        .map(|p| p.keys())
        .unwrap_or_default()
}

/// Resumes `ordering_key` of `topic` in `registry` for every route publishing there;
/// true if it was paused. Its later messages are published again; the failed message
/// itself was not, so resume only once it is retried or given up on purpose.
pub fn resume_ordering_key(registry: &BatcherRegistry, topic: &str, ordering_key: &str) -> bool {
    registry
        .existing_destination_state::<PausedKeys>(topic)
        .is_some_and(|p| p.resume(ordering_key))
}
