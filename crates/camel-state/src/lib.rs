//! PostgreSQL and SQLite repositories for the stateful EIPs: an `aggregate`'s groups
//! ([`SqlAggregationRepository`]) and an `idempotent_consumer`'s message ids
//! ([`SqlIdempotentRepository`]), on camel-outbox's [`Datasource`](camel_outbox::Datasource)
//! (its pools, SQLite WAL mode and connect timeout).
//!
//! Routes name them by URL (`aggregation_repository: postgres://…`,
//! `message_id_repository: sqlite:state.db`) once [`register`] has put a [`StateStores`]
//! into the context; the `camel` binary does. Two tables hold everything (see `store`):
//! `camel_aggregation` and `camel_idempotent`, created on first use, rows told apart by
//! the repository name (route id and step).
//!
//! ```no_run
//! # async fn f() -> Result<(), camel_api::CamelError> {
//! use camel_state::StateStores;
//! use camel_eip::state::StoreFactory;
//!
//! let stores = StateStores::default();
//! let repo = stores.aggregation("sqlite:/tmp/state.db", "orders/aggregate")?;
//! assert!(repo.keys().await?.is_empty());
//! # Ok(()) }
//! ```

mod aggregation;
pub mod codec;
mod idempotent;
mod store;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use camel_api::pools::Pools;
use camel_api::CamelError;
use camel_eip::aggregate::SharedRepository;
use camel_eip::idempotent::SharedIdempotentRepository;
use camel_eip::state::{StoreFactory, STORE_FACTORY};

pub use aggregation::SqlAggregationRepository;
pub use idempotent::SqlIdempotentRepository;

/// Builds repositories by URL, one connection pool per database: the context's when made
/// with [`StateStores::with_pools`] (shared with `sql:` and the outbox, ADR 0085), else
/// pools of its own.
#[derive(Debug, Default)]
pub struct StateStores {
    stores: Mutex<HashMap<String, Arc<store::Store>>>,
    pools: Pools,
}

impl StateStores {
    /// Stores whose pools are `pools` (a context's: `CamelContext::pools()`), closed with it.
    pub fn with_pools(pools: Pools) -> Self {
        StateStores {
            stores: Mutex::default(),
            pools,
        }
    }

    fn store(&self, url: &str) -> Result<Arc<store::Store>, CamelError> {
        let lower = url.to_ascii_lowercase();
        if !(lower.starts_with("postgres://")
            || lower.starts_with("postgresql://")
            || lower.starts_with("sqlite:"))
        {
            return Err(CamelError::invalid_uri(
                url,
                "a state store is postgres://…, postgresql://… or sqlite:PATH",
            ));
        }
        let mut stores = self.stores.lock().unwrap_or_else(|e| e.into_inner());
        Ok(stores
            .entry(url.to_string())
            .or_insert_with(|| Arc::new(store::Store::new(url, self.pools.clone())))
            .clone())
    }
}

impl StoreFactory for StateStores {
    fn aggregation(&self, url: &str, name: &str) -> Result<SharedRepository, CamelError> {
        Ok(Arc::new(SqlAggregationRepository::new(
            self.store(url)?,
            name,
        )))
    }

    fn idempotent(&self, url: &str, name: &str) -> Result<SharedIdempotentRepository, CamelError> {
        Ok(Arc::new(SqlIdempotentRepository::new(
            self.store(url)?,
            name,
        )))
    }
}

/// Registers a [`StateStores`] as the context's store factory, so routes can name
/// repositories by URL. Its pools are its own; [`register_with_pools`] shares the
/// context's.
pub fn register(add_resource: impl FnOnce(&str, Arc<dyn std::any::Any + Send + Sync>)) {
    register_with_pools(Pools::new(), add_resource);
}

/// Like [`register`], on the context's `pools` (`CamelContext::pools()`): a repository on
/// the database of a `sql:` endpoint or an outbox uses the same pool.
pub fn register_with_pools(
    pools: Pools,
    add_resource: impl FnOnce(&str, Arc<dyn std::any::Any + Send + Sync>),
) {
    let factory: Arc<dyn StoreFactory> = Arc::new(StateStores::with_pools(pools));
    add_resource(STORE_FACTORY, Arc::new(factory));
}
