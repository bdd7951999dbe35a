//! Whether the databases the routes use answer, for readiness.
//!
//! A `sql:` consumer reports its own database through its health, but a database used
//! only by `to: sql:`, a `transacted` step or an outbox publish has no consumer to notice
//! it is gone. While the context runs, a task pings every pool of the context's table
//! ([`Pools`]) every [`PROBE_EVERY`], each within [`PROBE_TIMEOUT`], and keeps the last
//! outcome per database; [`CamelContext::health`](super::CamelContext::health) reads it
//! without waiting. A pool closed since the last round drops out at the next one.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::pools::Pools;

/// How often the databases are pinged while the context runs.
pub(crate) const PROBE_EVERY: Duration = Duration::from_secs(5);
/// How long a ping may take before its database counts as down.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// The last outcome per database key, and the task that keeps it.
#[derive(Debug, Default)]
pub(crate) struct DatasourceProbe {
    /// Database key → `None` when it answered, or why it did not.
    last: Arc<Mutex<BTreeMap<String, Option<String>>>>,
    task: Mutex<Option<tokio::task::AbortHandle>>,
}

impl DatasourceProbe {
    /// Starts pinging `pools` (again, if it was running) on the current runtime; without
    /// one (a context driven outside tokio) nothing is probed.
    pub(crate) fn start(&self, pools: Pools) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let last = self.last.clone();
        let task = runtime.spawn(async move {
            let mut every = tokio::time::interval(PROBE_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                let outcomes = pools.ping(PROBE_TIMEOUT).await;
                let round = outcomes
                    .into_iter()
                    .map(|(key, r)| (key, r.err()))
                    .collect();
                *last.lock().unwrap_or_else(|p| p.into_inner()) = round;
            }
        });
        if let Some(old) = self
            .task
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .replace(task.abort_handle())
        {
            old.abort();
        }
    }

    /// Stops pinging and forgets the outcomes (a stopped context has no pools).
    pub(crate) fn stop(&self) {
        if let Some(task) = self.task.lock().unwrap_or_else(|p| p.into_inner()).take() {
            task.abort();
        }
        self.last.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// The last outcome of each database probed, by key.
    pub(crate) fn outcomes(&self) -> Vec<(String, Option<String>)> {
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        last.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}

impl Drop for DatasourceProbe {
    fn drop(&mut self) {
        self.stop();
    }
}
