//! The per-route controller.

use std::sync::Arc;

use camel_api::{ExchangeStats, ShutdownReason};
use tokio::time::Instant;

use super::route::{self, RouteRuntime, RouteStatus, StopOutcome};
use super::CamelContext;
use crate::compiler::compile_route;
use crate::error::{RouteError, RouteErrorKind};
use crate::model::RouteDefinition;

/// Start, stop, suspend, resume, remove and swap individual routes.
#[derive(Clone, Debug)]
pub struct RouteController {
    pub(super) ctx: CamelContext,
}

impl RouteController {
    async fn with_route<T>(
        &self,
        id: &str,
        f: impl AsyncFnOnce(&mut RouteRuntime, &Arc<ExchangeStats>) -> T,
    ) -> Result<T, RouteError> {
        let mut all = self.ctx.inner.routes.lock().await;
        let rt = all
            .iter_mut()
            .find(|r| r.id() == id)
            .ok_or_else(|| RouteError::new(RouteErrorKind::NoSuchRoute(id.to_string())))?;
        Ok(f(rt, &self.ctx.inner.stats).await)
    }

    /// The ids of all routes, in definition order.
    pub async fn route_ids(&self) -> Vec<String> {
        self.ctx
            .inner
            .routes
            .lock()
            .await
            .iter()
            .map(|r| r.id().to_string())
            .collect()
    }

    /// The status of a route.
    pub async fn status(&self, id: &str) -> Result<RouteStatus, RouteError> {
        self.with_route(id, async |rt, _| rt.status).await
    }

    /// Why a started route's consumer takes nothing in (its source is unreachable, or it
    /// ended with an error); `None` when it is healthy or the route is not running.
    pub async fn failure(&self, id: &str) -> Result<Option<Arc<str>>, RouteError> {
        self.with_route(id, async |rt, _| rt.failing()).await
    }

    /// The definition a route runs.
    pub async fn definition(&self, id: &str) -> Result<RouteDefinition, RouteError> {
        self.with_route(id, async |rt, _| rt.definition.clone())
            .await
    }

    /// Starts a stopped route (compiling it afresh).
    pub async fn start_route(&self, id: &str) -> Result<(), RouteError> {
        let registry = &self.ctx.inner.registry;
        self.with_route(id, async |rt, stats| rt.restart(registry, stats).await)
            .await?
    }

    /// Stops a route gracefully within the context's shutdown deadline.
    pub async fn stop_route(&self, id: &str) -> Result<StopOutcome, RouteError> {
        let deadline = Instant::now() + self.ctx.shutdown_timeout();
        self.with_route(id, async |rt, _| {
            rt.stop(deadline, ShutdownReason::RouteStop).await
        })
        .await
    }

    /// Pauses a route's intake; exchanges in flight go on.
    pub async fn suspend_route(&self, id: &str) -> Result<(), RouteError> {
        self.with_route(id, async |rt, _| rt.suspend()).await
    }

    /// Resumes a suspended route.
    pub async fn resume_route(&self, id: &str) -> Result<(), RouteError> {
        self.with_route(id, async |rt, _| rt.resume()).await
    }

    /// Stops and removes a route.
    pub async fn remove_route(&self, id: &str) -> Result<StopOutcome, RouteError> {
        // Stop and remove under one lock, so nothing can restart the route in between.
        let deadline = Instant::now() + self.ctx.shutdown_timeout();
        let mut all = self.ctx.inner.routes.lock().await;
        let at = all
            .iter()
            .position(|r| r.id() == id)
            .ok_or_else(|| RouteError::new(RouteErrorKind::NoSuchRoute(id.to_string())))?;
        let outcome = all[at].stop(deadline, ShutdownReason::RouteStop).await;
        all.remove(at);
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
        self.with_route(id, async |rt, stats| {
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
                rt.start(stats).await?;
                if was_suspended {
                    rt.suspend();
                }
                return Ok(outcome);
            }
            rt.swap(definition, next, timeout).await
        })
        .await?
    }
}
