//! The [`CamelContext`]: components, routes and their controller.
//!
//! ```
//! use camel_core::{CamelContext, RouteBuilder};
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let ctx = CamelContext::new();
//! ctx.add_routes(vec![RouteBuilder::from("direct:in").to("log:out").build()]).await.unwrap();
//! ctx.start().await.unwrap();
//! let report = ctx.stop().await;
//! assert!(report.cut_off.is_empty());
//! # }
//! ```

mod registry;
mod route;

use std::any::Any;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use camel_api::{Component, ExchangeStats, ShutdownReason};
use tokio::sync::Mutex;
use tokio::time::Instant;

pub use registry::Registry;
pub use route::{RouteStatus, StopOutcome};

use crate::compiler::compile_route;
use crate::error::{RouteError, RouteErrorKind, RouteErrors};
use crate::model::RouteDefinition;
use route::RouteRuntime;

/// The default time a graceful shutdown gives exchanges in flight.
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// What a context stop did.
#[derive(Debug, Default, Clone)]
pub struct ShutdownReport {
    /// Routes stopped.
    pub routes_stopped: usize,
    /// Routes that still had exchanges in flight at the deadline, with how many.
    pub cut_off: Vec<(String, usize)>,
    /// Steps that failed to shut down cleanly.
    pub errors: Vec<String>,
    /// How long the stop took.
    pub elapsed: Duration,
}

/// What a [`CamelContext::reload`] changed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReloadReport {
    /// Routes that were new and started.
    pub added: Vec<String>,
    /// Routes whose definition changed and were swapped.
    pub swapped: Vec<String>,
    /// Routes no longer defined, stopped and removed.
    pub removed: Vec<String>,
    /// Routes left as they were.
    pub unchanged: Vec<String>,
}

/// Holds components, languages and routes; starts and stops them.
///
/// Cheap to clone (a handle).
#[derive(Clone, Debug)]
pub struct CamelContext {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    registry: Registry,
    routes: Mutex<Vec<RouteRuntime>>,
    stats: Arc<ExchangeStats>,
    shutdown_timeout: std::sync::Mutex<Duration>,
    next_id: AtomicU64,
    started: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for RouteRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Route")
            .field("id", &self.id())
            .field("status", &self.status)
            .finish()
    }
}

impl Default for CamelContext {
    fn default() -> Self {
        Self::new()
    }
}

impl CamelContext {
    /// A context with the built-in components (direct, seda, timer, log, file, mock) and
    /// languages (simple, jsonpath, header, constant).
    pub fn new() -> Self {
        let registry = Registry::default();
        for component in crate::builtin_components() {
            registry.add_component(component);
        }
        CamelContext {
            inner: Arc::new(Inner {
                registry,
                routes: Mutex::new(Vec::new()),
                stats: ExchangeStats::new(),
                shutdown_timeout: std::sync::Mutex::new(DEFAULT_SHUTDOWN_TIMEOUT),
                next_id: AtomicU64::new(1),
                started: Default::default(),
            }),
        }
    }

    /// Registers a component (replacing one with the same scheme).
    pub fn add_component(&self, component: Arc<dyn Component>) {
        self.inner.registry.add_component(component);
    }

    /// Registers a shared resource under `name`; a [`camel_api::BoxProcessor`] resource can
    /// be called from routes with `process: {ref: name}`.
    pub fn add_resource(&self, name: &str, resource: Arc<dyn Any + Send + Sync>) {
        self.inner.registry.add_resource(name, resource);
    }

    /// The registries routes are compiled against.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// Counters of completed exchanges across all routes.
    pub fn stats(&self) -> &Arc<ExchangeStats> {
        &self.inner.stats
    }

    /// Sets the graceful-shutdown deadline (default 30 s).
    pub fn set_shutdown_timeout(&self, timeout: Duration) {
        *self
            .inner
            .shutdown_timeout
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = timeout;
    }

    fn shutdown_timeout(&self) -> Duration {
        *self
            .inner
            .shutdown_timeout
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Compiles `routes` without adding them: every error of every route is returned.
    pub async fn validate(&self, routes: &[RouteDefinition]) -> Result<(), RouteErrors> {
        let existing: Vec<(String, Option<crate::error::Location>)> = self
            .inner
            .routes
            .lock()
            .await
            .iter()
            .map(|r| (r.id().to_string(), r.definition.location()))
            .collect();
        let mut routes = routes.to_vec();
        self.compile_all(&mut routes, existing).map(|_| ())
    }

    fn assign_id(&self, route: &mut RouteDefinition, taken: &HashSet<String>) {
        if route.id.is_none() {
            loop {
                let id = format!(
                    "route{}",
                    self.inner.next_id.fetch_add(1, Ordering::Relaxed)
                );
                if !taken.contains(&id) {
                    route.id = Some(id);
                    break;
                }
            }
        }
    }

    fn compile_all(
        &self,
        routes: &mut [RouteDefinition],
        existing: Vec<(String, Option<crate::error::Location>)>,
    ) -> Result<Vec<crate::compiler::CompiledRoute>, RouteErrors> {
        let mut seen: std::collections::HashMap<String, Option<crate::error::Location>> =
            existing.into_iter().collect();
        let mut taken: HashSet<String> = seen.keys().cloned().collect();
        for r in routes.iter() {
            if let Some(id) = &r.id {
                taken.insert(id.clone());
            }
        }
        let mut errors = Vec::new();
        let mut compiled = Vec::new();
        for route in routes.iter_mut() {
            self.assign_id(route, &taken);
            let id = route.id.clone().unwrap_or_default();
            if let Some(first) = seen.get(&id) {
                errors.push(
                    RouteError::new(RouteErrorKind::DuplicateRouteId {
                        id: id.clone(),
                        first: first.clone(),
                    })
                    .at(route.location())
                    .in_route(Some(&id)),
                );
                continue;
            }
            seen.insert(id.clone(), route.location());
            match compile_route(&self.inner.registry, route) {
                Ok(c) => compiled.push(c),
                Err(e) => errors.push(e),
            }
        }
        if errors.is_empty() {
            Ok(compiled)
        } else {
            Err(RouteErrors(errors))
        }
    }

    /// Compiles and adds routes; when the context is started, starts those with
    /// `auto_startup`. Nothing is added when any route has an error.
    pub async fn add_routes(
        &self,
        mut routes: Vec<RouteDefinition>,
    ) -> Result<Vec<String>, RouteErrors> {
        let mut all = self.inner.routes.lock().await;
        let existing = all
            .iter()
            .map(|r| (r.id().to_string(), r.definition.location()))
            .collect();
        let compiled = self.compile_all(&mut routes, existing)?;
        let first_new = all.len();
        for (def, c) in routes.into_iter().zip(compiled) {
            all.push(RouteRuntime::new(def, c));
        }
        let ids = all[first_new..]
            .iter()
            .map(|r| r.id().to_string())
            .collect();
        if self.inner.started.load(Ordering::SeqCst) {
            let mut errors = Vec::new();
            for i in startup_order(&all[first_new..]) {
                let rt = &mut all[first_new + i];
                if rt.definition.auto_startup {
                    if let Err(e) = rt.start(&self.inner.stats).await {
                        errors.push(e);
                    }
                }
            }
            if !errors.is_empty() {
                return Err(RouteErrors(errors));
            }
        }
        Ok(ids)
    }

    /// Starts every route with `auto_startup`, in startup order.
    pub async fn start(&self) -> Result<(), RouteErrors> {
        self.inner.started.store(true, Ordering::SeqCst);
        let mut all = self.inner.routes.lock().await;
        let mut errors = Vec::new();
        for i in startup_order(&all) {
            if all[i].definition.auto_startup {
                if let Err(e) = all[i].start(&self.inner.stats).await {
                    errors.push(e);
                }
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(RouteErrors(errors))
        }
    }

    /// Stops every route, in reverse startup order, within the shutdown deadline: intake
    /// stops, exchanges in flight finish, lifecycle steps drain. Reports what was cut off.
    pub async fn stop(&self) -> ShutdownReport {
        let started = Instant::now();
        let deadline = started + self.shutdown_timeout();
        self.inner.started.store(false, Ordering::SeqCst);
        let mut all = self.inner.routes.lock().await;
        let mut report = ShutdownReport::default();
        let mut order = startup_order(&all);
        order.reverse();
        for i in order {
            if all[i].status == RouteStatus::Stopped {
                continue;
            }
            let outcome = all[i].stop(deadline, ShutdownReason::RouteStop).await;
            report.routes_stopped += 1;
            if outcome.cut_off > 0 {
                report
                    .cut_off
                    .push((all[i].id().to_string(), outcome.cut_off));
            }
            report.errors.extend(outcome.errors);
        }
        report.elapsed = started.elapsed();
        report
    }

    /// A producer for `uri`, to send exchanges into routes from Rust (Camel's
    /// `ProducerTemplate`).
    pub fn producer(&self, uri: &str) -> Result<camel_api::BoxProcessor, RouteError> {
        let def = crate::model::EndpointDefinition::new(uri);
        let endpoint = self
            .inner
            .registry
            .endpoint(&def, None)
            .map_err(RouteError::new)?;
        endpoint
            .producer()
            .map_err(|e| RouteError::new(RouteErrorKind::Endpoint(e)))
    }

    /// Sends `exchange` to `uri` and returns the resulting exchange.
    pub async fn request(
        &self,
        uri: &str,
        exchange: camel_api::Exchange,
    ) -> Result<camel_api::Exchange, camel_api::CamelError> {
        let producer = self
            .producer(uri)
            .map_err(|e| camel_api::CamelError::invalid_uri(uri.to_string(), e))?;
        producer.process(exchange).await
    }

    /// Replaces the running route set with `routes`, diffed by route id: new ids are added
    /// and started, ids no longer present are stopped and removed, and routes whose
    /// definition changed are swapped (see [`RouteController::swap`]); unchanged routes are
    /// not touched. Every new definition is compiled first: on any error nothing changes
    /// and every old route keeps running. Routes without an explicit id get a new one, so
    /// they are replaced.
    pub async fn reload(
        &self,
        mut routes: Vec<RouteDefinition>,
    ) -> Result<ReloadReport, RouteErrors> {
        // Validate the new set on its own (its ids replace the old ones).
        self.compile_all(&mut routes.clone(), Vec::new())?;
        let controller = self.route_controller();
        let old: Vec<(String, RouteDefinition)> = {
            let all = self.inner.routes.lock().await;
            all.iter()
                .map(|r| (r.id().to_string(), r.definition.clone()))
                .collect()
        };
        let taken: HashSet<String> = old.iter().map(|(id, _)| id.clone()).collect();
        for r in routes.iter_mut() {
            self.assign_id(r, &taken);
        }
        let new_ids: HashSet<String> = routes.iter().filter_map(|r| r.id.clone()).collect();
        let mut report = ReloadReport::default();
        let mut errors = Vec::new();
        for (id, _) in old.iter().filter(|(id, _)| !new_ids.contains(id)) {
            match controller.remove_route(id).await {
                Ok(_) => report.removed.push(id.clone()),
                Err(e) => errors.push(e),
            }
        }
        let mut added = Vec::new();
        for route in routes {
            let id = route.id.clone().unwrap_or_default();
            match old.iter().find(|(old_id, _)| *old_id == id) {
                Some((_, before)) if *before == route => report.unchanged.push(id),
                Some(_) => match controller.swap(&id, route).await {
                    Ok(_) => report.swapped.push(id),
                    Err(e) => errors.push(e),
                },
                None => added.push(route),
            }
        }
        if !added.is_empty() {
            match self.add_routes(added).await {
                Ok(ids) => report.added.extend(ids),
                Err(e) => errors.extend(e.0),
            }
        }
        if errors.is_empty() {
            Ok(report)
        } else {
            Err(RouteErrors(errors))
        }
    }

    /// The controller for individual routes.
    pub fn route_controller(&self) -> RouteController {
        RouteController { ctx: self.clone() }
    }
}

/// Indices of `routes` in startup order: by `startup_order`, then definition order.
fn startup_order(routes: &[RouteRuntime]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..routes.len()).collect();
    idx.sort_by_key(|&i| (routes[i].definition.startup_order.unwrap_or(i32::MAX), i));
    idx
}

/// Start, stop, suspend, resume, remove and swap individual routes.
#[derive(Clone, Debug)]
pub struct RouteController {
    ctx: CamelContext,
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

    /// The definition a route runs.
    pub async fn definition(&self, id: &str) -> Result<RouteDefinition, RouteError> {
        self.with_route(id, async |rt, _| rt.definition.clone())
            .await
    }

    /// Starts a stopped route (compiling it afresh).
    pub async fn start_route(&self, id: &str) -> Result<(), RouteError> {
        let registry = &self.ctx.inner.registry;
        self.with_route(id, async |rt, stats| {
            if rt.status == RouteStatus::Stopped {
                rt.compiled = compile_route(registry, &rt.definition)?;
            }
            rt.start(stats).await
        })
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
        let outcome = self.stop_route(id).await?;
        self.ctx.inner.routes.lock().await.retain(|r| r.id() != id);
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
                let outcome = rt
                    .stop_with(deadline, route::swap_reason(&next.assembly.lifecycles))
                    .await;
                let carried: Vec<_> = rt
                    .compiled
                    .assembly
                    .lifecycles
                    .iter()
                    .filter_map(|l| l.take_state().map(|s| (l.name().to_string(), s)))
                    .collect();
                for (name, state) in carried {
                    if let Some(l) = next.assembly.lifecycles.iter().find(|l| l.name() == name) {
                        l.adopt_state(state);
                    }
                }
                rt.definition = definition;
                rt.compiled = next;
                rt.start(stats).await?;
                return Ok(outcome);
            }
            rt.swap(definition, next, timeout).await
        })
        .await?
    }
}
