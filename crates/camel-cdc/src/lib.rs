//! `pg-replication-slot:DATABASE/SLOT`: PostgreSQL change data capture, streamed over
//! logical replication with the built-in `pgoutput` plugin, at least once.
//!
//! In `from`, each inserted, updated or deleted row of the publication's tables becomes
//! one exchange, in commit order: the row as a JSON body (column name → value), and the
//! table, schema, operation, LSN and commit time as headers. The slot's confirmed
//! position moves past a transaction only once every change of it, and of every
//! transaction before it, went through the route successfully; a failed route makes the
//! consumer reconnect, and the server sends the unconfirmed transactions again. At most
//! `max_inflight` exchanges are unsettled at once; at the bound the consumer stops
//! reading the stream (back-pressure through the server's socket).
//!
//! The slot and the publication are created when missing; the initial snapshot is
//! optional (`snapshot=true`). Camel's component of this name polls a slot with SQL
//! functions and hands out the plugin's text; this one streams. ADR 0156 says why, and
//! `docs/components.md` lists the options and the differences.
//!
//! ```
//! use camel_api::Component;
//! assert_eq!(camel_cdc::CdcComponent::new().scheme(), "pg-replication-slot");
//! assert_eq!(camel_cdc::CdcComponent::alias().scheme(), "postgres-cdc");
//! ```

mod component;
mod consumer;
mod exchange;
mod options;
pub mod pgoutput;
pub mod progress;
mod slot;
pub mod value;

pub use component::CdcComponent;
pub use consumer::CdcConsumer;
pub use exchange::{
    format_lsn, BEFORE_HEADER, COMMIT_LSN_HEADER, COMMIT_TIME_HEADER, LSN_HEADER, OPERATION_HEADER,
    SCHEMA_HEADER, TABLE_HEADER, TRANSACTION_ID_HEADER,
};
pub use options::{CdcOptions, Password, OUTPUT_PLUGIN};
pub use slot::{drop_slot, SlotError};
