//! Load balancer: sends each exchange to one of several targets, chosen by a policy.
//!
//! Policies follow Camel's: [`Policy::RoundRobin`], [`Policy::Random`],
//! [`Policy::Weighted`] (ratios, interleaved or at random), [`Policy::Sticky`] (the same
//! target for the same correlation value), [`Policy::Topic`] (every target gets a copy),
//! [`Policy::Failover`] (the next target when one fails, for the error kinds listed, up
//! to a number of attempts) and [`Policy::Custom`] (a [`Balancer`] written in Rust).
//! Single-target policies choose synchronously, so a synchronous target completes
//! without allocating.
//!
//! As a tower layer, [`LoadBalanceLayer`] runs the chosen target and hands its result to
//! the service it wraps (as the multicast layer does with the aggregated exchange).
//!
//! Why not `tower::balance`: it balances over interchangeable replicas of one service,
//! picking by load (power of two choices over `Load`) from a discovered set, and it holds
//! readiness of every endpoint. Camel's policies pick by position, weight, content or
//! failure, over targets that are different step lists; none of them reads load. See
//! `adr/0063-load-balancer-and-circuit-breaker-as-eips.md`.
//!
//! ```
//! use camel_api::{Body, BoxProcessor, Exchange};
//! use camel_eip::load_balance::{LoadBalance, Policy};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let target = |name: &'static str| BoxProcessor::sync(move |mut ex: Exchange| {
//!     ex.message.body = Body::from(name);
//!     Ok(ex)
//! });
//! let lb = LoadBalance::new(vec![target("a"), target("b")], Policy::RoundRobin)
//!     .unwrap()
//!     .into_processor();
//! let mut seen = Vec::new();
//! for _ in 0..3 {
//!     seen.push(lb.process(Exchange::new("x")).await.unwrap().message.body);
//! }
//! assert_eq!(seen, [Body::from("a"), Body::from("b"), Body::from("a")]);
//! # }
//! ```

mod policy;
mod service;

pub use policy::{BalanceError, Balancer, CustomBalancer, FailoverPolicy, Policy};
pub use service::{LoadBalance, LoadBalanceLayer, LoadBalanceService};

#[cfg(test)]
mod tests;
