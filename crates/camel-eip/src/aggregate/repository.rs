//! Where an aggregator keeps its open groups: the [`AggregationRepository`] trait and its
//! in-memory implementation.
//!
//! A group lives in two states. *Open*: it takes exchanges; every write carries the
//! version it read, so two writers (two tasks, or two processes on one database) cannot
//! both win — the loser gets [`RepositoryError::Conflict`] and redoes its update.
//! *Completed*: it was taken out under a completion id and is being delivered; it stays in
//! the repository until [`confirm`](AggregationRepository::confirm), so a crash between
//! completion and delivery leaves it there for recovery to redeliver.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use camel_api::{CamelError, Exchange};

/// An open group as read: the aggregate so far and the version to write back against.
#[derive(Clone, Debug)]
pub struct StoredGroup {
    /// The aggregate so far.
    pub exchange: Exchange,
    /// Changes with every write.
    pub version: u64,
}

/// A completed group that was not confirmed.
#[derive(Clone, Debug)]
pub struct CompletedGroup {
    /// The id it was completed under.
    pub completion_id: String,
    /// Its correlation key.
    pub key: String,
    /// The aggregate.
    pub exchange: Exchange,
    /// Recovery attempts so far.
    pub attempts: u32,
}

/// Why a write did not happen.
#[derive(Debug)]
#[non_exhaustive]
pub enum RepositoryError {
    /// Someone else changed (or completed) the group since it was read: read it again.
    Conflict,
    /// The store failed.
    Failed(CamelError),
}

impl fmt::Display for RepositoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RepositoryError::Conflict => f.write_str("the group changed since it was read"),
            RepositoryError::Failed(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RepositoryError {}

impl From<CamelError> for RepositoryError {
    fn from(e: CamelError) -> Self {
        RepositoryError::Failed(e)
    }
}

/// Storage of an aggregator's groups. Implementations: [`MemoryAggregationRepository`];
/// PostgreSQL and SQLite in `camel-state`.
#[async_trait]
pub trait AggregationRepository: Send + Sync + fmt::Debug + 'static {
    /// The open group of `key`.
    async fn get(&self, key: &str) -> Result<Option<StoredGroup>, CamelError>;

    /// The open group of `key`, read by a caller that holds the aggregator's update lock
    /// and will write it back (or drop the group). The memory repository lends its own
    /// copy instead of cloning it, so a growing aggregate is not copied per exchange; the
    /// default is [`get`](Self::get).
    async fn get_for_update(&self, key: &str) -> Result<Option<StoredGroup>, CamelError> {
        self.get(key).await
    }

    /// Writes the open group of `key`; `version` is what [`get`](Self::get) returned
    /// (`None`: the group must not exist yet). Returns the new version.
    async fn put(
        &self,
        key: &str,
        exchange: &Exchange,
        version: Option<u64>,
    ) -> Result<u64, RepositoryError>;

    /// Takes the open group of `key` at `version` (`None`: a group that was never
    /// written, which must not exist) out as completed under `completion_id` with its final
    /// `exchange`, kept until confirmed.
    async fn complete(
        &self,
        key: &str,
        version: Option<u64>,
        completion_id: &str,
        exchange: &Exchange,
    ) -> Result<(), RepositoryError>;

    /// Forgets a completed group: its delivery finished.
    async fn confirm(&self, completion_id: &str) -> Result<(), CamelError>;

    /// The keys of the open groups.
    async fn keys(&self) -> Result<Vec<String>, CamelError>;

    /// Completed groups not confirmed, completed at least `older_than` ago.
    async fn unconfirmed(&self, older_than: Duration) -> Result<Vec<CompletedGroup>, CamelError>;

    /// Counts one recovery attempt of a completed group.
    async fn record_attempt(&self, completion_id: &str) -> Result<(), CamelError>;
}

/// What an update made of a group in [`MemoryAggregationRepository::change`].
#[derive(Debug)]
pub(crate) enum GroupChange {
    /// Still open, with this aggregate.
    Open(Exchange),
    /// Completed: kept under `completion_id` until confirmed.
    Completed {
        completion_id: String,
        exchange: Exchange,
    },
    /// Gone (its aggregation failed and it was discarded).
    Dropped,
}

/// A repository shared by steps (and registrable as a context resource).
pub type SharedRepository = Arc<dyn AggregationRepository>;

#[derive(Debug, Default)]
struct MemoryState {
    next_version: u64,
    /// `None` while lent to an update (`get_for_update`).
    open: HashMap<String, (Option<Exchange>, u64)>,
    completed: HashMap<String, Completed>,
}

#[derive(Debug)]
struct Completed {
    key: String,
    exchange: Exchange,
    at: Instant,
    attempts: u32,
}

/// Groups in a map in this process: lost when it exits (use a database repository to keep
/// them). The default repository of an `aggregate`.
#[derive(Debug, Default)]
pub struct MemoryAggregationRepository {
    state: Mutex<MemoryState>,
}

impl MemoryAggregationRepository {
    /// An empty repository.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, MemoryState> {
        // A panic while holding the lock left consistent maps (every change is one insert
        // or remove), so the state is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Open groups, for a hand-over.
    pub(crate) fn take_open(&self) -> Vec<(String, Exchange)> {
        self.state()
            .open
            .drain()
            .filter_map(|(k, (ex, _))| ex.map(|ex| (k, ex)))
            .collect()
    }

    /// Number of open groups.
    pub fn open_groups(&self) -> usize {
        self.state()
            .open
            .values()
            .filter(|(ex, _)| ex.is_some())
            .count()
    }

    /// An update of the open group of `key` by a caller that holds the aggregator's update
    /// lock, with one look-up of the key: `change` gets the group so far (`None`: a new
    /// group) and says what becomes of it. It runs with the repository locked, so it must
    /// be short and must not call back into the repository.
    pub(crate) fn change<R>(
        &self,
        key: &str,
        change: impl FnOnce(Option<Exchange>) -> (GroupChange, R),
    ) -> R {
        let mut state = self.state();
        let state = &mut *state;
        let (after, result) = match state.open.get_mut(key) {
            Some((slot, version)) => {
                // Taken out while `change` runs: if it panics the group reads as absent, as
                // after a failed `get_for_update`.
                let (after, result) = change(slot.take());
                if let GroupChange::Open(exchange) = after {
                    state.next_version += 1;
                    *slot = Some(exchange);
                    *version = state.next_version;
                    return result;
                }
                (after, result)
            }
            None => change(None),
        };
        match after {
            GroupChange::Open(exchange) => {
                state.next_version += 1;
                state
                    .open
                    .insert(key.to_string(), (Some(exchange), state.next_version));
            }
            GroupChange::Completed {
                completion_id,
                exchange,
            } => {
                state.open.remove(key);
                state.completed.insert(
                    completion_id,
                    Completed {
                        key: key.to_string(),
                        exchange,
                        at: Instant::now(),
                        attempts: 0,
                    },
                );
            }
            GroupChange::Dropped => {
                state.open.remove(key);
            }
        }
        result
    }

    /// [`get_for_update`](AggregationRepository::get_for_update) without a future: the
    /// group's own copy, lent to the caller until its `put_now` or `complete_now`.
    pub(crate) fn lend(&self, key: &str) -> Option<StoredGroup> {
        // A lent entry whose update never came back (the strategy failed) reads as absent.
        self.state().open.get_mut(key).and_then(|(ex, v)| {
            ex.take().map(|exchange| StoredGroup {
                exchange,
                version: *v,
            })
        })
    }

    /// [`put`](AggregationRepository::put) of an exchange the caller gives up (no copy).
    pub(crate) fn put_now(
        &self,
        key: &str,
        exchange: Exchange,
        version: Option<u64>,
    ) -> Result<u64, RepositoryError> {
        let mut state = self.state();
        state.next_version += 1;
        let next = state.next_version;
        match (state.open.get_mut(key), version) {
            (Some((ex, v)), Some(expected)) if *v == expected => {
                *ex = Some(exchange);
                *v = next;
            }
            (Some((ex @ None, v)), None) => {
                *ex = Some(exchange);
                *v = next;
            }
            (None, None) => {
                state.open.insert(key.to_string(), (Some(exchange), next));
            }
            _ => return Err(RepositoryError::Conflict),
        }
        Ok(next)
    }

    /// [`complete`](AggregationRepository::complete) without a future.
    pub(crate) fn complete_now(
        &self,
        key: &str,
        version: Option<u64>,
        completion_id: &str,
        exchange: &Exchange,
    ) -> Result<(), RepositoryError> {
        let mut state = self.state();
        match (state.open.get(key), version) {
            (Some((_, v)), Some(expected)) if *v == expected => {}
            (None | Some((None, _)), None) => {}
            _ => return Err(RepositoryError::Conflict),
        }
        state.open.remove(key);
        state.completed.insert(
            completion_id.to_string(),
            Completed {
                key: key.to_string(),
                exchange: exchange.clone(),
                at: Instant::now(),
                attempts: 0,
            },
        );
        Ok(())
    }
}

#[async_trait]
impl AggregationRepository for MemoryAggregationRepository {
    async fn get(&self, key: &str) -> Result<Option<StoredGroup>, CamelError> {
        Ok(self.state().open.get(key).and_then(|(ex, v)| {
            ex.as_ref().map(|ex| StoredGroup {
                exchange: ex.clone(),
                version: *v,
            })
        }))
    }

    async fn get_for_update(&self, key: &str) -> Result<Option<StoredGroup>, CamelError> {
        Ok(self.lend(key))
    }

    async fn put(
        &self,
        key: &str,
        exchange: &Exchange,
        version: Option<u64>,
    ) -> Result<u64, RepositoryError> {
        self.put_now(key, exchange.clone(), version)
    }

    async fn complete(
        &self,
        key: &str,
        version: Option<u64>,
        completion_id: &str,
        exchange: &Exchange,
    ) -> Result<(), RepositoryError> {
        self.complete_now(key, version, completion_id, exchange)
    }

    async fn confirm(&self, completion_id: &str) -> Result<(), CamelError> {
        self.state().completed.remove(completion_id);
        Ok(())
    }

    async fn keys(&self) -> Result<Vec<String>, CamelError> {
        Ok(self
            .state()
            .open
            .iter()
            .filter(|(_, (ex, _))| ex.is_some())
            .map(|(k, _)| k.clone())
            .collect())
    }

    async fn unconfirmed(&self, older_than: Duration) -> Result<Vec<CompletedGroup>, CamelError> {
        Ok(self
            .state()
            .completed
            .iter()
            .filter(|(_, c)| c.at.elapsed() >= older_than)
            .map(|(id, c)| CompletedGroup {
                completion_id: id.clone(),
                key: c.key.clone(),
                exchange: c.exchange.clone(),
                attempts: c.attempts,
            })
            .collect())
    }

    async fn record_attempt(&self, completion_id: &str) -> Result<(), CamelError> {
        if let Some(c) = self.state().completed.get_mut(completion_id) {
            c.attempts += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stale_version_conflicts() {
        let repo = MemoryAggregationRepository::new();
        let v1 = repo.put("k", &Exchange::new("a"), None).await.unwrap();
        assert!(matches!(
            repo.put("k", &Exchange::new("b"), None).await,
            Err(RepositoryError::Conflict)
        ));
        let v2 = repo.put("k", &Exchange::new("b"), Some(v1)).await.unwrap();
        assert!(matches!(
            repo.put("k", &Exchange::new("c"), Some(v1)).await,
            Err(RepositoryError::Conflict)
        ));
        assert!(matches!(
            repo.complete("k", Some(v1), "c1", &Exchange::new("x"))
                .await,
            Err(RepositoryError::Conflict)
        ));
        repo.complete("k", Some(v2), "c1", &Exchange::new("x"))
            .await
            .unwrap();
        assert!(repo.get("k").await.unwrap().is_none());
        assert_eq!(repo.unconfirmed(Duration::ZERO).await.unwrap().len(), 1);
        repo.confirm("c1").await.unwrap();
        assert!(repo.unconfirmed(Duration::ZERO).await.unwrap().is_empty());
    }
}
