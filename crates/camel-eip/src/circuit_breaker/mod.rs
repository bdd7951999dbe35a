//! Circuit breaker: stops calling steps that keep failing, and lets a few trial calls
//! through after a pause, with Camel's resilience4j options and exchange properties.
//!
//! While the circuit is closed every exchange runs the protected steps and their outcome
//! goes into a sliding window (the last N calls, or the calls of the last N seconds). When
//! the failure rate or the slow-call rate reaches its threshold the circuit opens: the
//! steps are skipped and the exchange goes to the fallback (or passes on unchanged, as
//! Camel does, unless `throw_when_open`). After `wait_in_open` the next exchanges are
//! trial calls (half open); they close the circuit again or reopen it. The decision is a
//! pure type ([`state`]) beside one lock that is never held across an await.
//!
//! Every exchange that leaves carries Camel 4's properties
//! [`CIRCUIT_BREAKER_SUCCESSFUL_EXECUTION`], [`CIRCUIT_BREAKER_FROM_FALLBACK`],
//! [`CIRCUIT_BREAKER_SHORT_CIRCUITED`], [`CIRCUIT_BREAKER_TIMED_OUT`] and
//! [`CIRCUIT_BREAKER_REJECTED`], set as Camel sets them (a fallback counts as short
//! circuited; a refused call is short circuited and rejected), and the same first four
//! under Camel 3's names ([`RESPONSE_SUCCESSFUL_EXECUTION`], …) for files written for it.
//! The fallback sees the exchange as it entered the breaker, with the error readable as
//! `${exception…}`. The state is the gauge [`STATE_METRIC`]`{routeId, nodeId}` (0 closed,
//! 1 open, 2 half open).
//!
//! As a tower layer, [`CircuitBreakerLayer`] protects the service it wraps; every service
//! it makes shares one circuit.
//!
//! ```
//! use std::time::Duration;
//! use camel_api::{BoxProcessor, CamelError, Exchange};
//! use camel_eip::circuit_breaker::{BreakerSettings, CircuitBreaker, CircuitState, Thresholds};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let settings = BreakerSettings {
//!     thresholds: Thresholds { window_size: 2, minimum_number_of_calls: 2, ..Thresholds::default() },
//!     ..BreakerSettings::default()
//! };
//! let failing = BoxProcessor::sync(|_| Err(CamelError::processor("down")));
//! let fallback = BoxProcessor::sync(|mut ex: Exchange| { ex.message.body = "cached".into(); Ok(ex) });
//! let breaker = CircuitBreaker::new(settings, Some(fallback), failing);
//! let step = breaker.clone().into_processor();
//! for _ in 0..2 {
//!     let out = step.process(Exchange::new("x")).await.unwrap();
//!     assert_eq!(out.message.body, "cached".into());
//! }
//! assert_eq!(breaker.state(), CircuitState::Open);
//! # }
//! ```

mod service;
pub mod state;

pub use service::{BreakerSettings, CircuitBreaker, CircuitBreakerLayer};
pub use state::{CircuitState, Thresholds, WindowKind};

/// Property (Camel 4): true when the protected steps ran and succeeded.
pub const CIRCUIT_BREAKER_SUCCESSFUL_EXECUTION: &str =
    "CamelCircuitBreakerResponseSuccessfulExecution";
/// Property (Camel 4): true when the result came from the fallback.
pub const CIRCUIT_BREAKER_FROM_FALLBACK: &str = "CamelCircuitBreakerResponseFromFallback";
/// Property (Camel 4): true when the protected steps did not give the result (the open
/// circuit refused the call, or the fallback took over).
pub const CIRCUIT_BREAKER_SHORT_CIRCUITED: &str = "CamelCircuitBreakerResponseShortCircuited";
/// Property (Camel 4): true when the protected steps ran past the timeout.
pub const CIRCUIT_BREAKER_TIMED_OUT: &str = "CamelCircuitBreakerResponseTimedOut";
/// Property (Camel 4): true when the open (or half open and full) circuit refused the call.
pub const CIRCUIT_BREAKER_REJECTED: &str = "CamelCircuitBreakerResponseRejected";
/// Property (Camel 3's name): true when the protected steps ran and succeeded.
pub const RESPONSE_SUCCESSFUL_EXECUTION: &str = "CamelResponseSuccessfulExecution";
/// Property (Camel 3's name): true when the result came from the fallback.
pub const RESPONSE_FROM_FALLBACK: &str = "CamelResponseFromFallback";
/// Property (Camel 3's name): true when the open circuit refused the call.
pub const RESPONSE_SHORT_CIRCUITED: &str = "CamelResponseShortCircuited";
/// Property (Camel 3's name): true when the protected steps ran past the timeout.
pub const RESPONSE_TIMED_OUT: &str = "CamelResponseTimedOut";
/// The gauge of each breaker's state, labelled `route` and `id`.
pub const STATE_METRIC: &str = "camel_circuit_breaker_state";

#[cfg(test)]
mod tests;
