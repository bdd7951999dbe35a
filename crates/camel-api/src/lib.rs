//! The vocabulary every crate of the framework shares.
//!
//! `camel-api` holds types and traits only; nothing here spawns a task or opens a socket.
//! A route is a chain of [`BoxProcessor`]s, each a `tower::Service<Exchange>`, fed by a
//! [`Consumer`] through a [`ConsumerContext`].
//!
//! ```
//! use camel_api::{BoxProcessor, Exchange, Body};
//! use tower::ServiceExt;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let upper = BoxProcessor::sync(|mut ex: Exchange| {
//!     let text = ex.message.body.as_text().unwrap_or_default().to_uppercase();
//!     ex.message.body = Body::from(text);
//!     Ok(ex)
//! });
//! let out = upper.oneshot(Exchange::new(Body::from("hi"))).await.unwrap();
//! assert_eq!(out.message.body.as_text().as_deref(), Some("HI"));
//! # }
//! ```

pub mod aws;
mod bean;
pub mod blocking;
mod body;
mod component;
mod consumer;
mod counters;
pub mod definition;
mod error;
pub mod error_kind;
mod exchange;
mod expression;
mod gate;
mod health;
pub mod inbound;
mod lifecycle;
mod message;
pub mod nesting;
pub mod pools;
mod processor;
mod redact;
pub mod schema;
mod stripe;
pub mod suggest;
pub mod trace;
pub mod transaction;
mod uri;
mod value;
pub mod variables;

pub use bean::{bean_of, bean_resource, Bean, MethodBean};
pub use body::Body;
pub use component::{Component, ComponentContext, ContextChange, Endpoint, Poller};
pub use consumer::{Consumer, ConsumerContext, ExchangeStats, RoutePipeline};
pub use counters::{CountSink, RouteCounters};
pub use error::{CamelError, ExpressionError, RetryReason};
pub use exchange::{Exchange, ExchangeId, ExchangePattern};
pub use expression::{
    compiling_route, current_route, BoxExpression, BoxPredicate, Expression, Language, Predicate,
};
pub use gate::RouteGate;
pub use health::ConsumerHealth;
pub use lifecycle::{CarriedState, Drained, ShutdownReason, StepLifecycle};
pub use message::{Headers, Message};
pub use processor::{BoxProcessor, Process, ProcessorFuture};
pub use redact::{is_secret_header, is_secret_name, redact_url, shown_value};
pub use stripe::StripedName;
pub use uri::{parse_duration, percent_decode, percent_encode, EndpointUri, Parameters};
pub use value::Value;

/// The `schemars` this crate derives with, for [`expression_config!`] (not public API).
#[doc(hidden)]
pub use schemars as __schemars;

/// Names of headers and properties the framework itself sets or reads.
pub mod names {
    /// Header with the file name, set by the `file` consumer and read by its producer.
    pub const FILE_NAME: &str = "CamelFileName";
    /// Header with the 1-based count of timer firings.
    pub const TIMER_COUNTER: &str = "CamelTimerCounter";
    /// Header with the time the timer fired (milliseconds since the Unix epoch).
    pub const TIMER_FIRED_TIME: &str = "CamelTimerFiredTime";
    /// Property set on an exchange whose `filter` predicate was false.
    pub const FILTER_MATCHED: &str = "CamelFilterMatched";
    /// Property on the parts of a `split` (and the branches of a `multicast`): the id of
    /// the exchange they were made from.
    pub const CORRELATION_ID: &str = "CamelCorrelationId";
}

/// Support for tests that need a real service (PostgreSQL, NATS, an emulator).
///
/// Behind the `testing` feature: it panics on purpose (under `CI=true`), so it is not part
/// of the library's API. Crates turn the feature on in their `[dev-dependencies]`.
#[cfg(feature = "testing")]
pub mod test_support {
    /// Reads a test service's address from the environment variable `var`.
    ///
    /// Without it the test should skip: this prints a line saying so and returns `None`.
    /// Under `CI=true` a missing service is a failure, so this panics instead.
    pub fn service_from_env(var: &str) -> Option<String> {
        match std::env::var(var) {
            Ok(v) if !v.is_empty() => Some(v),
            _ => {
                if std::env::var("CI").is_ok_and(|v| v == "true") {
                    panic!("{var} is not set, and CI=true requires every service test to run");
                }
                eprintln!("skipped: {var} is not set");
                None
            }
        }
    }

    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use crate::{BoxExpression, BoxPredicate, BoxProcessor, CamelError, ComponentContext};

    /// A component context that offers nothing, for building an endpoint outside a
    /// `CamelContext`: asked for an expression, a predicate or a producer, it answers with
    /// an error naming what was asked for. Its route id is `test`.
    #[derive(Debug, Clone, Copy, Default)]
    pub struct NoContext;

    impl ComponentContext for NoContext {
        fn expression(&self, language: &str, _text: &str) -> Result<BoxExpression, CamelError> {
            Err(CamelError::processor(format!(
                "no {language} expressions in this test"
            )))
        }
        fn predicate(&self, language: &str, _text: &str) -> Result<BoxPredicate, CamelError> {
            Err(CamelError::processor(format!(
                "no {language} predicates in this test"
            )))
        }
        fn producer(&self, uri: &str) -> Result<BoxProcessor, CamelError> {
            Err(CamelError::processor(format!(
                "no producer for {uri} in this test"
            )))
        }
        fn resource(&self, _name: &str) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
            None
        }
        fn route_id(&self) -> Option<&str> {
            Some("test")
        }
    }

    /// A route that takes `delay` per exchange and records the most exchanges it ran at
    /// once: how a consumer's back-pressure bound (`prefetch_count`, `max_ack_pending`,
    /// `max_messages_per_poll`) is tested against a real broker.
    #[derive(Debug)]
    pub struct SlowRoute {
        delay: Duration,
        expected: usize,
        running: AtomicUsize,
        most: AtomicUsize,
        done: AtomicUsize,
        all_done: tokio::sync::Notify,
    }

    impl SlowRoute {
        /// A route expecting `expected` exchanges, each taking `delay`.
        pub fn new(expected: usize, delay: Duration) -> Arc<Self> {
            Arc::new(SlowRoute {
                delay,
                expected,
                running: AtomicUsize::new(0),
                most: AtomicUsize::new(0),
                done: AtomicUsize::new(0),
                all_done: tokio::sync::Notify::new(),
            })
        }

        /// The route's pipeline.
        pub fn pipeline(self: &Arc<Self>) -> crate::BoxProcessor {
            let this = self.clone();
            crate::BoxProcessor::from_fn(move |ex: crate::Exchange| {
                let this = this.clone();
                async move {
                    let now = this.running.fetch_add(1, Ordering::SeqCst) + 1;
                    this.most.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(this.delay).await;
                    this.running.fetch_sub(1, Ordering::SeqCst);
                    if this.done.fetch_add(1, Ordering::SeqCst) + 1 == this.expected {
                        this.all_done.notify_one();
                    }
                    Ok(ex)
                }
            })
        }

        /// Waits until every expected exchange has run; panics after `within`.
        pub async fn wait_all(&self, within: Duration) {
            if tokio::time::timeout(within, self.all_done.notified())
                .await
                .is_err()
            {
                panic!(
                    "{} of {} exchanges ran within {within:?}",
                    self.done.load(Ordering::SeqCst),
                    self.expected
                );
            }
        }

        /// The most exchanges that ran at once.
        pub fn most(&self) -> usize {
            self.most.load(Ordering::SeqCst)
        }
    }
}
