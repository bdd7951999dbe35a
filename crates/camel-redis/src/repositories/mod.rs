//! Redis repositories for the stateful EIPs: an idempotent consumer's ids
//! ([`RedisIdempotentRepository`]) and an aggregator's groups
//! ([`RedisAggregationRepository`]), under Camel's names. They outlive the process: a
//! restarted (or another) process on the same Redis sees the ids and the open groups.
//!
//! A route names them like camel-state's database repositories, by URL
//! (`messageIdRepository: redis://127.0.0.1:6379`, `aggregationRepository:
//! redis://…`), once [`register`] has wrapped the context's store factory (the `camel`
//! binary does); or by a context resource (`idempotentRepository: "#redisRepo"`)
//! registered from Rust:
//!
//! ```no_run
//! use std::sync::Arc;
//! use camel_eip::idempotent::SharedIdempotentRepository;
//! use camel_redis::repositories::{RedisIdempotentRepository, RedisStore};
//!
//! # fn f() -> Result<(), camel_api::CamelError> {
//! let store = Arc::new(RedisStore::new("redis://127.0.0.1:6379")?);
//! let repo: SharedIdempotentRepository = Arc::new(RedisIdempotentRepository::new(store, "orders"));
//! // ctx.add_resource("redisRepo", Arc::new(repo));
//! # Ok(()) }
//! ```

mod aggregation;
mod idempotent;
mod store;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use camel_api::CamelError;
use camel_eip::aggregate::SharedRepository;
use camel_eip::idempotent::SharedIdempotentRepository;
use camel_eip::state::{StoreFactory, STORE_FACTORY};

pub use aggregation::RedisAggregationRepository;
pub use idempotent::RedisIdempotentRepository;
pub use store::RedisStore;

/// A store factory that builds Redis repositories for `redis://` and `rediss://` URLs and
/// hands every other URL to the factory it wraps (camel-state's, for `postgres://…` and
/// `sqlite:…`). One connection per Redis URL.
#[derive(Debug)]
pub struct RedisStores {
    inner: Option<Arc<dyn StoreFactory>>,
    stores: Mutex<HashMap<String, Arc<RedisStore>>>,
}

impl RedisStores {
    /// Redis repositories, other URLs to `inner` (none: refused).
    pub fn new(inner: Option<Arc<dyn StoreFactory>>) -> Self {
        RedisStores {
            inner,
            stores: Mutex::default(),
        }
    }

    fn store(&self, url: &str) -> Result<Arc<RedisStore>, CamelError> {
        let mut stores = self.stores.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(store) = stores.get(url) {
            return Ok(store.clone());
        }
        let store = Arc::new(RedisStore::new(url)?);
        stores.insert(url.to_string(), store.clone());
        Ok(store)
    }

    fn other(&self, url: &str) -> Result<&dyn StoreFactory, CamelError> {
        self.inner.as_deref().ok_or_else(|| {
            CamelError::invalid_uri(
                camel_api::redact_url(url),
                "a Redis repository is redis://HOST:PORT or rediss://HOST:PORT",
            )
        })
    }
}

impl StoreFactory for RedisStores {
    fn aggregation(&self, url: &str, name: &str) -> Result<SharedRepository, CamelError> {
        if store::is_redis_url(url) {
            return Ok(Arc::new(RedisAggregationRepository::new(
                self.store(url)?,
                name,
            )));
        }
        self.other(url)?.aggregation(url, name)
    }

    fn idempotent(&self, url: &str, name: &str) -> Result<SharedIdempotentRepository, CamelError> {
        if store::is_redis_url(url) {
            return Ok(Arc::new(RedisIdempotentRepository::new(
                self.store(url)?,
                name,
            )));
        }
        self.other(url)?.idempotent(url, name)
    }
}

/// Wraps the store factory registered in a context (`current`, read with the context's
/// `resource(STORE_FACTORY)`) so that Redis URLs also work, and registers the wrapper
/// through `add_resource`.
pub fn register(
    current: Option<Arc<dyn std::any::Any + Send + Sync>>,
    add_resource: impl FnOnce(&str, Arc<dyn std::any::Any + Send + Sync>),
) {
    let inner = current
        .and_then(|r| r.downcast::<Arc<dyn StoreFactory>>().ok())
        .map(|f| (*f).clone());
    let factory: Arc<dyn StoreFactory> = Arc::new(RedisStores::new(inner));
    add_resource(STORE_FACTORY, Arc::new(factory));
}
