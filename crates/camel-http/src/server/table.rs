//! The server's table of routes: which `platform-http:` consumer answers which path and
//! methods. Consumers add themselves when they start and remove themselves when they stop;
//! the server and its other routes carry on.
//!
//! Invariant: a [`Registration`] counts a request from [`Registration::enter`] until its
//! response is built; once [`Registration::refuse`] is called no request enters, so
//! [`Registration::idle`] resolving means every accepted request has its answer.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use axum::http::Method;
use camel_api::ConsumerContext;
use tokio::sync::{watch, Notify};

use super::path::PathTemplate;

/// One started `platform-http:` consumer.
#[derive(Debug)]
pub(crate) struct Registration {
    id: u64,
    pub(crate) template: PathTemplate,
    /// `None` accepts every method.
    pub(crate) methods: Option<Vec<Method>>,
    pub(crate) max_body_size: usize,
    /// How the body is bound (REST DSL's `binding_mode`) and the default response type.
    pub(crate) binding: crate::platform::Binding,
    pub(crate) ctx: ConsumerContext,
    refusing: AtomicBool,
    inflight: AtomicUsize,
    idle: Notify,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Registration {
    pub(crate) fn new(
        template: PathTemplate,
        methods: Option<Vec<Method>>,
        max_body_size: usize,
        binding: crate::platform::Binding,
        ctx: ConsumerContext,
    ) -> Arc<Self> {
        Arc::new(Registration {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            template,
            methods,
            max_body_size,
            binding,
            ctx,
            refusing: AtomicBool::new(false),
            inflight: AtomicUsize::new(0),
            idle: Notify::new(),
        })
    }

    fn allows(&self, method: &Method) -> bool {
        match &self.methods {
            None => true,
            // A HEAD is a GET without the body; hyper drops the body.
            Some(m) => m.contains(method) || (method == Method::HEAD && m.contains(&Method::GET)),
        }
    }

    /// Counts a request in, or `None` when the route takes no requests now: it is stopping,
    /// or suspended (its gate is paused), and the caller answers 503.
    pub(crate) fn enter(self: &Arc<Self>) -> Option<RequestGuard> {
        self.inflight.fetch_add(1, Ordering::SeqCst);
        let guard = RequestGuard(self.clone());
        // Checked after counting in: `refuse` then `idle` either sees this request or this
        // request sees the refusal.
        let refusing = self.refusing.load(Ordering::SeqCst)
            || self.ctx.is_cancelled()
            || self.ctx.gate().is_paused();
        (!refusing).then_some(guard)
    }

    /// No new request enters from now on.
    pub(crate) fn refuse(&self) {
        self.refusing.store(true, Ordering::SeqCst);
    }

    /// Resolves once every request that entered has its response.
    pub(crate) async fn idle(&self) {
        loop {
            let notified = self.idle.notified();
            if self.inflight.load(Ordering::SeqCst) == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// A request counted in a [`Registration`]; dropped when its response is built.
#[derive(Debug)]
pub(crate) struct RequestGuard(Arc<Registration>);

impl Drop for RequestGuard {
    fn drop(&mut self) {
        if self.0.inflight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// Path parameters by name, in template order.
pub(crate) type PathParams = Vec<(String, String)>;

/// What a request's method and path find.
#[derive(Debug)]
pub(crate) enum Lookup {
    Found(Arc<Registration>, PathParams),
    /// The path exists, not for this method; the methods it has.
    WrongMethod(Vec<Method>),
    NotFound,
}

/// Every started route, by path template.
#[derive(Debug)]
pub(crate) struct RouteTable {
    // Read per request, written only when a route starts or stops; never held across an
    // `.await`.
    entries: RwLock<Vec<Arc<Registration>>>,
    changes: watch::Sender<u64>,
}

impl Default for RouteTable {
    fn default() -> Self {
        RouteTable {
            entries: RwLock::default(),
            changes: watch::Sender::new(0),
        }
    }
}

impl RouteTable {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<Registration>>> {
        // A panic while holding the lock cannot leave the vector half-changed (one push
        // or retain), so a poisoned lock is still a consistent table.
        self.entries.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a route; refused when another route already answers the same path template
    /// for one of its methods.
    pub(crate) fn add(&self, reg: Arc<Registration>) -> Result<(), String> {
        let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
        let clash = entries.iter().find(|other| {
            other.template.same_shape(&reg.template)
                && match (&other.methods, &reg.methods) {
                    (Some(a), Some(b)) => a.iter().any(|m| b.contains(m)),
                    _ => true,
                }
        });
        if let Some(other) = clash {
            return Err(format!(
                "path `{}` is already served by route `{}` for the same methods",
                reg.template,
                other.ctx.route_id()
            ));
        }
        entries.push(reg);
        drop(entries);
        self.changes.send_modify(|v| *v += 1);
        Ok(())
    }

    pub(crate) fn remove(&self, reg: &Registration) {
        self.entries
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|r| r.id != reg.id);
        self.changes.send_modify(|v| *v += 1);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// The route for `method` and `path`; among several templates matching the path, the
    /// one with the fewest parameters (`/orders/new` before `/orders/{id}`).
    pub(crate) fn lookup(&self, method: &Method, path: &str) -> Lookup {
        let entries = self.read();
        let mut best: Option<(&Arc<Registration>, PathParams)> = None;
        let mut allowed: Vec<Method> = Vec::new();
        for reg in entries.iter() {
            let Some(params) = reg.template.matches(path) else {
                continue;
            };
            if !reg.allows(method) {
                if let Some(ms) = &reg.methods {
                    allowed.extend(ms.iter().cloned());
                }
                continue;
            }
            let better = best
                .as_ref()
                .is_none_or(|(b, _)| reg.template.param_count() < b.template.param_count());
            if better {
                best = Some((reg, params));
            }
        }
        match best {
            Some((reg, params)) => Lookup::Found(reg.clone(), params),
            None if !allowed.is_empty() => {
                allowed.sort_by(|a, b| a.as_str().cmp(b.as_str()));
                allowed.dedup();
                Lookup::WrongMethod(allowed)
            }
            None => Lookup::NotFound,
        }
    }

    /// Resolves once a route serves `template` (as written in its URI).
    pub(crate) async fn wait_for(&self, template: &str) {
        let Ok(wanted) = PathTemplate::parse(template) else {
            return;
        };
        let mut rx = self.changes.subscribe();
        loop {
            if self.read().iter().any(|r| r.template == wanted) {
                return;
            }
            if rx.changed().await.is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use camel_api::BoxProcessor;

    fn reg(path: &str, methods: Option<Vec<Method>>) -> Arc<Registration> {
        let ctx = ConsumerContext::for_pipeline(path, BoxProcessor::identity());
        Registration::new(
            PathTemplate::parse(path).unwrap(),
            methods,
            1024,
            Default::default(),
            ctx,
        )
    }

    #[test]
    fn literal_beats_parameter_and_methods_are_checked() {
        let table = RouteTable::default();
        table
            .add(reg("/orders/{id}", Some(vec![Method::GET])))
            .unwrap();
        table.add(reg("/orders/new", None)).unwrap();
        match table.lookup(&Method::GET, "/orders/new") {
            Lookup::Found(r, p) => {
                assert_eq!(r.template.to_string(), "/orders/new");
                assert!(p.is_empty());
            }
            other => panic!("{other:?}"),
        }
        match table.lookup(&Method::DELETE, "/orders/7") {
            Lookup::WrongMethod(m) => assert_eq!(m, vec![Method::GET]),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            table.lookup(&Method::HEAD, "/orders/7"),
            Lookup::Found(..)
        ));
        assert!(matches!(
            table.lookup(&Method::GET, "/nothing"),
            Lookup::NotFound
        ));
    }

    #[test]
    fn the_same_path_and_method_twice_is_refused() {
        let table = RouteTable::default();
        table.add(reg("/a/{x}", Some(vec![Method::GET]))).unwrap();
        assert!(table.add(reg("/a/{y}", Some(vec![Method::GET]))).is_err());
        table.add(reg("/a/{y}", Some(vec![Method::POST]))).unwrap();
        assert!(table.add(reg("/a/{z}", None)).is_err());
    }

    #[tokio::test]
    async fn a_refusing_route_waits_only_for_requests_already_in() {
        let r = reg("/x", None);
        let guard = r.enter().expect("open");
        r.refuse();
        assert!(r.enter().is_none());
        let idle = r.idle();
        tokio::pin!(idle);
        assert!(futures::poll!(idle.as_mut()).is_pending());
        drop(guard);
        idle.await;
    }
}
