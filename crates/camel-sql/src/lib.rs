//! The `sql:` component: run SQL from a route on PostgreSQL, SQLite or MySQL/MariaDB
//! (sqlx), with Apache Camel's options and headers.
//!
//! - `to: "sql:insert into orders (id, total) values (:#id, :#total)"` binds `:#id` from
//!   the header `id`, else the body's field `id`; `#` takes the body's values in order.
//!   A statement that returns rows puts them in the body as a JSON list of objects
//!   (`output_type=SelectList`, the default), or one row (`SelectOne`), and sets
//!   `CamelSqlRowCount`; any other statement sets `CamelSqlUpdateCount`.
//!   `batch=true` runs the statement once per entry of a JSON list body.
//! - `from: "sql:select * from orders where state = 'new'"` polls every `delay` and
//!   hands each row to the route; `on_consume` runs per row after the route succeeded.
//! - Inside a `transacted` step on the same database, statements run in the step's
//!   transaction (the one the outbox component opened), so `sql:` and `outbox:` commit
//!   and roll back together (ADR 0050).
//!
//! The database: `datasource` (a URL or a context resource name), else the resource
//! [`DATASOURCE_RESOURCE`], else the outbox's `outbox.datasource`. The guide is
//! `docs/sql.md`.
//!
//! ```
//! use std::sync::Arc;
//! let component = camel_sql::SqlComponent::new();
//! let as_dyn: Arc<dyn camel_api::Component> = Arc::new(component);
//! assert_eq!(as_dyn.scheme(), "sql");
//! ```

mod arg;
mod component;
mod consumer;
mod datasource;
mod endpoint;
mod error;
mod exec;
mod jdbc;
mod query;
mod transaction;

pub use component::{SqlComponent, DATASOURCE_RESOURCE};
pub use datasource::Database;
pub use error::SqlError;
pub use jdbc::datasource_from_properties;

/// Header names, as Camel spells them.
pub mod headers {
    /// Rows changed by an insert, update or delete (summed over a batch).
    pub const UPDATE_COUNT: &str = "CamelSqlUpdateCount";
    /// Rows a query returned.
    pub const ROW_COUNT: &str = "CamelSqlRowCount";
    /// A statement to run instead of the endpoint's.
    pub const QUERY: &str = "CamelSqlQuery";
}
