//! The backlog tracer: the last exchanges of each traced route, kept with what every step
//! did to them (Camel's `BacklogTracer`, ADR 0132).
//!
//! Off by default, and then absent: a route's pipeline and its steps are wrapped only
//! when the route is *armed* (tracing was asked for it, or for every route) at the time
//! it is compiled. An armed route's steps each check one flag per exchange; turning the
//! tracer off for the route clears the flag and leaves the wrappers in place. Turning it
//! on for a route compiled without them recompiles the route (a hot swap, see
//! [`CamelContext::set_tracing`](crate::CamelContext::set_tracing)).
//!
//! While a route is traced, its hook opens a record for each exchange that comes in (its
//! message as it arrived is the `from` entry), the exchange carries the record's number
//! in the property [`RECORD_PROPERTY`] (so steps of a `split` part or a `direct:` call
//! find it), each step adds the message as it left the step, and the record is kept
//! when the route is done with the exchange. Bounds: [`TracerConfig`].
//!
//! Headers pass [`camel_api::shown_value`] (a credential's name shows `***`, a URL loses
//! its password) and the HTTP credential headers (`Authorization`, `Cookie`, …) show
//! `***` too; in a body, the values of JSON keys and `key=value` pairs that name a
//! credential show `***`.

mod capture;
mod hook;

use capture::{micros, step_size, with_message};
pub(crate) use hook::{wrap_route, wrap_step};

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Instant, SystemTime};

use camel_api::{
    Body, BoxProcessor, CamelError, Exchange, Message, Process, ProcessorFuture, Value,
};
use serde::Serialize;

/// Exchanges kept per route, by default (Camel's `backlogSize`).
pub const DEFAULT_CAPACITY: usize = 100;
/// Bytes of a body (and of a header value) kept, by default (Camel's `bodyMaxChars`).
pub const DEFAULT_BODY_MAX_BYTES: usize = 32 * 1024;
/// Steps kept per exchange, by default; later ones are counted, not kept.
pub const DEFAULT_MAX_STEPS: usize = 100;
/// Bytes the tracer holds at most, over every route, by default.
pub const DEFAULT_MAX_BYTES: usize = 64 * 1024 * 1024;

/// The exchange property that carries the number of the trace record an exchange adds
/// its steps to, while a traced route has it.
pub const RECORD_PROPERTY: &str = "CamelTraceRecord";

/// What an entry costs besides its text: ids, times, the entry itself.
const ENTRY_OVERHEAD: usize = 128;

/// How much the tracer keeps. Changed with [`BacklogTracer::configure`]; applies to
/// records made afterwards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracerConfig {
    /// Finished exchanges kept per route; the oldest goes first. Also the most exchanges
    /// of one route traced at once (more in flight are not traced).
    pub capacity: usize,
    /// Bytes of a body or header value kept; the rest is cut (a character is never
    /// split). Camel's `bodyMaxChars` counts characters; bytes make the bound exact.
    pub body_max_bytes: usize,
    /// Steps kept per exchange (a `split` of many parts adds a step per part and step).
    pub max_steps: usize,
    /// Bytes the tracer holds at most, in every route's records together. When a step
    /// would pass it, the route's oldest records go; when none is left to drop, the step
    /// is kept without its body and headers.
    pub max_bytes: usize,
}

impl Default for TracerConfig {
    fn default() -> Self {
        TracerConfig {
            capacity: DEFAULT_CAPACITY,
            body_max_bytes: DEFAULT_BODY_MAX_BYTES,
            max_steps: DEFAULT_MAX_STEPS,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// How an exchange, or a step of it, ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceOutcome {
    /// Still running (a record read while its exchange is in the route has none).
    Running,
    /// Went on without an error.
    Completed,
    /// A `stop` step ended the route for it.
    Stopped,
    /// Ended with an error.
    Failed,
    /// Dropped before the route was done with it (cut off at a stop deadline).
    Abandoned,
}

/// A message's body as the tracer keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TracedBody {
    /// `Empty`, `Text`, `Bytes` or `Json`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Its size in bytes (JSON measured serialised).
    pub size: usize,
    /// The text, cut at the body limit; `None` for an empty or binary body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// True when `text` is cut.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// One step of a traced exchange: the message as the step left it.
#[derive(Clone, Debug, Serialize)]
pub struct TracedStep {
    /// The step's `id:` if it has one, else its place in the route
    /// (`steps[1].choice.when[0].steps[0].log`); `from` for the message as it came in.
    #[serde(serialize_with = "as_str")]
    pub id: Arc<str>,
    /// The step's name (`to`, `log`, `set_body`, …), `from` for the source.
    #[serde(serialize_with = "as_str")]
    pub kind: Arc<str>,
    /// How deep the step is nested (0: in the route's own step list).
    pub depth: usize,
    /// The exchange the step saw (a `split` part has its own).
    pub exchange_id: String,
    /// When the step began, in microseconds after the exchange entered the route.
    pub at_us: u64,
    /// How long the step took, in microseconds.
    pub duration_us: u64,
    /// How the step ended.
    pub outcome: TraceOutcome,
    /// The error, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The source's URI (credentials hidden), on the `from` entry.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "as_opt_str")]
    pub uri: Option<Arc<str>>,
    /// The headers, redacted, in name order; absent when the step failed (no message
    /// came out) or the tracer was at its memory limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headers: Option<Vec<(String, String)>>,
    /// The body; absent as for `headers`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<TracedBody>,
    /// True when body and headers were left out because the tracer was at `max_bytes`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub omitted: bool,
}

impl TracedStep {
    /// An entry of the step `id` of kind `kind` for `exchange_id`, completed, with no
    /// message yet.
    fn new(id: Arc<str>, kind: Arc<str>, depth: usize, exchange_id: String) -> Self {
        TracedStep {
            id,
            kind,
            depth,
            exchange_id,
            at_us: 0,
            duration_us: 0,
            outcome: TraceOutcome::Completed,
            error: None,
            uri: None,
            headers: None,
            body: None,
            omitted: false,
        }
    }
}

/// One exchange through a traced route.
#[derive(Clone, Debug, Serialize)]
pub struct TracedExchange {
    /// Its place in the order records were finished, over every route: a reader that
    /// asks for records after the last `seq` it saw gets each one once.
    pub seq: u64,
    /// The route.
    #[serde(serialize_with = "as_str")]
    pub route_id: Arc<str>,
    /// The exchange's id.
    pub exchange_id: String,
    /// When it entered the route, in milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// How long the route took with it, in microseconds.
    pub duration_us: u64,
    /// How it ended.
    pub outcome: TraceOutcome,
    /// The error, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The source's entry first, then each step in the order they began.
    pub steps: Vec<TracedStep>,
    /// Steps past `max_steps`, counted and not kept.
    pub steps_dropped: usize,
    /// What the record holds, in bytes (its share of [`BacklogTracer::held_bytes`]).
    pub bytes: usize,
}

fn as_str<S: serde::Serializer>(v: &Arc<str>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(v)
}

fn as_opt_str<S: serde::Serializer>(v: &Option<Arc<str>>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.serialize_str(v),
        None => s.serialize_none(),
    }
}

/// The backlog tracer of one context: which routes are traced, and their records.
/// Cheap to clone (a handle); [`CamelContext::tracer`](crate::CamelContext::tracer)
/// gives it.
#[derive(Clone, Debug, Default)]
pub struct BacklogTracer {
    shared: Arc<Shared>,
    routes: Arc<Mutex<HashMap<String, Arc<RouteBacklog>>>>,
}

#[derive(Debug, Default)]
struct Shared {
    config: RwLock<TracerConfig>,
    /// Every route is traced, also those added later.
    all: AtomicBool,
    held: AtomicUsize,
    next_record: AtomicU64,
    next_seq: AtomicU64,
}

impl BacklogTracer {
    /// Sets the bounds for records made from now on.
    pub fn configure(&self, config: TracerConfig) {
        *self
            .shared
            .config
            .write()
            .unwrap_or_else(|p| p.into_inner()) = config;
    }

    /// The bounds in force.
    pub fn config(&self) -> TracerConfig {
        self.shared
            .config
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn routes(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<RouteBacklog>>> {
        self.routes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Turns tracing on for `route` (every route, also those added later, with `None`).
    /// A route compiled before it was armed has no hooks yet: returns the ids armed now
    /// (a context recompiles those of its routes that exist, see
    /// [`CamelContext::set_tracing`](crate::CamelContext::set_tracing)).
    pub fn enable(&self, route: Option<&str>) -> Vec<String> {
        self.switch(route, true)
    }

    /// Turns tracing off for `route` (every route with `None`); records stay readable.
    pub fn disable(&self, route: Option<&str>) {
        self.switch(route, false);
    }

    fn switch(&self, route: Option<&str>, on: bool) -> Vec<String> {
        let mut routes = self.routes();
        let mut armed = Vec::new();
        match route {
            Some(id) => match routes.get(id) {
                Some(r) => r.enabled.store(on, Ordering::Relaxed),
                None if on => {
                    routes.insert(id.to_string(), self.new_route(id, true));
                    armed.push(id.to_string());
                }
                None => {}
            },
            None => {
                self.shared.all.store(on, Ordering::Relaxed);
                for r in routes.values() {
                    r.enabled.store(on, Ordering::Relaxed);
                }
            }
        }
        armed
    }

    /// Arms `ids` for tracing (with `all` on), returning those not armed before.
    pub(crate) fn arm_all(&self, ids: &[String]) -> Vec<String> {
        let mut routes = self.routes();
        let mut armed = Vec::new();
        for id in ids {
            if !routes.contains_key(id) {
                routes.insert(id.clone(), self.new_route(id, true));
                armed.push(id.clone());
            }
        }
        armed
    }

    fn new_route(&self, id: &str, enabled: bool) -> Arc<RouteBacklog> {
        Arc::new(RouteBacklog {
            route_id: id.into(),
            enabled: AtomicBool::new(enabled),
            shared: self.shared.clone(),
            state: Mutex::default(),
        })
    }

    /// True while `route`'s exchanges are traced.
    pub fn is_enabled(&self, route: &str) -> bool {
        match self.routes().get(route) {
            Some(r) => r.enabled.load(Ordering::Relaxed),
            None => self.shared.all.load(Ordering::Relaxed),
        }
    }

    /// True when every route is traced, also those added later.
    pub fn is_enabled_for_all(&self) -> bool {
        self.shared.all.load(Ordering::Relaxed)
    }

    /// The routes that have records or are armed, with whether each is traced now.
    pub fn routes_traced(&self) -> Vec<(String, bool)> {
        let mut out: Vec<(String, bool)> = self
            .routes()
            .iter()
            .map(|(id, r)| (id.clone(), r.enabled.load(Ordering::Relaxed)))
            .collect();
        out.sort();
        out
    }

    /// The hooks' share of `route_id`'s tracing, when the route is armed (tracing was
    /// turned on for it or for every route); `None` leaves its pipeline unwrapped.
    pub(crate) fn hook(&self, route_id: &str) -> Option<Arc<RouteBacklog>> {
        let mut routes = self.routes();
        if let Some(r) = routes.get(route_id) {
            return Some(r.clone());
        }
        if self.shared.all.load(Ordering::Relaxed) {
            let r = self.new_route(route_id, true);
            routes.insert(route_id.to_string(), r.clone());
            return Some(r);
        }
        None
    }

    /// The finished records of `route` (of every route with `None`) whose `seq` is above
    /// `after`, oldest first.
    pub fn exchanges(&self, route: Option<&str>, after: u64) -> Vec<Arc<TracedExchange>> {
        let backlogs: Vec<Arc<RouteBacklog>> = match route {
            Some(id) => self.routes().get(id).cloned().into_iter().collect(),
            None => self.routes().values().cloned().collect(),
        };
        let mut out: Vec<Arc<TracedExchange>> = backlogs
            .iter()
            .flat_map(|b| {
                b.lock()
                    .done
                    .iter()
                    .filter(|r| r.seq > after)
                    .cloned()
                    .collect::<Vec<_>>()
            })
            .collect();
        out.sort_by_key(|r| r.seq);
        out
    }

    /// The `seq` of the last record finished, over every route (0 before the first).
    pub fn last_seq(&self) -> u64 {
        self.shared.next_seq.load(Ordering::Relaxed)
    }

    /// Bytes the records hold now, finished and in progress, over every route: never
    /// above [`TracerConfig::max_bytes`].
    pub fn held_bytes(&self) -> usize {
        self.shared.held.load(Ordering::Relaxed)
    }

    /// Drops the finished records of `route` (of every route with `None`).
    pub fn clear(&self, route: Option<&str>) {
        let backlogs: Vec<Arc<RouteBacklog>> = match route {
            Some(id) => self.routes().get(id).cloned().into_iter().collect(),
            None => self.routes().values().cloned().collect(),
        };
        for b in backlogs {
            let mut state = b.lock();
            while let Some(r) = state.done.pop_front() {
                b.shared.release(r.bytes);
            }
        }
    }
}

impl Shared {
    fn config(&self) -> TracerConfig {
        self.config
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn release(&self, bytes: usize) {
        self.held.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Takes `bytes` of the budget if they fit.
    fn reserve(&self, bytes: usize, max: usize) -> bool {
        self.held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                (held + bytes <= max).then_some(held + bytes)
            })
            .is_ok()
    }
}

/// One armed route's flag and records.
#[derive(Debug)]
pub(crate) struct RouteBacklog {
    route_id: Arc<str>,
    enabled: AtomicBool,
    shared: Arc<Shared>,
    state: Mutex<Backlog>,
}

#[derive(Debug, Default)]
struct Backlog {
    done: VecDeque<Arc<TracedExchange>>,
    live: HashMap<u64, Live>,
}

#[derive(Debug)]
struct Live {
    record: TracedExchange,
    started: Instant,
    config: TracerConfig,
}

impl RouteBacklog {
    fn lock(&self) -> std::sync::MutexGuard<'_, Backlog> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    #[inline]
    fn on(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// Opens a record for `exchange` with its message as it came in; `None` when the
    /// route already traces `capacity` exchanges at once.
    fn begin(&self, exchange: &Exchange, uri: &Arc<str>) -> Option<u64> {
        let config = self.shared.config();
        let mut state = self.lock();
        if state.live.len() >= config.capacity.max(1) {
            return None;
        }
        let number = self.shared.next_record.fetch_add(1, Ordering::Relaxed) + 1;
        let started_ms = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let mut record = TracedExchange {
            seq: 0,
            route_id: self.route_id.clone(),
            exchange_id: exchange.id.to_string(),
            started_ms,
            duration_us: 0,
            outcome: TraceOutcome::Running,
            error: None,
            steps: Vec::new(),
            steps_dropped: 0,
            bytes: 0,
        };
        let mut from = TracedStep::new("from".into(), "from".into(), 0, record.exchange_id.clone());
        from.uri = Some(uri.clone());
        let from = with_message(from, &exchange.message, &config);
        self.keep_step(&mut state, &mut record, from, &config);
        state.live.insert(
            number,
            Live {
                record,
                started: Instant::now(),
                config,
            },
        );
        Some(number)
    }

    /// Adds `step` to `record`, within the bounds.
    fn keep_step(
        &self,
        state: &mut Backlog,
        record: &mut TracedExchange,
        mut step: TracedStep,
        config: &TracerConfig,
    ) {
        if record.steps.len() >= config.max_steps.max(1) {
            record.steps_dropped += 1;
            return;
        }
        let mut size = step_size(&step);
        while !self.shared.reserve(size, config.max_bytes) {
            match state.done.pop_front() {
                Some(old) => self.shared.release(old.bytes),
                None => {
                    step.headers = None;
                    step.body = None;
                    step.omitted = true;
                    size = step_size(&step);
                    if !self.shared.reserve(size, config.max_bytes) {
                        record.steps_dropped += 1;
                        return;
                    }
                    break;
                }
            }
        }
        record.bytes += size;
        record.steps.push(step);
    }

    /// Adds a step to the open record `number`, if it is still open.
    fn step(&self, number: u64, step: impl FnOnce(&TracerConfig, Instant) -> TracedStep) {
        let mut state = self.lock();
        let Some(mut live) = state.live.remove(&number) else {
            return;
        };
        let step = step(&live.config, live.started);
        let config = live.config.clone();
        self.keep_step(&mut state, &mut live.record, step, &config);
        state.live.insert(number, live);
    }

    /// Closes the record `number` and keeps it among the route's last `capacity`.
    fn finish(&self, number: u64, outcome: TraceOutcome, error: Option<String>) {
        let mut state = self.lock();
        let Some(live) = state.live.remove(&number) else {
            return;
        };
        let mut record = live.record;
        record.duration_us = micros(live.started.elapsed());
        record.outcome = outcome;
        record.error = error;
        record.steps.sort_by_key(|s| s.at_us);
        record.seq = self.shared.next_seq.fetch_add(1, Ordering::Relaxed) + 1;
        state.done.push_back(Arc::new(record));
        while state.done.len() > live.config.capacity.max(1) {
            if let Some(old) = state.done.pop_front() {
                self.shared.release(old.bytes);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn the_memory_bound_drops_old_records_then_bodies() {
        let tracer = BacklogTracer::default();
        tracer.configure(TracerConfig {
            capacity: 10,
            body_max_bytes: 1000,
            max_steps: 5,
            max_bytes: 3000,
        });
        tracer.enable(Some("r"));
        let backlog = tracer.hook("r").expect("armed");
        let uri: Arc<str> = "direct:r".into();
        for _ in 0..20 {
            let ex = Exchange::new("x".repeat(5000));
            let n = backlog.begin(&ex, &uri).expect("room");
            for _ in 0..10 {
                backlog.step(n, |config, _| {
                    with_message(
                        TracedStep::new("s".into(), "log".into(), 0, String::new()),
                        &ex.message,
                        config,
                    )
                });
                assert!(tracer.held_bytes() <= 3000, "{}", tracer.held_bytes());
            }
            backlog.finish(n, TraceOutcome::Completed, None);
        }
        let kept = tracer.exchanges(Some("r"), 0);
        assert!(!kept.is_empty());
        let last = kept.last().expect("a record");
        assert_eq!(last.steps.len(), 5, "max_steps");
        assert_eq!(
            last.steps_dropped, 6,
            "the `from` entry counts among the five"
        );
        assert!(
            last.steps.iter().any(|s| s.omitted),
            "bodies left out at the limit"
        );
        let sum: usize = kept.iter().map(|r| r.bytes).sum();
        assert_eq!(sum, tracer.held_bytes());
        tracer.clear(None);
        assert_eq!(tracer.held_bytes(), 0);
    }
}
