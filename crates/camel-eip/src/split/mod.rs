//! Split: cuts one exchange into parts and sends each through the same steps, as Camel's
//! Splitter does.
//!
//! The parts come from a [`SplitExpression`]: the body (a JSON array's elements, or its
//! lines), a [`camel_language::Tokenizer`], or any expression's value. Each part is a copy
//! of the incoming exchange (headers and properties, new id) with the part as its body and
//! the properties `CamelSplitIndex` (from 0), `CamelSplitSize`, `CamelSplitComplete`
//! and, with [`SplitOptions::correlate`], `CamelCorrelationId` (the incoming exchange's
//! id).
//!
//! - **Streaming** takes parts one at a time from their source, so memory holds one part
//!   (per running part) whatever the input's size. A file the `file` consumer hands over
//!   with `lazy_body=true` (empty body, `CamelFileAbsolutePath`) is read in 64 KiB
//!   chunks. `CamelSplitSize` is then only set on the last part.
//! - **Parallel** runs up to `parallel_limit` parts at once, on the calling task.
//! - **Errors**: a failing part fails the split's exchange with that part's error, after
//!   the other parts ran, or at once (no new part starts) with `stop_on_exception`.
//! - **Result**: the incoming exchange, or with an aggregation strategy the parts' results
//!   folded in part order.
//! - **Timeout** bounds the whole split: unfinished parts are abandoned and the result
//!   combines the parts that finished.
//!
//! As a tower layer, [`SplitLayer`] makes the wrapped service the one every part goes
//! through.
//!
//! ```
//! use camel_api::{Body, BoxProcessor, Exchange};
//! use camel_eip::aggregation::builtin;
//! use camel_eip::split::{Split, SplitExpression, SplitOptions};
//! use camel_language::Tokenizer;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let upper = BoxProcessor::sync(|mut ex: Exchange| {
//!     let text = ex.message.body.as_text().unwrap_or_default().to_uppercase();
//!     ex.message.body = Body::from(text);
//!     Ok(ex)
//! });
//! let mut options = SplitOptions::new(SplitExpression::Tokenize(Tokenizer::new(",", false).unwrap()));
//! options.strategy = builtin("grouped_body");
//! let split = Split::new(options, upper).into_processor();
//! let out = split.process(Exchange::new("a,b")).await.unwrap();
//! assert_eq!(out.message.body, Body::from(serde_json::json!(["A", "B"])));
//! # }
//! ```

mod layer;
mod parts;
mod results;
mod service;
#[cfg(test)]
mod tests;

pub use layer::SplitLayer;
pub use parts::{SplitExpression, TextDelimiter};
pub use service::{Split, SplitOptions};

/// Property with the part's index, from 0.
pub const SPLIT_INDEX: &str = "CamelSplitIndex";
/// Property with the number of parts (on the last part only when streaming).
pub const SPLIT_SIZE: &str = "CamelSplitSize";
/// Property that is `true` on the last part.
pub const SPLIT_COMPLETE: &str = "CamelSplitComplete";
