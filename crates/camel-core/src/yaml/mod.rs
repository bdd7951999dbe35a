//! The YAML DSL, in the shape of Apache Camel's YAML DSL.
//!
//! ```yaml
//! - route:
//!     id: hello
//!     from:
//!       uri: timer:tick
//!       parameters: {period: 1000}
//!       steps:
//!         - set_body: {simple: "Hello from ${header.CamelTimerCounter}"}
//!         - to: log:hello
//! ```
//!
//! Keys are snake_case; Camel's camelCase spellings (`setBody`, `repeatCount`) are accepted
//! everywhere. The reader keeps keys as written: each step's options are decoded by the
//! step's typed configuration (with its aliases) when the route is compiled, and maps of
//! user data (endpoint `parameters`) reach their reader unchanged. Every error names the
//! file, line and column.

mod configuration;
mod loader;
mod node;
mod route_configuration;

pub use loader::{load_file, load_str};
