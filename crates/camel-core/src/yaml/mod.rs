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
//! file, line and column, and every error of a file is reported at once.
//!
//! Files in the shapes Camel's tools write load as they are: several documents (`---`),
//! Camel K `Integration`s (`spec.flows`) and `Pipe`s (`source` → `sink`), endpoint paths
//! given as parameters (`uri: timer` + `timerName`), node `id`/`description`/`disabled`.
//! A Camel name camel-rs lacks is reported as such, not as a typo (ADR 0051).
//!
//! Property placeholders (`{{key}}`, `{{key:default}}`, `{{env:NAME}}`) in string values
//! are resolved before the routes are read ([`load_str_with`] takes the properties; the
//! functions without `_with` resolve defaults and `env:` only).

mod builtin;
mod camel_k;
mod configuration;
mod expand;
mod instantiate;
mod intercept;
mod loader;
mod node;
mod normalise;
mod placeholders;
mod rest;
mod route;
mod route_configuration;
mod templates;

pub use instantiate::instantiate_template;
pub use loader::{
    load_file, load_file_partial, load_file_partial_with, load_file_with, load_files_partial_with,
    load_files_with, load_files_with_kamelets, load_str, load_str_partial, load_str_partial_with,
    load_str_with, load_texts_partial_with, load_texts_with, load_with_kamelets,
};

/// Every document of a YAML text with the position of each of its nodes (JSON pointer →
/// line, column), or its syntax error with line and column: for files that are not routes
/// but want errors located as route errors are (`camel test`'s `*.test.yaml`, ADR 0127).
pub fn parse_documents(
    text: &str,
    file: &str,
) -> Result<Vec<(serde_json::Value, crate::model::Positions)>, (String, usize, usize)> {
    let file: std::sync::Arc<str> = file.into();
    node::parse_all(text, &file)
        .map(|docs| {
            docs.into_iter()
                .map(|d| {
                    let positions = crate::model::Positions {
                        file: file.clone(),
                        positions: std::sync::Arc::new(d.positions),
                    };
                    (d.value, positions)
                })
                .collect()
        })
        .map_err(|e| (e.message, e.line, e.column))
}

/// The values of every document of a YAML text, or its syntax error with line and column
/// (for properties files written in YAML).
pub(crate) fn parse_values(text: &str) -> Result<Vec<serde_json::Value>, (String, usize, usize)> {
    node::parse_all(text, "")
        .map(|docs| docs.into_iter().map(|d| d.value).collect())
        .map_err(|e| (e.message, e.line, e.column))
}
