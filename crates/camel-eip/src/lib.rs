//! Enterprise Integration Patterns, each a `tower` service or layer over
//! [`camel_api::BoxProcessor`]s. The wrapping ones are also generic tower layers; see
//! [`layer`].
//!
//! The route compiler in `camel-core` turns route steps into these; they can also be used
//! directly from Rust.

pub mod aggregation;
pub mod choice;
pub mod config;
pub mod convert;
pub mod dataformat;
pub mod error_handler;
pub mod filter;
pub mod layer;
pub mod log;
pub mod message;
pub mod middleware;
pub mod multicast;
pub mod on_completion;
pub mod pipeline;
pub mod resequencer;
pub mod trace;
pub mod transacted;
pub mod try_catch;
pub mod variable;
