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

mod controller;
mod registry;
mod reload;
mod route;

use std::any::Any;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use camel_api::{Component, ContextChange, ExchangeStats, ShutdownReason};
use tokio::sync::Mutex;
use tokio::time::Instant;

pub use controller::RouteController;
pub use registry::Registry;
pub use reload::ReloadReport;
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
    /// Exchanges left on in-memory queues (`seda`) once the routes stopped, by address:
    /// no route takes them, and a process that exits loses them.
    pub left_queued: Vec<(String, usize)>,
    /// Steps that failed to shut down cleanly.
    pub errors: Vec<String>,
    /// How long the stop took.
    pub elapsed: Duration,
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

    /// Registers a step compiler under `name` (snake_case), usable from YAML
    /// (`- name: {…}`) and from the builder ([`RouteBuilder::step`](crate::RouteBuilder::step))
    /// in routes added afterwards. See `examples/custom-step`.
    pub fn add_step(&self, name: impl Into<String>, compiler: impl crate::StepCompiler) {
        self.inner.registry.add_step(name, compiler);
    }

    /// Registers an expression language under `name`, usable as
    /// `expression: {name: "…"}` in routes added afterwards.
    pub fn add_language(&self, name: &'static str, language: impl camel_api::Language) {
        self.inner.registry.add_language(name, Arc::new(language));
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
            // The loader refuses a bad id at its line; this covers builder routes. The id
            // is not attached to the error, so the message cannot carry what it refuses.
            if let Err(why) = crate::model::check_route_id(&id) {
                errors
                    .push(RouteError::new(RouteErrorKind::InvalidValue(why)).at(route.location()));
                continue;
            }
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
        self.announce(ContextChange::Starting);
        let mut all = self.inner.routes.lock().await;
        let mut errors = Vec::new();
        for i in startup_order(&all) {
            if all[i].definition.auto_startup {
                if let Err(e) = all[i]
                    .restart(&self.inner.registry, &self.inner.stats)
                    .await
                {
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

    fn announce(&self, change: ContextChange) {
        for component in self.inner.registry.components() {
            component.context_changed(change);
        }
    }

    /// Stops every route, in reverse startup order, within the shutdown deadline: intake
    /// stops, exchanges in flight finish, lifecycle steps drain. Reports what was cut off.
    pub async fn stop(&self) -> ShutdownReport {
        self.stop_by(Instant::now() + self.shutdown_timeout()).await
    }

    /// Like [`stop`](Self::stop), with the deadline given: a caller whose stop has more
    /// phases than the routes' (the `camel` binary's) gives every phase the same one.
    pub async fn stop_by(&self, deadline: Instant) -> ShutdownReport {
        let started = Instant::now();
        self.inner.started.store(false, Ordering::SeqCst);
        // Before the routes stop, so a wait for a route to start ends now, not at the
        // deadline (no route starts during a stop).
        self.announce(ContextChange::Stopping);
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
        drop(all);
        for component in self.inner.registry.components() {
            report.left_queued.extend(component.left_at_stop());
        }
        report.left_queued.sort();
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
