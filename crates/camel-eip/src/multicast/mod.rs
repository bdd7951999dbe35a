//! Multicast: send one exchange to several processors and aggregate their results.
//!
//! Each branch gets its own copy of the incoming exchange (cheap: payloads are shared).
//! Branches run one after another, or — with `parallel` — concurrently on the calling
//! task, and the results are combined by an [`AggregationStrategy`]. `scatter_gather` in
//! the DSLs is this with `parallel: true`.
//!
//! As a tower layer, [`MulticastLayer`] runs the branches and hands the aggregated
//! exchange to the service it wraps.
//!
//! ```
//! use camel_api::{Body, BoxProcessor, Exchange};
//! use camel_eip::multicast::{AggregationStrategy, Multicast, MulticastConfig};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let branch = |text: &'static str| BoxProcessor::sync(move |mut ex: Exchange| {
//!     ex.message.body = Body::from(text);
//!     Ok(ex)
//! });
//! let config = MulticastConfig { parallel: true, strategy: AggregationStrategy::CollectAll };
//! let multicast = Multicast::new(vec![branch("a"), branch("b")], config).into_processor();
//! let out = multicast.process(Exchange::new("in")).await.unwrap();
//! assert_eq!(out.message.body, Body::from(serde_json::json!(["a", "b"])));
//! # }
//! ```

mod aggregate;
mod config;
mod layer;
mod service;

pub use config::{AggregationStrategy, MulticastConfig};
pub use layer::{MulticastLayer, MulticastService};
pub use service::Multicast;
