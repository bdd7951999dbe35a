//! Where producers find the batcher of their destination.
//!
//! Keyed by codec name plus the digest of the batch identity, so two endpoints share a
//! batcher exactly when their requests would be interchangeable, and a credential is
//! never part of a key or label. The first delivery starts a batcher; a batcher
//! unregisters itself when it ends.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::config::BatchConfig;
use super::handle::{BatcherHandle, BatcherStats, Shared};
use super::worker::{Registration, Worker};
use crate::codec::{BatchCodec, BatchIdentity};

/// The registry key of a destination: codec name and identity digest.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BatcherKey {
    codec: &'static str,
    digest: [u8; 32],
}

impl BatcherKey {
    /// The key of `codec` tuned with `config`.
    pub fn of<C: BatchCodec>(codec: &C, config: &BatchConfig) -> Self {
        let mut identity = BatchIdentity::new(codec.name());
        codec.identity(&mut identity);
        config.add_to_identity(&mut identity);
        BatcherKey {
            codec: codec.name(),
            digest: identity.digest(),
        }
    }

    /// A label safe for logs and metrics: `codec:destination#first-8-hex-of-digest`.
    pub fn label(&self, destination: &str) -> String {
        format!("{}:{}#{}", self.codec, destination, self.short_digest())
    }

    fn short_digest(&self) -> String {
        self.digest[..4]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

impl fmt::Debug for BatcherKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BatcherKey({}#{})", self.codec, self.short_digest())
    }
}

/// State kept per destination, by its type and the destination's name.
type DestinationStates = HashMap<(TypeId, String), Arc<dyn Any + Send + Sync>>;

/// The batchers of a process (or of one context), by destination.
pub struct BatcherRegistry {
    /// The `instance` label of this registry's metrics and events.
    instance: Arc<str>,
    batchers: Mutex<HashMap<BatcherKey, Arc<BatcherHandle>>>,
    /// Outlives batchers (idle stop) and codec instances (route swaps, several routes).
    destinations: Mutex<DestinationStates>,
    next_generation: AtomicU64,
    stop: CancellationToken,
}

impl fmt::Debug for BatcherRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatcherRegistry")
            .field("instance", &self.instance)
            .field("batchers", &self.len())
            .finish()
    }
}

impl BatcherRegistry {
    /// A new, empty registry; its metrics and events carry `instance="default"`.
    pub fn new() -> Arc<Self> {
        BatcherRegistry::with_instance("default")
    }

    /// A new, empty registry whose metrics and events carry `instance` (a context or
    /// process name), so several in one process can be told apart.
    pub fn with_instance(instance: &str) -> Arc<Self> {
        Arc::new(BatcherRegistry {
            instance: instance.into(),
            batchers: Mutex::default(),
            destinations: Mutex::default(),
            next_generation: AtomicU64::default(),
            stop: CancellationToken::default(),
        })
    }

    /// The `instance` label of this registry.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// The process-wide registry the components use unless given another.
    pub fn global() -> Arc<Self> {
        static GLOBAL: OnceLock<Arc<BatcherRegistry>> = OnceLock::new();
        GLOBAL.get_or_init(BatcherRegistry::new).clone()
    }

    /// Number of live batchers.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when no batcher is running.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when the batcher of `key` is registered and taking entries.
    pub fn is_running(&self, key: &BatcherKey) -> bool {
        self.lock().get(key).is_some_and(|h| !h.is_closed())
    }

    /// A load snapshot of every batcher.
    pub fn stats(&self) -> Vec<BatcherStats> {
        self.lock().values().map(|h| h.stats()).collect()
    }

    /// Stops every batcher: each sends what it holds, answers its callers and ends.
    /// Deliveries after this fail with `Stopping`.
    pub async fn shutdown(&self) {
        self.stop.cancel();
        let handles: Vec<_> = self.lock().values().cloned().collect();
        for h in handles {
            h.shared.finished.cancelled().await;
        }
    }

    /// The state of type `T` that belongs to the destination `scope` (a topic, a queue)
    /// rather than to one batcher or codec instance: every endpoint of this registry
    /// naming `scope` shares it, and it survives idle stops and route swaps. Created
    /// empty on first use; one small entry per destination ever used.
    pub fn destination_state<T>(&self, scope: &str) -> Arc<T>
    where
        T: Default + Send + Sync + 'static,
    {
        let mut states = self.destinations.lock().unwrap_or_else(|p| p.into_inner());
        let slot = states
            .entry((TypeId::of::<T>(), scope.to_string()))
            .or_insert_with(|| Arc::new(T::default()));
        match slot.clone().downcast::<T>() {
            Ok(state) => state,
            // The key holds T's TypeId, so this cannot happen; replacing is still safe.
            Err(_) => {
                let state = Arc::new(T::default());
                *slot = state.clone();
                state
            }
        }
    }

    /// The state of type `T` of `scope`, if it was ever created.
    pub fn existing_destination_state<T>(&self, scope: &str) -> Option<Arc<T>>
    where
        T: Send + Sync + 'static,
    {
        let states = self.destinations.lock().unwrap_or_else(|p| p.into_inner());
        states
            .get(&(TypeId::of::<T>(), scope.to_string()))
            .and_then(|s| s.clone().downcast::<T>().ok())
    }

    /// Like [`shutdown`](Self::shutdown), but waits no later than `deadline`: the
    /// batchers still running then (their destination does not answer) are left to the
    /// process exit, and their load is returned so the caller can report what was cut off.
    /// Empty when every batcher ended in time.
    pub async fn shutdown_by(&self, deadline: tokio::time::Instant) -> Vec<BatcherStats> {
        self.stop.cancel();
        let handles: Vec<_> = self.lock().values().cloned().collect();
        let all_finished = async {
            for h in &handles {
                h.shared.finished.cancelled().await;
            }
        };
        if tokio::time::timeout_at(deadline, all_finished)
            .await
            .is_ok()
        {
            return Vec::new();
        }
        handles
            .iter()
            .filter(|h| !h.shared.finished.is_cancelled())
            .map(|h| h.stats())
            .collect()
    }

    /// The registered batcher of `key`, running or closing.
    #[cfg(test)]
    pub(crate) fn handle_of(&self, key: &BatcherKey) -> Option<Arc<BatcherHandle>> {
        self.lock().get(key).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<BatcherKey, Arc<BatcherHandle>>> {
        self.batchers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The running batcher of `key`, started if there is none (or only a closed one);
    /// `None` once the registry is shut down.
    pub(crate) fn get_or_start<C: BatchCodec>(
        self: &Arc<Self>,
        key: &BatcherKey,
        label: &Arc<str>,
        codec: &Arc<C>,
        config: &BatchConfig,
    ) -> Option<Arc<BatcherHandle>> {
        let mut batchers = self.lock();
        if let Some(h) = batchers.get(key) {
            if !h.is_closed() {
                return Some(h.clone());
            }
        }
        if self.stop.is_cancelled() {
            return None;
        }
        let generation = self.next_generation.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared::new(
            label.clone(),
            self.instance.clone(),
            config.clone(),
        ));
        let handle = Arc::new(BatcherHandle::new(tx, shared.clone(), generation));
        let worker = Worker::new(
            codec.clone(),
            shared,
            rx,
            config.clone(),
            self.stop.child_token(),
            Registration {
                registry: Arc::downgrade(self),
                key: key.clone(),
                generation,
            },
        );
        tokio::spawn(worker.run());
        batchers.insert(key.clone(), handle.clone());
        Some(handle)
    }

    /// Removes the registration of `key` if it is still `generation` (a batcher ending
    /// must not remove its replacement).
    pub(crate) fn forget(&self, key: &BatcherKey, generation: u64) {
        let mut batchers = self.lock();
        if batchers
            .get(key)
            .is_some_and(|h| h.generation == generation)
        {
            batchers.remove(key);
        }
    }
}
