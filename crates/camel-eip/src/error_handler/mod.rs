//! The route's error handler (ADR 0052): redelivery, dead letter channel and
//! `on_exception`, as a tower layer around each top-level step of a route, and around
//! the steps inside a top-level `filter`/`choice` (ADR 0091, [`ChannelRole`]).
//!
//! On success a wrapped step costs one exchange clone (kept to redeliver the step); on
//! failure the handler picks the closest `on_exception` clause (see
//! [`camel_api::error_kind`]), redelivers the failing step after the policy's delays
//! (a tokio timer; a stopping route cuts the wait short and fails the exchange), then:
//!
//! - a clause with `handled` runs its steps and ends the route successfully; with
//!   `continued` the route goes on after the failed step; otherwise the exchange fails;
//! - a dead letter channel sends the exchange to its endpoint and ends the route
//!   successfully (the failure is handled);
//! - the default error handler logs and fails the exchange.
//!
//! ```
//! use std::sync::Arc;
//! use camel_api::{error_kind, BoxProcessor, CamelError, Exchange};
//! use camel_eip::error_handler::{ErrorHandler, HandlerKind, RedeliveryPolicy};
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
//! let policy = RedeliveryPolicy { maximum_redeliveries: 2, ..Default::default() };
//! let handler = Arc::new(ErrorHandler::new("r1", HandlerKind::Default, policy));
//! let step = BoxProcessor::sync(|ex: Exchange| match ex.header(error_kind::REDELIVERY_COUNTER) {
//!     Some(n) if n.to_string() == "2" => Ok(ex),
//!     _ => Err(CamelError::processor("not yet")),
//! });
//! let out = handler.wrap(step, "steps[0].process").process(Exchange::default()).await;
//! assert!(out.is_ok());
//! # }
//! ```

mod policy;
mod service;

use std::sync::Arc;

use camel_api::{BoxPredicate, BoxProcessor, CamelError, Exchange};
use tokio_util::sync::CancellationToken;

pub use policy::{parse_delay_pattern, LogLevel, RedeliveryPolicy};
pub use service::{ChannelRole, ErrorChannel, ErrorHandlerLayer, StopRedeliveries};

/// The name of the handler's [`StopRedeliveries`] lifecycle: a route's stop shuts it down
/// first, so pending redeliveries end as the stop begins.
pub const LIFECYCLE_NAME: &str = "error_handler";

/// What happens once redeliveries are exhausted and no clause took the failure.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum HandlerKind {
    /// Log and fail the exchange.
    Default,
    /// Send the exchange to a dead letter endpoint; the failure counts as handled.
    DeadLetter(DeadLetter),
}

/// A dead letter channel's target and options.
#[derive(Debug, Clone)]
pub struct DeadLetter {
    /// The producer of the dead letter endpoint.
    pub endpoint: BoxProcessor,
    /// Its URI, for logs.
    pub uri: Arc<str>,
    /// Send the message as it entered the route.
    pub use_original_message: bool,
    /// Send the original body with the current headers.
    pub use_original_body: bool,
    /// A failing dead letter endpoint still counts the exchange handled.
    pub handle_new_exception: bool,
}

/// What a redeliver-only channel hands its block's channel (see `exhausted_inside`).
type Exhausted = (u32, Arc<str>, Exchange);

/// A fixed or computed yes/no of a clause (`handled`, `continued`).
#[derive(Debug, Clone)]
pub enum Decision {
    /// Always this answer.
    Fixed(bool),
    /// The predicate's answer on the failed exchange.
    When(BoxPredicate),
}

impl Decision {
    fn holds(&self, ex: &Exchange) -> Result<bool, CamelError> {
        match self {
            Decision::Fixed(b) => Ok(*b),
            Decision::When(p) => p.matches(ex),
        }
    }
}

/// One `on_exception` clause.
#[derive(Debug, Clone, Default)]
pub struct Clause {
    /// The kinds or Java class names it catches.
    pub exceptions: Vec<String>,
    /// Only when this holds on the failed exchange.
    pub on_when: Option<BoxPredicate>,
    /// Whether the failure is handled.
    pub handled: Option<Decision>,
    /// Whether the route goes on after the failed step.
    pub continued: Option<Decision>,
    /// Redeliver only while this holds.
    pub retry_while: Option<BoxPredicate>,
    /// Replaces the handler's policy for these kinds.
    pub policy: Option<RedeliveryPolicy>,
    /// Run `steps` on the message as it entered the route.
    pub use_original_message: bool,
    /// Run `steps` on the original body.
    pub use_original_body: bool,
    /// The steps run once redeliveries are exhausted.
    pub steps: Option<BoxProcessor>,
    /// True for a clause given for the whole context: a route's own clauses are tried
    /// first.
    pub from_context: bool,
}

/// A route's error handler: shared by the channels around its steps.
#[derive(Debug)]
pub struct ErrorHandler {
    route_id: Arc<str>,
    kind: HandlerKind,
    policy: RedeliveryPolicy,
    clauses: Vec<Clause>,
    stop: CancellationToken,
    /// Failures a redeliver-only channel inside a block gave up on, by exchange id: how
    /// many redeliveries it made, the step, and the exchange as that step received it,
    /// for the block's channel to handle.
    /// Written and taken on the failure path only; the block's channel always takes the
    /// entry (the block runs the same exchange, in the same call), so it cannot grow.
    exhausted_inside: std::sync::Mutex<std::collections::HashMap<camel_api::ExchangeId, Exhausted>>,
    /// Exchanges (by id, as `CamelCorrelationId` writes it) a `split` part (a `multicast`
    /// branch) of which failed after the part's channel handled it: the channel of the
    /// block that made the parts takes the mark and lets the failure through (ADR 0092).
    /// Written and taken on the failure path only; a part's failure always fails the
    /// block (a split or multicast fails with its first failed part), in the same call,
    /// so the block's channel always takes the mark.
    failed_parts: std::sync::Mutex<std::collections::HashSet<String>>,
}

impl ErrorHandler {
    /// A handler of `kind` for route `route_id` with `policy`.
    pub fn new(route_id: impl Into<Arc<str>>, kind: HandlerKind, policy: RedeliveryPolicy) -> Self {
        ErrorHandler {
            route_id: route_id.into(),
            kind,
            policy,
            clauses: Vec::new(),
            stop: CancellationToken::new(),
            exhausted_inside: Default::default(),
            failed_parts: Default::default(),
        }
    }

    /// Marks the exchange `part` was made from: one of its parts failed, and was handled.
    fn mark_failed_part(&self, part: &Exchange) {
        let Some(parent) = part
            .property(camel_api::names::CORRELATION_ID)
            .and_then(|v| v.as_str())
        else {
            return;
        };
        if let Ok(mut failed) = self.failed_parts.lock() {
            failed.insert(parent.to_string());
        }
    }

    /// Takes the mark of [`Self::mark_failed_part`] for `ex`: true when one of its parts
    /// failed and was handled.
    fn take_failed_part(&self, ex: &Exchange) -> bool {
        let Ok(mut failed) = self.failed_parts.lock() else {
            return false;
        };
        // No string is made for the common case: no split failed.
        !failed.is_empty() && failed.remove(&ex.id.to_string())
    }

    /// Adds an `on_exception` clause.
    pub fn with_clause(mut self, clause: Clause) -> Self {
        self.clauses.push(clause);
        self
    }

    /// True when the handler can do something a plain failure would not: redeliver,
    /// dead-letter, or run a clause. A handler that cannot is left out of the pipeline.
    pub fn is_active(&self) -> bool {
        self.policy.maximum_redeliveries != 0
            || matches!(self.kind, HandlerKind::DeadLetter(_))
            || !self.clauses.is_empty()
    }

    /// True when some part needs the message as it entered the route.
    pub fn keeps_original(&self) -> bool {
        let dead = match &self.kind {
            HandlerKind::DeadLetter(d) => d.use_original_message || d.use_original_body,
            HandlerKind::Default => false,
        };
        dead || self
            .clauses
            .iter()
            .any(|c| c.use_original_message || c.use_original_body)
    }

    /// The lifecycle that cuts pending redeliveries short when the route stops.
    pub fn lifecycle(&self) -> Arc<StopRedeliveries> {
        Arc::new(StopRedeliveries::new(self.stop.clone()))
    }

    /// Wraps one step; `step` names it in the `CamelFailureEndpoint` property.
    pub fn wrap(self: &Arc<Self>, inner: BoxProcessor, step: &str) -> BoxProcessor {
        self.wrap_as(inner, step, ChannelRole::Whole)
    }

    /// Wraps one step in a channel playing `role` (see [`ChannelRole`]).
    pub fn wrap_as(
        self: &Arc<Self>,
        inner: BoxProcessor,
        step: &str,
        role: ChannelRole,
    ) -> BoxProcessor {
        BoxProcessor::new(ErrorChannel::with_role(self.clone(), inner, step, role))
            .named("error_handler")
    }

    /// The clause for `e` on `ex`: the closest among the route's own clauses whose
    /// `on_when` holds, else the closest among the context's.
    fn clause_for(&self, e: &CamelError, ex: &Exchange) -> Option<&Clause> {
        for from_context in [false, true] {
            let eligible: Vec<&Clause> = self
                .clauses
                .iter()
                .filter(|c| c.from_context == from_context)
                .filter(|c| {
                    c.on_when
                        .as_ref()
                        .is_none_or(|p| p.matches(ex).unwrap_or(false))
                })
                .collect();
            let lists = eligible
                .iter()
                .map(|c| c.exceptions.iter().map(String::as_str));
            if let Some(i) = camel_api::error_kind::closest(e, lists) {
                return Some(eligible[i]);
            }
        }
        None
    }
}

/// A layer keeping the message as it entered the route, for `use_original_message`.
pub fn keep_original(inner: BoxProcessor) -> BoxProcessor {
    BoxProcessor::new(KeepOriginal { inner }).named("keep_original")
}

#[derive(Debug, Clone)]
struct KeepOriginal {
    inner: BoxProcessor,
}

impl camel_api::Process for KeepOriginal {
    fn process(&self, mut ex: Exchange) -> camel_api::ProcessorFuture {
        if ex.original_message().is_none() {
            ex.set_original_message(Some(Arc::new(ex.message.clone())));
        }
        self.inner.process(ex)
    }
}

#[cfg(test)]
mod tests;
