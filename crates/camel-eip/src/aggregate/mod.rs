//! The Aggregator EIP: exchanges with the same correlation key are folded into one by an
//! [`AggregationStrategy`](crate::aggregation::AggregationStrategy); when the group
//! completes (size, timeout, interval, predicate, batch, new group, stop), the aggregate
//! runs through the nested steps. The incoming exchange itself goes on unchanged.
//!
//! Groups live in an [`AggregationRepository`]: in memory by default, or in PostgreSQL or
//! SQLite (`camel-state`), where they survive a restart. A completed group stays in the
//! repository until its steps finished, so recovery (`use_recovery`) redelivers what a
//! crash interrupted. The timer task and the stop/hot-swap hand-over are the aggregator's
//! [`StepLifecycle`](camel_api::StepLifecycle) (ADR 0057).
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use camel_api::{Body, BoxProcessor, CamelError, Exchange, Expression, Value};
//! use camel_eip::aggregate::{Aggregator, AggregatorOptions, AggregatorParts};
//! use camel_eip::aggregation::builtin;
//!
//! #[derive(Debug)]
//! struct Id;
//! impl Expression for Id {
//!     fn evaluate(&self, ex: &Exchange) -> Result<Value, CamelError> {
//!         Ok(ex.header("id").cloned().unwrap_or_default())
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), CamelError> {
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let sink = seen.clone();
//! let steps = BoxProcessor::sync(move |ex: Exchange| {
//!     sink.lock().unwrap().push(ex.message.body.clone());
//!     Ok(ex)
//! });
//! let options = AggregatorOptions { completion_size: Some(2), ..Default::default() };
//! let parts = AggregatorParts {
//!     correlation: Arc::new(Id),
//!     strategy: builtin("GroupedBodyAggregationStrategy").unwrap(),
//!     completion_size: None,
//!     completion_timeout: None,
//!     completion_predicate: None,
//!     repository: None,
//!     steps,
//!     dead_letter: None,
//! };
//! let agg = Aggregator::build("orders", "aggregate", options, parts);
//! agg.lifecycle.start().await?;
//! for (id, body) in [("a", "1"), ("b", "2"), ("a", "3")] {
//!     agg.processor.process(Exchange::new(body).with_header("id", id)).await?;
//! }
//! assert_eq!(*seen.lock().unwrap(), [Body::from(serde_json::json!(["1", "3"]))]);
//! # Ok(()) }
//! ```

mod completion;
mod intake;
mod lifecycle;
mod repository;
mod service;

use std::sync::Arc;

use camel_api::{BoxProcessor, StepLifecycle};

pub use completion::CompletedBy;
pub use lifecycle::AggregateHandover;
pub use repository::{
    AggregationRepository, CompletedGroup, MemoryAggregationRepository, RepositoryError,
    SharedRepository, StoredGroup,
};
pub use service::{AggregatorOptions, AggregatorParts};

/// Names of the properties the aggregator sets on an aggregate.
pub mod names {
    /// How many exchanges the group holds.
    pub const SIZE: &str = "CamelAggregatedSize";
    /// Why it completed (`size`, `timeout`, `interval`, `predicate`, `consumer`, `force`,
    /// `new`).
    pub const COMPLETED_BY: &str = "CamelAggregatedCompletedBy";
    /// The group's correlation key.
    pub const CORRELATION_KEY: &str = "CamelAggregatedCorrelationKey";
}

/// A built aggregator: the intake processor for the route and its lifecycle.
#[derive(Debug)]
pub struct Aggregator {
    /// Takes exchanges into their groups (returns each unchanged).
    pub processor: BoxProcessor,
    /// Timers, stop and hand-over; register it with the route.
    pub lifecycle: Arc<dyn StepLifecycle>,
}

impl Aggregator {
    /// Builds an aggregator named `step_name` (unique and stable within the route, so a
    /// hot swap finds its replacement).
    pub fn build(
        route_id: &str,
        step_name: &str,
        options: AggregatorOptions,
        parts: AggregatorParts,
    ) -> Self {
        let inner = Arc::new(service::Inner::new(route_id, step_name, options, parts));
        Aggregator {
            processor: BoxProcessor::new(intake::Intake(inner.clone())),
            lifecycle: Arc::new(lifecycle::Lifecycle::new(inner)),
        }
    }
}
