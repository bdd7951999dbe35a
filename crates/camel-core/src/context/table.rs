//! The route table: which routes exist, and one lock per route.
//!
//! Two kinds of lock, so that nothing waits for what it does not need:
//!
//! - The table itself (`std::sync::RwLock<Vec<Arc<RouteEntry>>>`) is held only to look a
//!   route up, list the routes, add or remove an entry: a few instructions, never across
//!   an `.await`.
//! - Each route has its own async lock over its [`RouteRuntime`]. A start, stop, swap,
//!   suspend, resume or removal of that route takes it for as long as the operation runs
//!   (a stop may drain exchanges for its whole deadline); operations on the same route
//!   run one after another, operations on different routes run side by side.
//!
//! Readers (status, definition, health, the listing) never take a route's lock: each
//! entry publishes a [`RouteView`] that every operation refreshes when it begins and when
//! it ends (even when its future is dropped halfway), and readers load that.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use arc_swap::ArcSwap;
use camel_api::{ConsumerHealth, RouteGate};
use tokio::sync::{Mutex, MutexGuard};

use super::route::{RouteRuntime, RouteStatus};
use crate::error::{Location, RouteError, RouteErrorKind};
use crate::model::RouteDefinition;

/// An operation running on a route, as the listing shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RouteOperation {
    /// Starting lifecycle steps and the consumer.
    Starting,
    /// Stopping intake and draining exchanges in flight.
    Stopping,
    /// Pausing intake.
    Suspending,
    /// Resuming intake.
    Resuming,
    /// Replacing the pipeline (which may drain lifecycle steps).
    Swapping,
    /// Stopping the route to remove it.
    Removing,
}

impl RouteOperation {
    /// The operation's name in lower case (`"stopping"`), as the admin API shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            RouteOperation::Starting => "starting",
            RouteOperation::Stopping => "stopping",
            RouteOperation::Suspending => "suspending",
            RouteOperation::Resuming => "resuming",
            RouteOperation::Swapping => "swapping",
            RouteOperation::Removing => "removing",
        }
    }
}

/// What readers see of a route: its state as of the last operation's start or end.
#[derive(Debug)]
pub(crate) struct RouteView {
    pub(crate) status: RouteStatus,
    pub(crate) definition: Arc<RouteDefinition>,
    /// The running consumer's health (live: read when asked), `None` when not running.
    pub(crate) health: Option<Arc<ConsumerHealth>>,
    /// The operation under way, if any.
    pub(crate) operation: Option<RouteOperation>,
    /// The route's gate, to count exchanges in flight without its lock.
    pub(crate) gate: Arc<RouteGate>,
    /// Why the route's last start failed, until it starts.
    pub(crate) start_error: Option<Arc<str>>,
    /// When the route last started, while it runs.
    pub(crate) started_at: Option<tokio::time::Instant>,
}

/// One route in the table.
pub(crate) struct RouteEntry {
    id: String,
    runtime: Mutex<RouteRuntime>,
    view: ArcSwap<RouteView>,
    /// Set, under the route's lock, once the route is stopped for removal: an operation
    /// that looked the route up before and got the lock after finds it gone.
    removed: AtomicBool,
}

impl std::fmt::Debug for RouteEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Route")
            .field("id", &self.id)
            .field("view", &self.view.load())
            .finish()
    }
}

impl RouteEntry {
    pub(crate) fn new(runtime: RouteRuntime) -> Arc<Self> {
        let view = ArcSwap::from_pointee(view_of(&runtime, None));
        Arc::new(RouteEntry {
            id: runtime.id().to_string(),
            runtime: Mutex::new(runtime),
            view,
            removed: AtomicBool::new(false),
        })
    }

    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The route as readers see it; takes no lock.
    pub(crate) fn view(&self) -> Arc<RouteView> {
        self.view.load_full()
    }

    /// Waits for the route's own lock (other operations on this route finish first) and
    /// shows `operation` as under way until the guard is dropped. A route removed
    /// meanwhile is [`RouteErrorKind::NoSuchRoute`].
    pub(crate) async fn lock(
        &self,
        operation: RouteOperation,
    ) -> Result<RouteGuard<'_>, RouteError> {
        let runtime = self.runtime.lock().await;
        self.guard(runtime, operation)
    }

    /// Locks a route no one else can see yet (just made, not in the table).
    pub(crate) fn lock_new(&self, operation: RouteOperation) -> Option<RouteGuard<'_>> {
        let runtime = self.runtime.try_lock().ok()?;
        self.guard(runtime, operation).ok()
    }

    fn guard<'a>(
        &'a self,
        runtime: MutexGuard<'a, RouteRuntime>,
        operation: RouteOperation,
    ) -> Result<RouteGuard<'a>, RouteError> {
        if self.removed.load(Ordering::Acquire) {
            return Err(RouteError::new(RouteErrorKind::NoSuchRoute(
                self.id.clone(),
            )));
        }
        self.view
            .store(Arc::new(view_of(&runtime, Some(operation))));
        Ok(RouteGuard {
            entry: self,
            runtime,
        })
    }
}

fn view_of(runtime: &RouteRuntime, operation: Option<RouteOperation>) -> RouteView {
    RouteView {
        status: runtime.status,
        definition: Arc::new(runtime.definition.clone()),
        health: runtime.health(),
        operation,
        gate: runtime.gate().clone(),
        start_error: runtime.start_error.clone(),
        started_at: runtime.started_at(),
    }
}

/// Exclusive access to one route's runtime. Dropping it (at the end of the operation, or
/// when the operation's future is dropped) publishes the route's new state to readers.
pub(crate) struct RouteGuard<'a> {
    entry: &'a RouteEntry,
    runtime: MutexGuard<'a, RouteRuntime>,
}

impl RouteGuard<'_> {
    /// Marks the route removed; operations waiting for its lock will find it gone.
    pub(crate) fn mark_removed(&self) {
        self.entry.removed.store(true, Ordering::Release);
    }
}

impl std::ops::Deref for RouteGuard<'_> {
    type Target = RouteRuntime;
    fn deref(&self) -> &RouteRuntime {
        &self.runtime
    }
}

impl std::ops::DerefMut for RouteGuard<'_> {
    fn deref_mut(&mut self) -> &mut RouteRuntime {
        &mut self.runtime
    }
}

impl Drop for RouteGuard<'_> {
    fn drop(&mut self) {
        self.entry
            .view
            .store(Arc::new(view_of(&self.runtime, None)));
    }
}

/// The routes in definition order. The lock is held for lookups and edits only.
#[derive(Debug, Default)]
pub(crate) struct RouteTable {
    entries: RwLock<Vec<Arc<RouteEntry>>>,
}

impl RouteTable {
    /// Every route, in definition order (a snapshot: the table is not locked afterwards).
    pub(crate) fn snapshot(&self) -> Vec<Arc<RouteEntry>> {
        self.entries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The route with this id.
    pub(crate) fn find(&self, id: &str) -> Result<Arc<RouteEntry>, RouteError> {
        self.entries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|e| e.id == id)
            .cloned()
            .ok_or_else(|| RouteError::new(RouteErrorKind::NoSuchRoute(id.to_string())))
    }

    /// The ids and places of the routes, for duplicate checks.
    pub(crate) fn ids(&self) -> Vec<(String, Option<Location>)> {
        self.entries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|e| (e.id.clone(), e.view().definition.location()))
            .collect()
    }

    /// Appends `added`, unless one of their ids was taken since the caller compiled them
    /// (another add ran meanwhile): then nothing is added and each clash is an error.
    pub(crate) fn append(&self, added: &[Arc<RouteEntry>]) -> Result<(), Vec<RouteError>> {
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        let clashes: Vec<RouteError> = added
            .iter()
            .filter_map(|new| {
                let old = entries.iter().find(|e| e.id == new.id)?;
                let kind = RouteErrorKind::DuplicateRouteId {
                    id: new.id.clone(),
                    first: old.view().definition.location(),
                };
                Some(
                    RouteError::new(kind)
                        .at(new.view().definition.location())
                        .in_route(Some(&new.id)),
                )
            })
            .collect();
        if !clashes.is_empty() {
            return Err(clashes);
        }
        entries.extend(added.iter().cloned());
        Ok(())
    }

    /// Takes `entry` out of the table (if it is still there).
    pub(crate) fn remove(&self, entry: &Arc<RouteEntry>) {
        self.entries
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|e| !Arc::ptr_eq(e, entry));
    }
}

/// Indices of `entries` in startup order: by `startup_order`, then definition order.
pub(crate) fn startup_order(entries: &[Arc<RouteEntry>]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..entries.len()).collect();
    idx.sort_by_key(|&i| {
        let order = entries[i].view().definition.startup_order;
        (order.unwrap_or(i32::MAX), i)
    });
    idx
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::RouteBuilder;

    fn entry(id: &str) -> Arc<RouteEntry> {
        let ctx = crate::CamelContext::new();
        let definition = RouteBuilder::from("direct:x").id(id).to("log:x").build();
        let compiled = crate::compiler::compile_route(ctx.registry(), &definition)
            .expect("a valid route compiles");
        RouteEntry::new(RouteRuntime::new(
            definition,
            compiled,
            ctx.registry().tracer().clone(),
        ))
    }

    #[test]
    fn append_refuses_an_id_taken_since_the_compile_and_adds_nothing() {
        let table = RouteTable::default();
        table.append(&[entry("a")]).expect("a free id");
        let clashes = table
            .append(&[entry("b"), entry("a")])
            .expect_err("`a` is taken");
        assert!(
            matches!(&clashes[..], [e] if matches!(&e.kind, RouteErrorKind::DuplicateRouteId { id, .. } if id == "a")),
            "{clashes:?}"
        );
        let ids: Vec<String> = table.ids().into_iter().map(|(id, _)| id).collect();
        assert_eq!(ids, ["a"], "`b` is not added either");
    }

    #[tokio::test]
    async fn a_guard_publishes_the_operation_and_clears_it_when_dropped() {
        let a = entry("a");
        let guard = a.lock(RouteOperation::Stopping).await.expect("not removed");
        assert_eq!(a.view().operation, Some(RouteOperation::Stopping));
        guard.mark_removed();
        drop(guard);
        assert_eq!(a.view().operation, None);
        let gone = a.lock(RouteOperation::Starting).await.err();
        assert!(
            matches!(gone.map(|e| e.kind), Some(RouteErrorKind::NoSuchRoute(_))),
            "a removed route is gone to whoever waited for its lock"
        );
    }
}
