//! A bounded, least-recently-used cache of what a step built from endpoints resolved at
//! run time.
//!
//! Invariants: at most `capacity` entries (one when the cache is off and the endpoint has
//! background work); an entry's background work ([`StepLifecycle`]) was started before
//! the entry became visible and is shut down exactly once — when the entry is evicted
//! (on a spawned task: the caller does not wait for it), or when the step's route stops
//! (awaited, with the route's deadline). A failed resolution is never cached.
//!
//! The map sits under a std mutex held for a lookup or an insert only, never across an
//! `.await`. Eviction scans for the oldest entry: O(n) on a miss of a full cache (n ≤
//! the bound, 1,000 by default, a few microseconds), nothing on a hit.
//!
//! A step that resolves the same URIs exchange after exchange (a recipient list read from
//! a header that seldom changes, a wire tap to a constant URI) can skip the lock with a
//! [`Memo`]: it remembers the step's last resolution together with the cache's
//! [`generation`](EndpointCache::generation), which changes whenever an entry leaves the
//! cache, so a remembered producer is never one the cache has retired.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use arc_swap::ArcSwapOption;

use async_trait::async_trait;
use camel_api::{BoxProcessor, CamelError, Endpoint, Poller, ShutdownReason, StepLifecycle, Value};

use super::{CacheSize, EndpointResolver};

/// What a step builds from an endpoint: a producer, or a poller.
type Build<T> = fn(&dyn Endpoint) -> Result<T, CamelError>;

/// The endpoints a dynamic step resolved, most recently used first out last.
pub struct EndpointCache<T> {
    resolver: Arc<dyn EndpointResolver>,
    size: CacheSize,
    build: Build<T>,
    slots: Mutex<Slots<T>>,
    /// Changed whenever an entry leaves (eviction, route stop).
    generation: AtomicU64,
}

struct Slots<T> {
    map: HashMap<Arc<str>, Slot<T>>,
    tick: u64,
}

struct Slot<T> {
    value: T,
    lifecycle: Option<Arc<dyn StepLifecycle>>,
    used: u64,
}

impl<T> fmt::Debug for EndpointCache<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EndpointCache")
            .field("size", &self.size)
            .field(
                "len",
                &self
                    .slots
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .map
                    .len(),
            )
            .finish_non_exhaustive()
    }
}

impl EndpointCache<BoxProcessor> {
    /// A cache of producers (recipient list, routing slip, dynamic router, `to_d`, wire
    /// tap, enrich).
    pub fn producers(resolver: Arc<dyn EndpointResolver>, size: CacheSize) -> Self {
        EndpointCache::new(resolver, size, |e| e.producer())
    }
}

impl EndpointCache<Arc<dyn Poller>> {
    /// A cache of pollers (`poll_enrich`).
    pub fn pollers(resolver: Arc<dyn EndpointResolver>, size: CacheSize) -> Self {
        EndpointCache::new(resolver, size, |e| e.poller())
    }
}

impl<T: Clone + Send + Sync + 'static> EndpointCache<T> {
    fn new(resolver: Arc<dyn EndpointResolver>, size: CacheSize, build: Build<T>) -> Self {
        EndpointCache {
            resolver,
            size,
            build,
            slots: Mutex::new(Slots {
                map: HashMap::new(),
                tick: 0,
            }),
            generation: AtomicU64::new(0),
        }
    }

    /// Changes whenever an entry leaves the cache; what was resolved under one value of
    /// it is still held by the cache while the value stays the same.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Whether resolutions may be remembered by the step ([`Memo`]): not when the cache
    /// is off (the user asked for a resolution per exchange).
    pub fn remembers(&self) -> bool {
        self.size != CacheSize::Off
    }

    fn lock(&self) -> MutexGuard<'_, Slots<T>> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What was built from the endpoint `uri` names: from the cache, or resolved, built
    /// (and its background work started) now.
    pub async fn get(&self, uri: &str) -> Result<T, CamelError> {
        if let Some(value) = self.lookup(uri) {
            return Ok(value);
        }
        let endpoint = self.resolver.endpoint(uri)?;
        let value = (self.build)(&*endpoint)?;
        let lifecycle = endpoint.lifecycle();
        if let Some(l) = &lifecycle {
            l.start().await?;
        }
        let capacity = match (self.size, &lifecycle) {
            (CacheSize::Off, None) => return Ok(value),
            (CacheSize::Off, Some(_)) => 1,
            (CacheSize::Bounded(n), _) => n.max(1),
        };
        let (value, retired) = {
            let mut slots = self.lock();
            slots.tick += 1;
            let tick = slots.tick;
            if let Some(existing) = slots.map.get_mut(uri) {
                // Another exchange resolved it meanwhile: keep theirs, retire ours.
                existing.used = tick;
                (existing.value.clone(), lifecycle)
            } else {
                let evicted = if slots.map.len() >= capacity {
                    let evicted = oldest(&slots.map).and_then(|k| slots.map.remove(&k));
                    self.generation.fetch_add(1, Ordering::AcqRel);
                    evicted
                } else {
                    None
                };
                slots.map.insert(
                    Arc::from(uri),
                    Slot {
                        value: value.clone(),
                        lifecycle,
                        used: tick,
                    },
                );
                (value, evicted.and_then(|s| s.lifecycle))
            }
        };
        if let Some(l) = retired {
            tokio::spawn(async move {
                if let Err(error) = l.shutdown(ShutdownReason::RouteStop).await {
                    tracing::warn!(step = l.name(), %error, "evicted endpoint did not stop cleanly");
                }
            });
        }
        Ok(value)
    }

    fn lookup(&self, uri: &str) -> Option<T> {
        let mut slots = self.lock();
        slots.tick += 1;
        let tick = slots.tick;
        let slot = slots.map.get_mut(uri)?;
        slot.used = tick;
        Some(slot.value.clone())
    }

    /// The cache as a route step's background work: stopping the route shuts down the
    /// background work of every endpoint still held.
    pub fn lifecycle(self: &Arc<Self>, name: impl Into<String>) -> Arc<dyn StepLifecycle> {
        Arc::new(CacheLifecycle {
            name: name.into(),
            cache: self.clone(),
        })
    }
}

/// A step's last resolution of a URI text (one URI, or a recipient list's several),
/// valid while the text and the cache's [`generation`](EndpointCache::generation) are
/// the same. Reading it is one atomic load and a string comparison: no lock, no
/// allocation.
pub struct Memo<V> {
    last: ArcSwapOption<Remembered<V>>,
}

struct Remembered<V> {
    text: Arc<str>,
    generation: u64,
    value: V,
}

impl<V> Default for Memo<V> {
    fn default() -> Self {
        Memo {
            last: ArcSwapOption::empty(),
        }
    }
}

impl<V> fmt::Debug for Memo<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Memo").finish_non_exhaustive()
    }
}

/// A [`Memo`] that did not hold the value asked for: what to remember a fresh resolution
/// under (nothing when the value is not text or the cache is off).
#[derive(Debug)]
pub struct Miss {
    text: Option<Arc<str>>,
    generation: u64,
}

impl<V: Clone> Memo<V> {
    /// What was remembered for the URI text `value` while `cache` still holds it; else the
    /// key to [`remember`](Memo::remember) the resolution under. The generation is read
    /// before the caller resolves, so an entry leaving the cache meanwhile makes the
    /// remembered value stale at once.
    pub fn recall<T: Clone + Send + Sync + 'static>(
        &self,
        cache: &EndpointCache<T>,
        value: &Value,
    ) -> Result<V, Miss> {
        let text = match value {
            Value::Text(text) if cache.remembers() => Some(text),
            _ => None,
        };
        let generation = cache.generation();
        match text.and_then(|t| self.get(t, generation)) {
            Some(hit) => Ok(hit),
            None => Err(Miss {
                text: text.cloned(),
                generation,
            }),
        }
    }

    /// Remembers `value` as the resolution of what missed.
    pub fn remember(&self, miss: Miss, value: V) {
        if let Some(text) = miss.text {
            self.set(text, miss.generation, value);
        }
    }

    /// What was remembered for `text` under `generation`.
    fn get(&self, text: &str, generation: u64) -> Option<V> {
        let last = self.last.load();
        let last = last.as_ref()?;
        (last.generation == generation && *last.text == *text).then(|| last.value.clone())
    }

    /// Remembers `value` for `text`, resolved under `generation`.
    fn set(&self, text: Arc<str>, generation: u64, value: V) {
        self.last.store(Some(Arc::new(Remembered {
            text,
            generation,
            value,
        })));
    }
}

fn oldest<T>(map: &HashMap<Arc<str>, Slot<T>>) -> Option<Arc<str>> {
    map.iter()
        .min_by_key(|(_, slot)| slot.used)
        .map(|(k, _)| k.clone())
}

struct CacheLifecycle<T> {
    name: String,
    cache: Arc<EndpointCache<T>>,
}

impl<T> fmt::Debug for CacheLifecycle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CacheLifecycle")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl<T: Clone + Send + Sync + 'static> StepLifecycle for CacheLifecycle<T> {
    fn name(&self) -> &str {
        &self.name
    }

    async fn start(&self) -> Result<(), CamelError> {
        Ok(())
    }

    async fn shutdown(&self, reason: ShutdownReason) -> Result<(), CamelError> {
        let held: Vec<_> = self
            .cache
            .lock()
            .map
            .drain()
            .filter_map(|(_, slot)| slot.lifecycle)
            .collect();
        self.cache.generation.fetch_add(1, Ordering::AcqRel);
        let mut first_error = None;
        for l in held {
            if let Err(e) = l.shutdown(reason).await {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use camel_api::Exchange;

    use super::*;

    #[derive(Debug, Default)]
    struct Counting {
        resolved: AtomicUsize,
        started: Arc<AtomicUsize>,
        stopped: Arc<AtomicUsize>,
    }

    #[derive(Debug)]
    struct Worker(Arc<AtomicUsize>, Arc<AtomicUsize>);

    #[async_trait]
    impl StepLifecycle for Worker {
        fn name(&self) -> &str {
            "worker"
        }
        async fn start(&self) -> Result<(), CamelError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
        async fn shutdown(&self, _: ShutdownReason) -> Result<(), CamelError> {
            self.1.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    }

    #[derive(Debug)]
    struct Ep(String, Option<Arc<dyn StepLifecycle>>);

    impl Endpoint for Ep {
        fn uri(&self) -> &str {
            &self.0
        }
        fn producer(&self) -> Result<BoxProcessor, CamelError> {
            let uri = self.0.clone();
            Ok(BoxProcessor::sync(move |mut ex: Exchange| {
                ex.message.headers.insert("sent_to", uri.as_str());
                Ok(ex)
            }))
        }
        fn lifecycle(&self) -> Option<Arc<dyn StepLifecycle>> {
            self.1.clone()
        }
    }

    impl EndpointResolver for Counting {
        fn endpoint(&self, uri: &str) -> Result<Arc<dyn Endpoint>, CamelError> {
            self.resolved.fetch_add(1, Ordering::SeqCst);
            let worker: Option<Arc<dyn StepLifecycle>> = uri
                .starts_with("busy:")
                .then(|| Arc::new(Worker(self.started.clone(), self.stopped.clone())) as _);
            Ok(Arc::new(Ep(uri.to_string(), worker)))
        }
    }

    #[tokio::test]
    async fn least_recently_used_entry_is_evicted_and_hits_do_not_resolve() {
        let resolver = Arc::new(Counting::default());
        let cache = EndpointCache::producers(resolver.clone(), CacheSize::Bounded(2));
        cache.get("a:1").await.unwrap();
        cache.get("b:1").await.unwrap();
        cache.get("a:1").await.unwrap(); // a is now the most recent
        assert_eq!(resolver.resolved.load(Ordering::SeqCst), 2);
        cache.get("c:1").await.unwrap(); // evicts b
        assert_eq!(cache.len(), 2);
        cache.get("a:1").await.unwrap();
        assert_eq!(resolver.resolved.load(Ordering::SeqCst), 3);
        cache.get("b:1").await.unwrap();
        assert_eq!(resolver.resolved.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn cache_off_resolves_every_time() {
        let resolver = Arc::new(Counting::default());
        let cache = EndpointCache::producers(resolver.clone(), CacheSize::from_option(Some(-1)));
        for _ in 0..3 {
            cache.get("a:1").await.unwrap();
        }
        assert_eq!(resolver.resolved.load(Ordering::SeqCst), 3);
        assert!(cache.is_empty());
    }

    #[tokio::test]
    async fn background_work_starts_once_and_stops_on_eviction_and_route_stop() {
        let resolver = Arc::new(Counting::default());
        let cache = Arc::new(EndpointCache::producers(
            resolver.clone(),
            CacheSize::Bounded(1),
        ));
        cache.get("busy:1").await.unwrap();
        cache.get("busy:1").await.unwrap();
        assert_eq!(resolver.started.load(Ordering::SeqCst), 1);
        cache.get("busy:2").await.unwrap(); // evicts busy:1 on a spawned task
        tokio::task::yield_now().await;
        assert_eq!(resolver.stopped.load(Ordering::SeqCst), 1);
        cache
            .lifecycle("cache")
            .shutdown(ShutdownReason::RouteStop)
            .await
            .unwrap();
        assert_eq!(resolver.stopped.load(Ordering::SeqCst), 2);
        assert!(cache.is_empty());
    }

    #[tokio::test]
    async fn a_memo_is_forgotten_when_an_entry_leaves_the_cache() {
        let resolver = Arc::new(Counting::default());
        let cache = Arc::new(EndpointCache::producers(
            resolver.clone(),
            CacheSize::Bounded(1),
        ));
        let memo = Memo::default();
        let generation = cache.generation();
        let producer = cache.get("a:1").await.unwrap();
        memo.set(Arc::from("a:1"), generation, producer);
        assert!(memo.get("a:1", cache.generation()).is_some());
        assert!(
            memo.get("b:1", cache.generation()).is_none(),
            "another text"
        );
        cache.get("b:1").await.unwrap(); // evicts a:1
        assert!(
            memo.get("a:1", cache.generation()).is_none(),
            "a:1 left the cache: the memo must not hand out its producer"
        );
        let generation = cache.generation();
        memo.set(
            Arc::from("b:1"),
            generation,
            cache.get("b:1").await.unwrap(),
        );
        cache
            .lifecycle("cache")
            .shutdown(ShutdownReason::RouteStop)
            .await
            .unwrap();
        assert!(memo.get("b:1", cache.generation()).is_none(), "route stop");
        let off = EndpointCache::producers(resolver, CacheSize::Off);
        assert!(!off.remembers() && cache.remembers());
    }

    #[test]
    fn camel_cache_size_spellings() {
        assert_eq!(CacheSize::from_option(None), CacheSize::Bounded(1000));
        assert_eq!(CacheSize::from_option(Some(0)), CacheSize::Bounded(1000));
        assert_eq!(CacheSize::from_option(Some(5)), CacheSize::Bounded(5));
        assert_eq!(CacheSize::from_option(Some(-1)), CacheSize::Off);
    }
}
