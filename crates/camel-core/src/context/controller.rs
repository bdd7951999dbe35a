//! The per-route controller.

use std::sync::Arc;

use camel_api::ShutdownReason;
use tokio::time::Instant;

use super::route::{self, RouteStatus, StopOutcome};
use super::table::{RouteOperation, RouteView};
use super::CamelContext;
use crate::compiler::compile_route;
use crate::error::RouteError;
use crate::model::RouteDefinition;

/// Start, stop, suspend, resume, remove and swap individual routes.
///
/// Operations on one route run one after another (a second stop waits for the first);
/// operations on different routes never wait for each other, and the reads (`route_ids`,
/// `status`, `failure`, `definition`, `operation`) never wait for any operation.
#[derive(Clone, Debug)]
pub struct RouteController {
    pub(super) ctx: CamelContext,
}

impl RouteController {
    fn view(&self, id: &str) -> Result<Arc<RouteView>, RouteError> {
        Ok(self.ctx.inner.routes.find(id)?.view())
    }

    /// The ids of all routes, in definition order.
    pub async fn route_ids(&self) -> Vec<String> {
        self.ctx
            .inner
            .routes
            .snapshot()
            .iter()
            .map(|r| r.id().to_string())
            .collect()
    }

    /// The status of a route. While an operation runs on the route (a stop draining its
    /// exchanges) this is the status before it; [`operation`](Self::operation) says what
    /// is under way.
    pub async fn status(&self, id: &str) -> Result<RouteStatus, RouteError> {
        Ok(self.view(id)?.status)
    }

    /// The operation running on a route, if any.
    pub async fn operation(&self, id: &str) -> Result<Option<RouteOperation>, RouteError> {
        Ok(self.view(id)?.operation)
    }

    /// Why a started route's consumer takes nothing in (its source is unreachable, or it
    /// ended with an error); `None` when it is healthy or the route is not running.
    pub async fn failure(&self, id: &str) -> Result<Option<Arc<str>>, RouteError> {
        Ok(self.view(id)?.health.as_ref().and_then(|h| h.failing()))
    }

    /// How long a route has run since it last started; `None` while it is stopped.
    pub async fn uptime(&self, id: &str) -> Result<Option<std::time::Duration>, RouteError> {
        Ok(self.view(id)?.started_at.map(|t| t.elapsed()))
    }

    /// The definition a route runs.
    pub async fn definition(&self, id: &str) -> Result<RouteDefinition, RouteError> {
        Ok(RouteDefinition::clone(&self.view(id)?.definition))
    }

    /// Starts a stopped route (compiling it afresh).
    pub async fn start_route(&self, id: &str) -> Result<(), RouteError> {
        let entry = self.ctx.inner.routes.find(id)?;
        let mut rt = entry.lock(RouteOperation::Starting).await?;
        self.ctx.may_start(id)?;
        rt.restart(&self.ctx.inner.registry, &self.ctx.inner.stats)
            .await
    }

    /// Stops a route gracefully within the context's shutdown deadline.
    pub async fn stop_route(&self, id: &str) -> Result<StopOutcome, RouteError> {
        let deadline = Instant::now() + self.ctx.shutdown_timeout();
        let entry = self.ctx.inner.routes.find(id)?;
        let mut rt = entry.lock(RouteOperation::Stopping).await?;
        Ok(rt.stop(deadline, ShutdownReason::RouteStop).await)
    }

    /// Pauses a route's intake; exchanges in flight go on.
    pub async fn suspend_route(&self, id: &str) -> Result<(), RouteError> {
        let entry = self.ctx.inner.routes.find(id)?;
        entry.lock(RouteOperation::Suspending).await?.suspend();
        Ok(())
    }

    /// Resumes a suspended route.
    pub async fn resume_route(&self, id: &str) -> Result<(), RouteError> {
        let entry = self.ctx.inner.routes.find(id)?;
        entry.lock(RouteOperation::Resuming).await?.resume();
        Ok(())
    }

    /// Stops and removes a route.
    pub async fn remove_route(&self, id: &str) -> Result<StopOutcome, RouteError> {
        let deadline = Instant::now() + self.ctx.shutdown_timeout();
        let entry = self.ctx.inner.routes.find(id)?;
        // Stop and remove under the route's lock, so nothing can restart it in between.
        let mut rt = entry.lock(RouteOperation::Removing).await?;
        let outcome = rt.stop(deadline, ShutdownReason::RouteStop).await;
        rt.mark_removed();
        rt.retire_metrics();
        self.ctx.inner.routes.remove(&entry);
        Ok(outcome)
    }

    /// Replaces a route's definition at run time. The new definition is compiled first: a
    /// compile error leaves the old route running. Exchanges in flight finish on the old
    /// pipeline; nothing is lost or run twice. A changed source endpoint restarts the
    /// route's consumer.
    pub async fn swap(
        &self,
        id: &str,
        mut definition: RouteDefinition,
    ) -> Result<StopOutcome, RouteError> {
        definition.id = Some(id.to_string());
        let registry = &self.ctx.inner.registry;
        let timeout = self.ctx.shutdown_timeout();
        let entry = self.ctx.inner.routes.find(id)?;
        let mut rt = entry.lock(RouteOperation::Swapping).await?;
        // The beans the new definition's file declares are built again, as when its
        // routes were first added (a reloaded file gets new beans, as in Camel).
        if let Some(error) =
            crate::bean::register_declared(registry, std::slice::from_ref(&definition))
                .into_iter()
                .next()
        {
            return Err(error);
        }
        let next = compile_route(registry, &definition)?;
        if rt.definition.from != definition.from && rt.status != RouteStatus::Stopped {
            let deadline = Instant::now() + timeout;
            let was_suspended = rt.status == RouteStatus::Suspended;
            let outcome = rt
                .stop_with(deadline, route::swap_reason(&next.assembly.lifecycles))
                .await;
            route::hand_over(&rt.compiled.assembly.lifecycles, &next.assembly.lifecycles);
            rt.definition = definition;
            rt.compiled = next;
            rt.stale = false;
            self.ctx.may_start(id)?;
            rt.start(&self.ctx.inner.stats).await?;
            if was_suspended {
                rt.suspend();
            }
            return Ok(outcome);
        }
        rt.swap(definition, next, timeout).await
    }
}
