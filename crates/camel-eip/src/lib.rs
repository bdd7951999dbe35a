//! Enterprise Integration Patterns, each a `tower` service or layer over
//! [`camel_api::BoxProcessor`]s. The wrapping ones are also generic tower layers; see
//! [`layer`].
//!
//! The route compiler in `camel-core` turns route steps into these; they can also be used
//! directly from Rust.

pub mod aggregate;
pub mod aggregation;
pub mod choice;
pub mod circuit_breaker;
pub mod claim_check;
pub mod config;
pub mod convert;
pub mod dataformat;
pub mod delay;
pub mod dynamic;
pub mod enrich;
pub mod error_handler;
pub mod exchange;
pub mod filter;
pub mod idempotent;
pub mod layer;
pub mod load_balance;
pub mod log;
pub mod looping;
pub mod message;
pub mod middleware;
pub mod multicast;
pub mod on_completion;
pub mod pipeline;
pub mod policy;
pub mod recipient_list;
pub mod resequencer;
pub mod routing_slip;
pub mod sample;
pub mod sort;
pub mod split;
pub mod state;
pub mod throttle;
pub mod trace;
pub mod transacted;
pub mod try_catch;
pub mod unit_of_work;
pub mod validate;
pub mod variable;
pub mod wire_tap;
