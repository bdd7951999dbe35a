//! Stores for the stateful EIPs written as URLs (`aggregation_repository:
//! postgres://…`, `message_id_repository: sqlite:…`).
//!
//! camel-eip does not talk to databases: an application registers a [`StoreFactory`] as
//! the context resource named [`STORE_FACTORY`] (the `camel` binary registers
//! `camel-state`'s), and the step compilers ask it for a repository per URL.

use std::fmt;

use camel_api::CamelError;

use crate::aggregate::SharedRepository;
use crate::idempotent::SharedIdempotentRepository;

/// The resource name a [`StoreFactory`] is registered under (as an
/// `Arc<dyn StoreFactory>`).
pub const STORE_FACTORY: &str = "camel.state.store_factory";

/// Builds repositories from database URLs. Called while routes compile: implementations
/// connect lazily, on first use.
pub trait StoreFactory: Send + Sync + fmt::Debug + 'static {
    /// An aggregation repository at `url` for the aggregator named `name` (groups of
    /// different names never mix).
    fn aggregation(&self, url: &str, name: &str) -> Result<SharedRepository, CamelError>;

    /// An idempotent repository at `url` for the processor named `name`.
    fn idempotent(&self, url: &str, name: &str) -> Result<SharedIdempotentRepository, CamelError>;
}
