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
mod codec;
mod idempotent;
mod store;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use camel_api::CamelError;
use camel_eip::aggregate::SharedRepository;
use camel_eip::idempotent::SharedIdempotentRepository;
use camel_eip::state::{StoreFactory, STORE_FACTORY};

pub use aggregation::SqlAggregationRepository;
pub use idempotent::SqlIdempotentRepository;

/// Builds repositories by URL, one connection pool per URL.
#[derive(Debug, Default)]
pub struct StateStores {
    stores: Mutex<HashMap<String, Arc<store::Store>>>,
}

impl StateStores {
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
            .or_insert_with(|| Arc::new(store::Store::new(url)))
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
/// repositories by URL.
pub fn register(add_resource: impl FnOnce(&str, Arc<dyn std::any::Any + Send + Sync>)) {
    let factory: Arc<dyn StoreFactory> = Arc::new(StateStores::default());
    add_resource(STORE_FACTORY, Arc::new(factory));
}
