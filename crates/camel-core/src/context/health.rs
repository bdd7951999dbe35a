//! Liveness and readiness, as a Kubernetes probe asks them, and the checks behind them.
//!
//! *Live* means the context answers: nothing here can tell more from inside the process
//! (a wedged runtime does not answer at all). *Ready* means it does the work it was given:
//! the context is started and not stopping, every route with `auto_startup` is started
//! (one that failed to start says why), no operation is starting or swapping a route, and
//! every running consumer that can tell reports its source reachable (a `sql:` or
//! `outbox:` consumer whose database is down, a Kafka or RabbitMQ consumer without its
//! broker), and every database of the context's pools answers its last ping (a database
//! used only by `to: sql:`, `transacted` or an outbox publish has no consumer to tell;
//! see `probe`). See `docs/observability.md`.

use std::sync::atomic::Ordering;

use super::{CamelContext, RouteOperation, RouteStatus};

/// Up or down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HealthState {
    /// Fit for its job.
    Up,
    /// Not fit: see the check's reason.
    Down,
}

impl HealthState {
    /// `UP` or `DOWN`, as Camel's health API spells them.
    pub fn as_str(self) -> &'static str {
        match self {
            HealthState::Up => "UP",
            HealthState::Down => "DOWN",
        }
    }
}

/// One check and its outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthCheck {
    /// `context`, `datasource:<key>` (the database without its password), or `route:<id>`.
    pub id: String,
    /// Its outcome.
    pub state: HealthState,
    /// Why it is down, or what is worth knowing while up (suspended, not auto-started).
    pub message: Option<String>,
}

/// The outcome of every check: down when any is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthReport {
    /// Down when any check is down.
    pub state: HealthState,
    /// Each check: the context's first, then the databases' by key, then the routes' in
    /// definition order.
    pub checks: Vec<HealthCheck>,
}

impl HealthReport {
    fn of(checks: Vec<HealthCheck>) -> Self {
        let state = if checks.iter().all(|c| c.state == HealthState::Up) {
            HealthState::Up
        } else {
            HealthState::Down
        };
        HealthReport { state, checks }
    }

    /// True when every check is up.
    pub fn is_up(&self) -> bool {
        self.state == HealthState::Up
    }

    /// The checks that are down.
    pub fn down(&self) -> impl Iterator<Item = &HealthCheck> {
        self.checks.iter().filter(|c| c.state == HealthState::Down)
    }
}

fn check(id: String, down: Option<String>, note: Option<String>) -> HealthCheck {
    match down {
        Some(reason) => HealthCheck {
            id,
            state: HealthState::Down,
            message: Some(reason),
        },
        None => HealthCheck {
            id,
            state: HealthState::Up,
            message: note,
        },
    }
}

impl CamelContext {
    /// Liveness: the context answers. Always up; a probe that gets no answer at all is
    /// what tells a wedged process.
    pub fn liveness(&self) -> HealthReport {
        HealthReport::of(vec![check("context".into(), None, None)])
    }

    /// Readiness: the context is started, every auto-started route runs, and every
    /// running consumer that can tell reaches its source. Never waits for a route
    /// operation (reads the routes' published state).
    pub fn health(&self) -> HealthReport {
        let inner = &self.inner;
        let context = if inner.stopping.load(Ordering::SeqCst) > 0 {
            Some("the context is stopping".to_string())
        } else if !inner.started.load(Ordering::SeqCst) {
            Some("the context is not started".to_string())
        } else {
            None
        };
        let mut checks = vec![check("context".into(), context, None)];
        for (key, down) in inner.datasources.outcomes() {
            let down = down.map(|why| format!("the database does not answer: {why}"));
            checks.push(check(format!("datasource:{key}"), down, None));
        }
        for entry in inner.routes.snapshot() {
            let view = entry.view();
            let auto = view.definition.auto_startup;
            let mut note = None;
            let down = match (view.status, view.operation) {
                (_, Some(op @ (RouteOperation::Starting | RouteOperation::Swapping))) => {
                    Some(format!("the route is {}", op.as_str()))
                }
                (RouteStatus::Stopped, _) if auto => Some(match &view.start_error {
                    Some(e) => format!("the route failed to start: {e}"),
                    None => "the route is stopped".to_string(),
                }),
                (RouteStatus::Stopped, _) => {
                    note = Some("stopped (not auto-started)".to_string());
                    None
                }
                (RouteStatus::Started | RouteStatus::Suspended, _) => {
                    if view.status == RouteStatus::Suspended {
                        note = Some("suspended".to_string());
                    }
                    view.health
                        .as_ref()
                        .and_then(|h| h.failing())
                        .map(|reason| format!("the consumer is failing: {reason}"))
                }
            };
            checks.push(check(format!("route:{}", entry.id()), down, note));
        }
        HealthReport::of(checks)
    }
}
