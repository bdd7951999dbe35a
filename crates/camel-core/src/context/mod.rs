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
mod health;
mod probe;
mod reload;
mod route;
mod table;

use std::any::Any;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use camel_api::{Component, ContextChange, ExchangeStats, ShutdownReason};
use tokio::time::Instant;

pub use crate::compiler::Registry;
pub use crate::observe::backlog::{
    BacklogTracer, TraceOutcome, TracedBody, TracedExchange, TracedStep, TracerConfig,
    DEFAULT_BODY_MAX_BYTES, DEFAULT_CAPACITY, DEFAULT_MAX_BYTES, DEFAULT_MAX_STEPS,
    RECORD_PROPERTY,
};
/// The metrics the context and its routes record (re-exported from where they live).
pub use crate::observe::metrics;
pub use controller::RouteController;
pub use health::{HealthCheck, HealthReport, HealthState};
pub use reload::ReloadReport;
pub use route::{RouteStatus, StopOutcome};
pub use table::RouteOperation;

use crate::error::{RouteError, RouteErrorKind, RouteErrors};
use crate::model::RouteDefinition;
use route::RouteRuntime;
use table::{startup_order, RouteEntry, RouteGuard, RouteTable};

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
    /// Routes whose lifecycle steps gave up on exchanges they had acknowledged (a
    /// resequencer cut off at the deadline), with how many; also counted as failed.
    pub lost: Vec<(String, u64)>,
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
    /// Never locked across an `.await`; each route has its own lock (see `table`).
    routes: RouteTable,
    stats: Arc<ExchangeStats>,
    shutdown_timeout: std::sync::Mutex<Duration>,
    next_id: AtomicU64,
    started: AtomicBool,
    /// Context stops under way. While one runs no route starts: a start that got its
    /// route's lock after the stop passed that route would leave it running.
    stopping: AtomicUsize,
    /// Pings the databases of `registry`'s pools while the context runs (readiness).
    datasources: probe::DatasourceProbe,
}

impl Default for CamelContext {
    fn default() -> Self {
        Self::new()
    }
}

impl CamelContext {
    /// A context with the built-in components (direct, seda, timer, scheduler, cron, quartz,
    /// log, file, mock) and languages (simple, jsonpath, header, constant).
    pub fn new() -> Self {
        let registry = Registry::default();
        for component in crate::builtin_components() {
            registry.add_component(component);
        }
        registry.add_component(Arc::new(crate::bean::BeanComponent));
        crate::bean::register_builtin_types(&registry);
        CamelContext {
            inner: Arc::new(Inner {
                registry,
                routes: RouteTable::default(),
                stats: ExchangeStats::new(),
                shutdown_timeout: std::sync::Mutex::new(DEFAULT_SHUTDOWN_TIMEOUT),
                next_id: AtomicU64::new(1),
                started: Default::default(),
                stopping: AtomicUsize::new(0),
                datasources: Default::default(),
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

    /// Registers a bean under `name`, callable from routes with `bean: {ref: name,
    /// method: m}`, `to: bean:name?method=m` and (its default method) `process: {ref:
    /// name}`, in routes added afterwards. A [`camel_api::BoxProcessor`] is a bean with one
    /// default method; [`camel_api::MethodBean`] has named ones.
    pub fn register_bean(&self, name: &str, bean: impl camel_api::Bean) {
        self.inner.registry.add_bean(name, Arc::new(bean));
    }

    /// Registers a policy under `name`: `policy: {ref: name, steps: [...]}` (Camel's Policy
    /// EIP) wraps its steps in `layer` in routes added afterwards, and so does
    /// [`RouteBuilder::policy`](crate::RouteBuilder::policy). Any tower layer over
    /// [`camel_api::BoxProcessor`] fits: a timeout, a concurrency limit, a
    /// [`from_fn`](camel_eip::middleware::from_fn) middleware that checks a header.
    ///
    /// ```
    /// use std::time::Duration;
    /// use camel_core::CamelContext;
    ///
    /// let ctx = CamelContext::new();
    /// ctx.add_policy("quick", tower::timeout::TimeoutLayer::new(Duration::from_secs(2)));
    /// assert_eq!(ctx.registry().policy_names(), ["quick"]);
    /// ```
    pub fn add_policy<L>(&self, name: &str, layer: L)
    where
        L: tower::Layer<camel_api::BoxProcessor> + Send + Sync + 'static,
        L::Service: tower::Service<camel_api::Exchange, Response = camel_api::Exchange>
            + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as tower::Service<camel_api::Exchange>>::Error: Into<tower::BoxError>,
        <L::Service as tower::Service<camel_api::Exchange>>::Future: Send + 'static,
    {
        self.inner
            .registry
            .add_policy(name, camel_eip::policy::Policy::new(layer));
    }

    /// Registers a bean type: a file's top-level `- beans: [{name, type: bean_type,
    /// properties}]` entry builds its bean with `factory`, given the `properties` decoded
    /// as `P` (a `serde_json::Map` reads them as written).
    pub fn register_bean_type<P, B, F>(&self, bean_type: &str, factory: F)
    where
        P: serde::de::DeserializeOwned,
        B: camel_api::Bean,
        F: Fn(P) -> Result<B, String> + Send + Sync + 'static,
    {
        self.inner
            .registry
            .add_bean_type(bean_type, crate::bean::bean_factory(factory));
    }

    /// The database pools of this context: one per database, shared by `sql:`, `outbox:`
    /// and the state stores, closed by [`stop`](Self::stop) (ADR 0085).
    pub fn pools(&self) -> &camel_api::pools::Pools {
        self.inner.registry.pools()
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
    ///
    /// Each compiled source is also asked for its consumer, which components build from
    /// the URI without connecting anywhere, so what a start would refuse for the URI alone
    /// (a Kafka consumer without a group id) is an error here too.
    pub async fn validate(&self, routes: &[RouteDefinition]) -> Result<(), RouteErrors> {
        let existing = self.inner.routes.ids();
        let mut routes = routes.to_vec();
        let (compiled, mut errors) = self.compile_each(&mut routes, existing);
        for (i, c) in compiled {
            if let Err(e) = c.source.consumer() {
                let route = &routes[i];
                let at = route
                    .source
                    .as_ref()
                    .and_then(|s| s.locate(&format!("{}/from/uri", s.route_pointer)));
                errors.push(
                    RouteError::new(RouteErrorKind::Endpoint(e))
                        .at(at)
                        .in_route(Some(&c.id))
                        .in_step(Some("from".into())),
                );
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(RouteErrors(errors))
        }
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
        let (compiled, errors) = self.compile_each(routes, existing);
        if errors.is_empty() {
            Ok(compiled.into_iter().map(|(_, c)| c).collect())
        } else {
            Err(RouteErrors(errors))
        }
    }

    /// Compiles every route it can: each compiled one with its index, and every error.
    fn compile_each(
        &self,
        routes: &mut [RouteDefinition],
        existing: Vec<(String, Option<crate::error::Location>)>,
    ) -> (
        Vec<(usize, crate::compiler::CompiledRoute)>,
        Vec<RouteError>,
    ) {
        let mut seen: std::collections::HashMap<String, Option<crate::error::Location>> =
            existing.into_iter().collect();
        let mut taken: HashSet<String> = seen.keys().cloned().collect();
        for r in routes.iter() {
            if let Some(id) = &r.id {
                taken.insert(id.clone());
            }
        }
        // The beans the routes' files declare exist before any route that calls them
        // compiles.
        let mut errors = crate::bean::register_declared(&self.inner.registry, routes);
        let mut compiled = Vec::new();
        for (i, route) in routes.iter_mut().enumerate() {
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
            match crate::compiler::compile_route_reporting_all(&self.inner.registry, route) {
                Ok(c) => compiled.push((i, c)),
                Err(e) => errors.extend(e),
            }
        }
        (compiled, errors)
    }

    /// Compiles and adds routes; when the context is started, starts those with
    /// `auto_startup`. Nothing is added when any route has an error.
    pub async fn add_routes(
        &self,
        mut routes: Vec<RouteDefinition>,
    ) -> Result<Vec<String>, RouteErrors> {
        // Compiled outside the table's lock; `append` checks the ids again under it.
        let compiled = self.compile_all(&mut routes, self.inner.routes.ids())?;
        let added: Vec<Arc<RouteEntry>> = routes
            .into_iter()
            .zip(compiled)
            .map(|(def, c)| RouteEntry::new(RouteRuntime::new(def, c, self.tracer().clone())))
            .collect();
        let ids = added.iter().map(|e| e.id().to_string()).collect();
        // Locked before anyone can see them, so no other operation comes between the add
        // and the start.
        let mut guards: Vec<RouteGuard<'_>> = added
            .iter()
            .filter_map(|e| e.lock_new(RouteOperation::Starting))
            .collect();
        self.inner.routes.append(&added).map_err(RouteErrors)?;
        metrics::routes_added(added.len());
        if self.inner.started.load(Ordering::SeqCst) {
            let mut errors = Vec::new();
            for i in startup_order(&added) {
                let Some(rt) = guards.get_mut(i) else {
                    continue;
                };
                if rt.definition.auto_startup && self.may_start(rt.id()).is_ok() {
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

    /// Refuses a route start while the context stops.
    fn may_start(&self, id: &str) -> Result<(), RouteError> {
        if self.inner.stopping.load(Ordering::SeqCst) > 0 {
            Err(RouteError::new(RouteErrorKind::ContextStopping(id.to_string())).in_route(Some(id)))
        } else {
            Ok(())
        }
    }

    /// Starts every route with `auto_startup`, in startup order.
    pub async fn start(&self) -> Result<(), RouteErrors> {
        self.inner.started.store(true, Ordering::SeqCst);
        self.announce(ContextChange::Starting);
        self.inner
            .datasources
            .start(self.inner.registry.pools().clone());
        let all = self.inner.routes.snapshot();
        let mut errors = Vec::new();
        for i in startup_order(&all) {
            // Checked before the lock too, so a route left stopped is not waited for.
            if !all[i].view().definition.auto_startup {
                continue;
            }
            let mut rt = match all[i].lock(RouteOperation::Starting).await {
                Ok(rt) => rt,
                Err(_) => continue, // removed meanwhile
            };
            if !rt.definition.auto_startup {
                continue;
            }
            let started = match self.may_start(rt.id()) {
                Ok(()) => rt.restart(&self.inner.registry, &self.inner.stats).await,
                Err(e) => Err(e),
            };
            if let Err(e) = started {
                errors.push(e);
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
        let _stopping = StopInProgress::begin(&self.inner.stopping);
        self.inner.datasources.stop();
        // Before the routes stop, so a wait for a route to start ends now, not at the
        // deadline (no route starts during a stop).
        self.announce(ContextChange::Stopping);
        let all = self.inner.routes.snapshot();
        let mut report = ShutdownReport::default();
        let mut order = startup_order(&all);
        order.reverse();
        for i in order {
            // Another operation on this route (an admin stop draining) finishes first,
            // but only until the deadline.
            let mut rt = match tokio::time::timeout_at(
                deadline,
                all[i].lock(RouteOperation::Stopping),
            )
            .await
            {
                Ok(Ok(rt)) => rt,
                Ok(Err(_)) => continue, // removed meanwhile
                Err(_) => {
                    // Its exchanges in flight are in doubt, as any cut off at the deadline.
                    let id = all[i].id().to_string();
                    let inflight = all[i].view().gate.inflight();
                    if inflight > 0 {
                        report.cut_off.push((id.clone(), inflight));
                    }
                    report.errors.push(format!(
                        "route `{id}`: another operation on it was still running at the deadline"
                    ));
                    continue;
                }
            };
            if rt.status == RouteStatus::Stopped {
                continue;
            }
            let outcome = rt.stop(deadline, ShutdownReason::RouteStop).await;
            report.routes_stopped += 1;
            if outcome.cut_off > 0 {
                report.cut_off.push((rt.id().to_string(), outcome.cut_off));
            }
            report.errors.extend(outcome.errors);
            if outcome.lost > 0 {
                report.lost.push((rt.id().to_string(), outcome.lost));
            }
        }
        for component in self.inner.registry.components() {
            report.left_queued.extend(component.left_at_stop());
        }
        report.left_queued.sort();
        // After the routes, which used them to the end; a route that stops on its own
        // keeps them (ADR 0085). Every pool refuses new connections at once; the wait is
        // for connections still in use, bounded by the deadline.
        let pools = self.inner.registry.pools();
        let open = pools.keys();
        if tokio::time::timeout_at(deadline, pools.close())
            .await
            .is_err()
        {
            report.errors.push(format!(
                "database pools {}: connections still in use at the deadline (closed as they come back)",
                open.join(", ")
            ));
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

    /// The backlog tracer: the last exchanges of each traced route, step by step
    /// (ADR 0132). Turn it on with [`set_tracing`](Self::set_tracing), or with
    /// [`BacklogTracer::enable`] before the routes are added.
    pub fn tracer(&self) -> &BacklogTracer {
        self.inner.registry.tracer()
    }

    /// Turns the backlog tracer on or off for `route` (every route, also those added
    /// later, with `None`). A route compiled before tracing was first asked for has no
    /// hooks: turning it on recompiles it and swaps it in, as [`RouteController::swap`]
    /// does with its own definition (exchanges in flight finish on the old pipeline).
    /// Turning it off clears a flag; the hooks stay, one flag read per step. Returns
    /// the routes recompiled.
    pub async fn set_tracing(
        &self,
        route: Option<&str>,
        on: bool,
    ) -> Result<Vec<String>, RouteError> {
        let tracer = self.tracer();
        if !on {
            if let Some(id) = route {
                self.inner.routes.find(id)?;
            }
            tracer.disable(route);
            return Ok(Vec::new());
        }
        let armed = match route {
            Some(id) => {
                self.inner.routes.find(id)?;
                tracer.enable(Some(id))
            }
            None => {
                tracer.enable(None);
                tracer.arm_all(
                    &self
                        .inner
                        .routes
                        .ids()
                        .into_iter()
                        .map(|(id, _)| id)
                        .collect::<Vec<_>>(),
                )
            }
        };
        let mut recompiled = Vec::new();
        for id in armed {
            match self.recompile(&id).await {
                Ok(()) => recompiled.push(id),
                // Removed meanwhile: nothing to trace.
                Err(e) if matches!(e.kind, RouteErrorKind::NoSuchRoute(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(recompiled)
    }

    /// Compiles a route again from its definition and swaps it in (to add hooks).
    async fn recompile(&self, id: &str) -> Result<(), RouteError> {
        let entry = self.inner.routes.find(id)?;
        let mut rt = entry.lock(RouteOperation::Swapping).await?;
        let definition = rt.definition.clone();
        let next = crate::compiler::compile_route(&self.inner.registry, &definition)?;
        rt.swap(definition, next, self.shutdown_timeout()).await?;
        Ok(())
    }

    /// The controller for individual routes.
    pub fn route_controller(&self) -> RouteController {
        RouteController { ctx: self.clone() }
    }
}

/// Counts a context stop as under way until dropped (also when the stop's future is).
struct StopInProgress<'a>(&'a AtomicUsize);

impl<'a> StopInProgress<'a> {
    fn begin(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        StopInProgress(count)
    }
}

impl Drop for StopInProgress<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
