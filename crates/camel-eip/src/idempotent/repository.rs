//! Where an idempotent consumer remembers the message ids it has seen.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use camel_api::CamelError;

/// The set of message ids seen. Implementations: [`MemoryIdempotentRepository`];
/// PostgreSQL and SQLite in `camel-state`.
#[async_trait]
pub trait IdempotentRepository: Send + Sync + fmt::Debug + 'static {
    /// Adds `id`; `false` when it was already there (atomically: of two concurrent adds of
    /// one id, one gets `false`).
    async fn add(&self, id: &str) -> Result<bool, CamelError>;

    /// True when `id` is there.
    async fn contains(&self, id: &str) -> Result<bool, CamelError>;

    /// Forgets `id` (its processing failed).
    async fn remove(&self, id: &str) -> Result<(), CamelError>;

    /// Its processing succeeded. The default does nothing.
    async fn confirm(&self, id: &str) -> Result<(), CamelError> {
        let _ = id;
        Ok(())
    }
}

/// A repository shared by steps (and registrable as a context resource).
pub type SharedIdempotentRepository = Arc<dyn IdempotentRepository>;

/// Ids in memory, at most `capacity`: the least recently used id is forgotten first.
/// The default of `idempotent_consumer` (1000 ids).
#[derive(Debug)]
pub struct MemoryIdempotentRepository {
    capacity: usize,
    state: Mutex<Lru>,
}

#[derive(Debug, Default)]
struct Lru {
    tick: u64,
    by_id: HashMap<String, u64>,
    by_use: BTreeMap<u64, String>,
}

impl Lru {
    fn touch(&mut self, id: &str) -> bool {
        self.tick += 1;
        let tick = self.tick;
        match self.by_id.get_mut(id) {
            Some(t) => {
                self.by_use.remove(t);
                *t = tick;
                self.by_use.insert(tick, id.to_string());
                true
            }
            None => false,
        }
    }
}

impl MemoryIdempotentRepository {
    /// Default bound.
    pub const DEFAULT_CAPACITY: usize = 1000;

    /// Remembers at most `capacity` ids (at least 1).
    pub fn new(capacity: usize) -> Self {
        MemoryIdempotentRepository {
            capacity: capacity.max(1),
            state: Mutex::new(Lru::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Lru> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ids remembered now.
    pub fn len(&self) -> usize {
        self.state().by_id.len()
    }

    /// True when no id is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Default for MemoryIdempotentRepository {
    fn default() -> Self {
        Self::new(Self::DEFAULT_CAPACITY)
    }
}

#[async_trait]
impl IdempotentRepository for MemoryIdempotentRepository {
    async fn add(&self, id: &str) -> Result<bool, CamelError> {
        let mut s = self.state();
        if s.touch(id) {
            return Ok(false);
        }
        let tick = s.tick;
        s.by_id.insert(id.to_string(), tick);
        s.by_use.insert(tick, id.to_string());
        while s.by_id.len() > self.capacity {
            match s.by_use.pop_first() {
                Some((_, old)) => {
                    s.by_id.remove(&old);
                }
                None => break,
            }
        }
        Ok(true)
    }

    async fn contains(&self, id: &str) -> Result<bool, CamelError> {
        Ok(self.state().touch(id))
    }

    async fn remove(&self, id: &str) -> Result<(), CamelError> {
        let mut s = self.state();
        if let Some(t) = s.by_id.remove(id) {
            s.by_use.remove(&t);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_least_recently_used_id_goes_first() {
        let r = MemoryIdempotentRepository::new(2);
        assert!(r.add("a").await.unwrap());
        assert!(r.add("b").await.unwrap());
        assert!(!r.add("a").await.unwrap()); // a used again: b is now the oldest
        assert!(r.add("c").await.unwrap());
        assert!(r.contains("a").await.unwrap());
        assert!(!r.contains("b").await.unwrap());
        assert_eq!(r.len(), 2);
        r.remove("a").await.unwrap();
        assert!(!r.contains("a").await.unwrap());
    }
}
