use std::any::Any;
use std::fmt;

use async_trait::async_trait;

use crate::CamelError;

/// Why a step with background work is being shut down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownReason {
    /// The route is stopping (or the whole context is).
    RouteStop,
    /// The route is being replaced by a new definition.
    HotSwap,
}

/// State a step hands from its old instance to its replacement during a hot swap.
pub type CarriedState = Box<dyn Any + Send>;

/// What a shutdown bounded by a deadline could not finish.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Drained {
    /// Exchanges the step had already accepted (its caller got an answer) and gave up on
    /// at the deadline: neither delivered nor handed to a replacement.
    pub lost: u64,
}

impl Drained {
    /// A drain that gave up on `lost` accepted exchanges.
    pub fn lost(lost: u64) -> Self {
        Drained { lost }
    }
}

/// A route step that owns background work (timers, queues, actor tasks).
///
/// The route compiler collects every such step of a route, so the route controller can
/// start them before the consumer and drain them, in route order, when the route stops or
/// is swapped.
#[async_trait]
pub trait StepLifecycle: Send + Sync + fmt::Debug + 'static {
    /// A name unique within the route (stable across swaps of the same route).
    fn name(&self) -> &str;

    /// Starts the background work. Called once, before the route takes exchanges.
    async fn start(&self) -> Result<(), CamelError>;

    /// Drains and stops the background work. Must be idempotent.
    async fn shutdown(&self, reason: ShutdownReason) -> Result<(), CamelError>;

    /// The route stopped taking exchanges and is about to wait for those in flight. A step
    /// that holds accepted exchanges until something more arrives (an S3 streaming
    /// upload's open object waiting for its count) lets them go now, so the wait ends
    /// with them rather than at the stop's deadline. Called before
    /// [`shutdown_by`](Self::shutdown_by); the default does nothing.
    fn intake_closed(&self) {}

    /// Like [`shutdown`](Self::shutdown), bounded by the stop's `deadline`: a step that
    /// holds exchanges it already accepted drains what it can by then and reports what it
    /// had to give up on, so the route counts it. The default calls `shutdown` and reports
    /// nothing lost.
    async fn shutdown_by(
        &self,
        reason: ShutdownReason,
        deadline: tokio::time::Instant,
    ) -> Result<Drained, CamelError> {
        let _ = deadline;
        self.shutdown(reason).await.map(|()| Drained::default())
    }

    /// After `shutdown(HotSwap)`: state for the replacement step of the same name.
    fn take_state(&self) -> Option<CarriedState> {
        None
    }

    /// Before `start`: state from the step this one replaces. The default ignores it.
    fn adopt_state(&self, _state: CarriedState) {}
}
