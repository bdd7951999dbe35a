//! Transactional outbox with an ordered, clustered relay, on PostgreSQL and SQLite.
//!
//! A service writes its business change and the message announcing it in **one**
//! transaction ([`Outbox::publish`]); a [`Relay`] then delivers the committed messages,
//! keeping their order per group (or in total, or not at all), with one active worker
//! per partition across every process sharing the database, retries with backoff, and
//! dead letters. The `outbox:NAME` route component ([`OutboxComponent`]) wraps both ends.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use camel_outbox::{Datasource, NewMessage, Outbox, OutboxConfig, Relay};
//! let ds = Datasource::connect("postgres://postgres@127.0.0.1/app")?;
//! let outbox = Outbox::open(ds.clone(), OutboxConfig::new("orders")).await?;
//! let Datasource::Postgres(pool) = &ds else { unreachable!() };
//! let mut tx = pool.begin().await?;
//! outbox.publish(&mut tx, NewMessage::text("paid").group("order:42")).await?;
//! outbox.commit(tx).await?;
//! let relay = Relay::new(outbox, |m| async move { println!("{}", m.id); Ok(()) }).spawn();
//! relay.shutdown().await?;
//! # Ok(()) }
//! ```
//!
//! The guarantees and their fine print are in `docs/outbox.md`; the decisions behind them
//! in `adr/0010`–`0013`.

pub mod admin;
mod backoff;
pub mod component;
mod config;
mod error;
mod message;
mod metrics;
mod outbox;
mod publish;
mod store;
mod worker;

pub use backoff::Backoff;
pub use component::{OutboxComponent, RouteTransaction, TransactionGuard};
pub use config::{MaxAttempts, Ordering, OutboxConfig, TableName};
pub use error::{OutboxError, Result};
pub use message::{NewMessage, PayloadKind, StoredMessage};
pub use outbox::Outbox;
pub use publish::{OutboxTransaction, TransactionTarget};
pub use store::{Datasource, RelayLock};
pub use worker::{Relay, RelayHandle};

/// Header names the relay sets on each exchange it hands to a route.
pub mod headers {
    /// The message id (an integer, unique and increasing within the outbox).
    pub const ID: &str = "CamelOutboxId";
    /// The outbox's name (`orders` in `outbox:orders`): with the id, a key no other
    /// outbox of the application repeats (the sinks' default idempotency key).
    pub const NAME: &str = "CamelOutboxName";
    /// The group key (absent for an unordered message).
    pub const GROUP_KEY: &str = "CamelOutboxGroupKey";
    /// Which attempt this delivery is (1 for the first).
    pub const ATTEMPT: &str = "CamelOutboxAttempt";
}
