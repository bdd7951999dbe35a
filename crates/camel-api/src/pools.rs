//! The database pools a context shares: one per database, whichever component names it.
//!
//! A `sql:` endpoint, an `outbox:` relay and a state repository on the same database URL
//! would otherwise each open a pool of their own, so the database sees the sum of their
//! maxima. [`Pools`] is the context's table of pools by database key (the key says which
//! database, without its password): the first user makes the pool with its settings,
//! later users get the same one, and the context closes every pool when it stops — not
//! when a route stops, so a relay keeps its pool across a route restart or a hot swap.
//! A context started again after a stop makes new pools on first use.
//!
//! `camel-api` knows no database: a pool is any [`SharedPool`] (the outbox's
//! `Datasource`, `sql:`'s MySQL pool), stored by type and key. See ADR 0085.
//!
//! ```
//! use camel_api::pools::{Pools, SharedPool};
//! use futures::future::BoxFuture;
//! use std::sync::{atomic::{AtomicBool, Ordering}, Arc};
//!
//! #[derive(Clone, Debug, Default)]
//! struct Fake(Arc<AtomicBool>);
//! impl SharedPool for Fake {
//!     fn close(&self) -> BoxFuture<'static, ()> {
//!         self.0.store(true, Ordering::SeqCst);
//!         Box::pin(async {})
//!     }
//!     fn is_closed(&self) -> bool { self.0.load(Ordering::SeqCst) }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let pools = Pools::new();
//! let a = pools.get_or_try_insert_with("sqlite:/data/app.db", || Ok::<_, ()>(Fake::default())).unwrap();
//! let b = pools.get_or_try_insert_with("sqlite:/data/app.db", || Ok::<_, ()>(Fake::default())).unwrap();
//! assert!(Arc::ptr_eq(&a.0, &b.0), "one pool per database");
//! pools.close().await;
//! assert!(a.is_closed() && pools.is_empty());
//! # }
//! ```

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

/// A connection pool that a context may share and must close when it stops.
pub trait SharedPool: Clone + Send + Sync + 'static {
    /// Closes the pool: no new connection is handed out once the future is first polled;
    /// it ends when the connections in use have come back and every one is closed.
    fn close(&self) -> BoxFuture<'static, ()>;

    /// True once [`close`](Self::close) was called.
    fn is_closed(&self) -> bool;

    /// One round trip to the database on a pooled connection (`SELECT 1`), for readiness:
    /// `Err` says why it did not answer. The default knows no database and says `Ok`.
    fn ping(&self) -> BoxFuture<'static, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }
}

type Close = Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;
type Ping = Box<dyn Fn() -> BoxFuture<'static, Result<(), String>> + Send + Sync>;

struct Entry {
    kind: TypeId,
    pool: Box<dyn Any + Send + Sync>,
    is_closed: Box<dyn Fn() -> bool + Send + Sync>,
    close: Close,
    ping: Ping,
}

/// The context's pools by database key. Cheap to clone; clones share the table.
#[derive(Clone, Default)]
pub struct Pools {
    /// Keyed by the pool's type and the database key: two components that name one
    /// database through two pool types would get two pools, so every user of a
    /// database kind goes through one type (PostgreSQL and SQLite: the outbox's
    /// `Datasource`).
    table: Arc<Mutex<HashMap<String, Vec<Entry>>>>,
}

impl fmt::Debug for Pools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pools").field("keys", &self.keys()).finish()
    }
}

impl Pools {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The pool of the database `key`, made with `make` when the table has none (or only
    /// a closed one). `key` must not hold a password (it is shown by [`keys`](Self::keys)).
    /// `make` runs under the table's lock: it must not block (a lazy pool, no connection).
    pub fn get_or_try_insert_with<P: SharedPool, E>(
        &self,
        key: &str,
        make: impl FnOnce() -> Result<P, E>,
    ) -> Result<P, E> {
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        // A hit (every statement of a route asks) allocates nothing.
        if let Some(entry) = table
            .get(key)
            .and_then(|entries| entries.iter().find(|e| e.kind == TypeId::of::<P>()))
        {
            if !(entry.is_closed)() {
                if let Some(pool) = entry.pool.downcast_ref::<P>() {
                    return Ok(pool.clone());
                }
            }
        }
        let pool = make()?;
        let (for_close, for_check, for_ping) = (pool.clone(), pool.clone(), pool.clone());
        let entries = table.entry(key.to_string()).or_default();
        entries.retain(|e| e.kind != TypeId::of::<P>());
        entries.push(Entry {
            kind: TypeId::of::<P>(),
            pool: Box::new(pool.clone()),
            is_closed: Box::new(move || for_check.is_closed()),
            close: Box::new(move || for_close.close()),
            ping: Box::new(move || for_ping.ping()),
        });
        Ok(pool)
    }

    /// Keys of the open pools, sorted (for metrics, the admin API and tests).
    pub fn keys(&self) -> Vec<String> {
        let table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let mut keys: Vec<String> = table
            .iter()
            .flat_map(|(k, entries)| entries.iter().map(move |e| (k, e)))
            .filter(|(_, e)| !(e.is_closed)())
            .map(|(k, _)| k.clone())
            .collect();
        keys.sort();
        keys
    }

    /// Number of open pools.
    pub fn len(&self) -> usize {
        self.keys().len()
    }

    /// True when no pool is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pings every open pool at once, each within `timeout` (a database that does not
    /// answer in time is down), and gives each key with its outcome, sorted by key. The
    /// table's lock is not held while they run.
    pub fn ping(
        &self,
        timeout: std::time::Duration,
    ) -> impl std::future::Future<Output = Vec<(String, Result<(), String>)>> + Send + 'static {
        let pings: Vec<(String, BoxFuture<'static, Result<(), String>>)> = {
            let table = self.table.lock().unwrap_or_else(|p| p.into_inner());
            table
                .iter()
                .flat_map(|(k, entries)| entries.iter().map(move |e| (k, e)))
                .filter(|(_, e)| !(e.is_closed)())
                .map(|(k, e)| (k.clone(), (e.ping)()))
                .collect()
        };
        async move {
            let mut outcomes =
                futures::future::join_all(pings.into_iter().map(|(key, ping)| async move {
                    let outcome = match tokio::time::timeout(timeout, ping).await {
                        Ok(outcome) => outcome,
                        Err(_) => Err(format!("no answer within {timeout:?}")),
                    };
                    (key, outcome)
                }))
                .await;
            outcomes.sort_by(|a, b| a.0.cmp(&b.0));
            outcomes
        }
    }

    /// Closes every pool and empties the table (a later use makes a new pool). Every pool
    /// refuses new connections from the future's first poll; the future ends when their
    /// connections are closed, which waits for the ones still in use.
    pub fn close(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let entries: Vec<Entry> = {
            let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
            table.drain().flat_map(|(_, e)| e).collect()
        };
        let closing: Vec<_> = entries.iter().map(|e| (e.close)()).collect();
        async move {
            futures::future::join_all(closing).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    #[derive(Clone, Debug, Default)]
    struct Fake(Arc<AtomicBool>);

    impl SharedPool for Fake {
        fn close(&self) -> BoxFuture<'static, ()> {
            self.0.store(true, Ordering::SeqCst);
            Box::pin(async {})
        }
        fn is_closed(&self) -> bool {
            self.0.load(Ordering::SeqCst)
        }
    }

    #[derive(Clone, Debug, Default)]
    struct Other;

    impl SharedPool for Other {
        fn close(&self) -> BoxFuture<'static, ()> {
            Box::pin(async {})
        }
        fn is_closed(&self) -> bool {
            false
        }
    }

    #[tokio::test]
    async fn one_pool_per_key_until_closed_then_a_new_one() {
        let pools = Pools::new();
        let made = AtomicUsize::new(0);
        let make = || {
            made.fetch_add(1, Ordering::SeqCst);
            Ok::<_, ()>(Fake::default())
        };
        let a = pools.get_or_try_insert_with("db-a", make).unwrap();
        let again = pools.get_or_try_insert_with("db-a", make).unwrap();
        assert!(Arc::ptr_eq(&a.0, &again.0));
        let b = pools.get_or_try_insert_with("db-b", make).unwrap();
        assert!(!Arc::ptr_eq(&a.0, &b.0));
        assert_eq!(made.load(Ordering::SeqCst), 2);
        assert_eq!(pools.keys(), ["db-a", "db-b"]);

        pools.close().await;
        assert!(a.is_closed() && b.is_closed());
        assert!(pools.is_empty());
        let fresh = pools.get_or_try_insert_with("db-a", make).unwrap();
        assert!(!fresh.is_closed(), "a use after the stop makes a new pool");
        assert_eq!(made.load(Ordering::SeqCst), 3);
    }

    #[derive(Clone, Debug)]
    struct Down;

    impl SharedPool for Down {
        fn close(&self) -> BoxFuture<'static, ()> {
            Box::pin(async {})
        }
        fn is_closed(&self) -> bool {
            false
        }
        fn ping(&self) -> BoxFuture<'static, Result<(), String>> {
            Box::pin(async { Err("connection refused".to_string()) })
        }
    }

    #[derive(Clone, Debug)]
    struct Silent;

    impl SharedPool for Silent {
        fn close(&self) -> BoxFuture<'static, ()> {
            Box::pin(async {})
        }
        fn is_closed(&self) -> bool {
            false
        }
        fn ping(&self) -> BoxFuture<'static, Result<(), String>> {
            Box::pin(std::future::pending())
        }
    }

    #[tokio::test(start_paused = true)]
    async fn ping_reports_each_open_pool_and_bounds_a_silent_one() {
        let pools = Pools::new();
        pools
            .get_or_try_insert_with("a", || Ok::<_, ()>(Fake::default()))
            .unwrap();
        pools
            .get_or_try_insert_with("b", || Ok::<_, ()>(Down))
            .unwrap();
        pools
            .get_or_try_insert_with("c", || Ok::<_, ()>(Silent))
            .unwrap();
        let closed = pools
            .get_or_try_insert_with("d", || Ok::<_, ()>(Fake::default()))
            .unwrap();
        drop(closed.close());
        let outcomes = pools.ping(std::time::Duration::from_secs(2)).await;
        assert_eq!(
            outcomes,
            vec![
                ("a".to_string(), Ok(())),
                ("b".to_string(), Err("connection refused".to_string())),
                ("c".to_string(), Err("no answer within 2s".to_string())),
            ]
        );
    }

    #[test]
    fn a_pool_closed_by_its_user_is_replaced() {
        let pools = Pools::new();
        let a = pools
            .get_or_try_insert_with("db", || Ok::<_, ()>(Fake::default()))
            .unwrap();
        drop(a.close());
        let b = pools
            .get_or_try_insert_with("db", || Ok::<_, ()>(Fake::default()))
            .unwrap();
        assert!(!b.is_closed());
    }

    #[test]
    fn a_failed_make_stores_nothing_and_types_do_not_mix() {
        let pools = Pools::new();
        let err = pools.get_or_try_insert_with::<Fake, _>("db", || Err("unreachable"));
        assert_eq!(err.unwrap_err(), "unreachable");
        assert!(pools.is_empty());
        pools
            .get_or_try_insert_with("db", || Ok::<_, ()>(Fake::default()))
            .unwrap();
        pools
            .get_or_try_insert_with("db", || Ok::<_, ()>(Other))
            .unwrap();
        assert_eq!(pools.len(), 2);
    }
}
