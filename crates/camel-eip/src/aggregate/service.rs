//! The aggregator's shared state and completion: groups taken out of the repository and
//! delivered to the nested steps. The intake (one exchange in) is in `intake.rs`.

use std::collections::HashSet;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::{BoxExpression, BoxPredicate, BoxProcessor, CamelError, Exchange};
use tokio::sync::{Notify, RwLock};
use tokio::time::Instant;
use tracing::{debug, warn};

use super::completion::{ClosedKeys, CompletedBy, Deadlines};
use super::names;
use super::repository::{MemoryAggregationRepository, RepositoryError, SharedRepository};
use crate::aggregation::SharedStrategy;

/// A write that keeps conflicting this many times in a row fails the exchange.
pub(super) const MAX_CONFLICT_RETRIES: usize = 1000;

/// The aggregator's options, decoded from [`crate::config::Aggregate`].
#[derive(Clone, Debug, Default)]
pub struct AggregatorOptions {
    /// Complete at this many exchanges.
    pub completion_size: Option<usize>,
    /// Complete this long after a group's last exchange.
    pub completion_timeout: Option<Duration>,
    /// Restored groups time out no sooner than this after the start.
    pub restored_group_delay: Option<Duration>,
    /// Complete every group this often.
    pub completion_interval: Option<Duration>,
    /// Complete every group when a batch consumer's batch is in.
    pub completion_from_batch_consumer: bool,
    /// Complete the other groups when a new group starts.
    pub completion_on_new_correlation_group: bool,
    /// The predicate looks at the incoming exchange, not the aggregate.
    pub eager_check_completion: bool,
    /// Complete the open groups on a route stop.
    pub force_completion_on_stop: bool,
    /// Drop a group that times out.
    pub discard_on_completion_timeout: bool,
    /// Drop a group whose strategy fails.
    pub discard_on_aggregation_failure: bool,
    /// Refuse keys whose group completed (bound, 0: none).
    pub close_correlation_key_on_completion: Option<usize>,
    /// Pass on exchanges without a correlation key.
    pub ignore_invalid_correlation_keys: bool,
    /// No in-process lock around an update (conflicts are retried).
    pub optimistic_locking: bool,
    /// Redeliver unconfirmed completed groups.
    pub use_recovery: bool,
    /// How often to look for them.
    pub recovery_interval: Duration,
    /// Attempts before the dead letter (0: no limit).
    pub maximum_redeliveries: u32,
}

impl From<&crate::config::Aggregate> for AggregatorOptions {
    fn from(c: &crate::config::Aggregate) -> Self {
        AggregatorOptions {
            completion_size: c.completion_size,
            completion_timeout: c.completion_timeout.map(Duration::from_millis),
            restored_group_delay: c.restored_group_delay.map(Duration::from_millis),
            completion_interval: c.completion_interval.map(Duration::from_millis),
            completion_from_batch_consumer: c.completion_from_batch_consumer,
            completion_on_new_correlation_group: c.completion_on_new_correlation_group,
            eager_check_completion: c.eager_check_completion,
            force_completion_on_stop: c.force_completion_on_stop || c.complete_all_on_stop,
            discard_on_completion_timeout: c.discard_on_completion_timeout,
            discard_on_aggregation_failure: c.discard_on_aggregation_failure,
            close_correlation_key_on_completion: c.close_correlation_key_on_completion,
            ignore_invalid_correlation_keys: c.ignore_invalid_correlation_keys,
            optimistic_locking: c.optimistic_locking,
            use_recovery: c.use_recovery,
            recovery_interval: Duration::from_millis(c.recovery_interval.unwrap_or(5000)),
            maximum_redeliveries: c.maximum_redeliveries,
        }
    }
}

/// The compiled pieces an aggregator runs with.
#[derive(Clone)]
pub struct AggregatorParts {
    /// Gives each exchange's correlation key.
    pub correlation: BoxExpression,
    /// Folds a group.
    pub strategy: SharedStrategy,
    /// `completion_size_expression`.
    pub completion_size: Option<BoxExpression>,
    /// `completion_timeout_expression` (milliseconds).
    pub completion_timeout: Option<BoxExpression>,
    /// `completion_predicate`.
    pub completion_predicate: Option<BoxPredicate>,
    /// Where groups live; a fresh in-memory repository owned by the step when `None`.
    pub repository: Option<SharedRepository>,
    /// Run on each completed group.
    pub steps: BoxProcessor,
    /// Where a group goes once its recovery attempts are exhausted.
    pub dead_letter: Option<BoxProcessor>,
}

impl std::fmt::Debug for AggregatorParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AggregatorParts")
            .field("correlation", &self.correlation)
            .field("repository", &self.repository)
            .finish_non_exhaustive()
    }
}

/// A completed group on its way to the steps.
pub(crate) struct Completion {
    pub(crate) completion_id: String,
    pub(crate) exchange: Exchange,
    pub(crate) by: CompletedBy,
}

/// State shared by the intake, the timer task and the lifecycle.
pub(crate) struct Inner {
    pub(crate) route_id: String,
    pub(crate) step_name: String,
    pub(crate) options: AggregatorOptions,
    pub(super) parts: AggregatorParts,
    pub(crate) repository: SharedRepository,
    /// Set when the repository is this step's own in-memory one (handed over on a swap).
    pub(crate) own_memory: Option<Arc<MemoryAggregationRepository>>,
    /// The own in-memory repository when the options allow the synchronous intake (see
    /// `intake.rs`): pessimistic locking, no completion that lists every group per
    /// exchange (`completion_on_new_correlation_group`, `completion_from_batch_consumer`).
    pub(super) sync_memory: Option<Arc<MemoryAggregationRepository>>,
    /// The names of `CamelAggregatedSize` and `CamelAggregatedCorrelationKey`, allocated
    /// once: every exchange sets both on its aggregate.
    pub(super) size_name: Arc<str>,
    pub(super) key_name: Arc<str>,
    /// Serialises updates unless `optimistic_locking`.
    pub(crate) lock: tokio::sync::Mutex<()>,
    /// `true` while the step takes exchanges; an update holds a read guard, so the
    /// lifecycle's write guard waits for updates in progress.
    pub(crate) gate: RwLock<bool>,
    pub(crate) deadlines: Mutex<Deadlines>,
    /// Woken when a deadline earlier than any armed one is set.
    pub(crate) rearmed: Notify,
    pub(super) closed: Mutex<ClosedKeys>,
    /// Exchanges aggregated in the current batch (`completion_from_batch_consumer`).
    pub(super) batch_seen: AtomicUsize,
    /// Completion ids being delivered now (recovery leaves them alone).
    pub(crate) delivering: Mutex<HashSet<String>>,
}

pub(super) fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every critical section is a few map operations that leave the value consistent.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Inner {
    pub(crate) fn new(
        route_id: &str,
        step_name: &str,
        options: AggregatorOptions,
        parts: AggregatorParts,
    ) -> Self {
        let (repository, own_memory): (SharedRepository, _) = match &parts.repository {
            Some(r) => (r.clone(), None),
            None => {
                let memory = Arc::new(MemoryAggregationRepository::new());
                (memory.clone(), Some(memory))
            }
        };
        let sync_memory = own_memory.clone().filter(|_| {
            !options.optimistic_locking
                && !options.completion_on_new_correlation_group
                && !options.completion_from_batch_consumer
        });
        Inner {
            route_id: route_id.to_string(),
            step_name: step_name.to_string(),
            closed: Mutex::new(ClosedKeys::new(
                options.close_correlation_key_on_completion.unwrap_or(0),
            )),
            options,
            parts,
            repository,
            own_memory,
            sync_memory,
            size_name: Arc::from(names::SIZE),
            key_name: Arc::from(names::CORRELATION_KEY),
            lock: tokio::sync::Mutex::new(()),
            gate: RwLock::new(true),
            deadlines: Mutex::new(Deadlines::default()),
            rearmed: Notify::new(),
            batch_seen: AtomicUsize::new(0),
            delivering: Mutex::new(HashSet::new()),
        }
    }

    /// Completes the open group of `key` (if any) by `by`, taking it out of the
    /// repository. The caller holds the update lock unless locking is optimistic.
    pub(crate) async fn take(
        &self,
        key: &str,
        by: CompletedBy,
    ) -> Result<Option<Completion>, CamelError> {
        for _ in 0..MAX_CONFLICT_RETRIES {
            let Some(stored) = self.repository.get(key).await? else {
                self.disarm(key);
                return Ok(None);
            };
            let c = self.finish(stored.exchange, by);
            match self
                .repository
                .complete(key, Some(stored.version), &c.completion_id, &c.exchange)
                .await
            {
                Ok(()) => {
                    self.closed_now(key);
                    return Ok(Some(c));
                }
                Err(RepositoryError::Conflict) => tokio::task::yield_now().await,
                Err(RepositoryError::Failed(e)) => return Err(e),
            }
        }
        Err(CamelError::processor(format!(
            "aggregate: group `{key}` kept changing while it was completed"
        )))
    }

    pub(super) fn finish(&self, mut exchange: Exchange, by: CompletedBy) -> Completion {
        exchange.properties.insert(names::COMPLETED_BY, by.as_str());
        let exchange = self.parts.strategy.on_completion(exchange, None);
        Completion {
            completion_id: format!(
                "{:016x}{:016x}",
                rand::random::<u64>(),
                rand::random::<u64>()
            ),
            exchange,
            by,
        }
    }

    pub(super) fn closed_now(&self, key: &str) {
        self.disarm(key);
        if self.options.close_correlation_key_on_completion.is_some() {
            locked(&self.closed).close(key);
        }
    }

    pub(super) fn arm(&self, key: &str, at: Instant) {
        let mut d = locked(&self.deadlines);
        let before = d.next();
        d.arm(key, at);
        if before.is_none_or(|b| at < b) {
            drop(d);
            self.rearmed.notify_one();
        }
    }

    pub(super) fn disarm(&self, key: &str) {
        if self.options.completion_timeout.is_some() || self.parts.completion_timeout.is_some() {
            locked(&self.deadlines).disarm(key);
        }
    }

    /// Re-arms the timeout of every open group (at start: groups adopted or left by a
    /// previous process).
    pub(crate) async fn arm_existing(&self) -> Result<usize, CamelError> {
        let Some(t) = self.options.completion_timeout else {
            return Ok(0);
        };
        let keys = self.repository.keys().await?;
        // The exchange in flight at a crash was never acknowledged, so its source sends
        // it again; completing the restored group before then would complete the key
        // twice (once without it, once with it alone).
        let at = Instant::now() + t.max(self.options.restored_group_delay.unwrap_or_default());
        for k in &keys {
            self.arm(k, at);
        }
        Ok(keys.len())
    }

    /// Runs the steps on a completed group and confirms it (kept for recovery when they
    /// fail and recovery is on). A timed-out group under `discard_on_completion_timeout`
    /// is confirmed without running them.
    pub(crate) async fn deliver(&self, c: Completion) {
        if c.by == CompletedBy::Timeout && self.options.discard_on_completion_timeout {
            debug!(route_id = %self.route_id, "aggregate: timed-out group discarded");
            if let Err(e) = self.repository.confirm(&c.completion_id).await {
                warn!(route_id = %self.route_id, error = %e, "aggregate: could not forget a discarded group");
            }
            return;
        }
        locked(&self.delivering).insert(c.completion_id.clone());
        let result = self.parts.steps.process(c.exchange).await;
        let confirm = match &result {
            Ok(_) => true,
            Err(e) => {
                warn!(route_id = %self.route_id, step = %self.step_name, completed_by = %c.by, error = %e, "aggregate: the steps failed on a completed group");
                !self.options.use_recovery
            }
        };
        if confirm {
            if let Err(e) = self.repository.confirm(&c.completion_id).await {
                warn!(route_id = %self.route_id, error = %e, "aggregate: could not confirm a delivered group; recovery may deliver it again");
            }
        }
        locked(&self.delivering).remove(&c.completion_id);
    }

    /// One recovery pass: redelivers unconfirmed completed groups, or sends them to the
    /// dead letter once their attempts are exhausted.
    pub(crate) async fn recover(&self) -> Result<(), CamelError> {
        let pending = self
            .repository
            .unconfirmed(self.options.recovery_interval)
            .await?;
        for g in pending {
            if locked(&self.delivering).contains(&g.completion_id) {
                continue;
            }
            let max = self.options.maximum_redeliveries;
            let mut exchange = g.exchange;
            if max > 0 && g.attempts >= max {
                warn!(route_id = %self.route_id, key = %g.key, attempts = g.attempts, "aggregate: recovery attempts exhausted");
                if let Some(dl) = &self.parts.dead_letter {
                    if let Err(e) = dl.process(exchange).await {
                        warn!(route_id = %self.route_id, error = %e, "aggregate: the dead letter refused a group; kept for the next pass");
                        continue;
                    }
                }
                self.repository.confirm(&g.completion_id).await?;
                continue;
            }
            self.repository.record_attempt(&g.completion_id).await?;
            exchange.properties.insert("CamelRedelivered", true);
            exchange
                .properties
                .insert("CamelRedeliveryCounter", i64::from(g.attempts) + 1);
            debug!(route_id = %self.route_id, key = %g.key, "aggregate: recovering a completed group");
            self.deliver(Completion {
                completion_id: g.completion_id,
                exchange,
                by: CompletedBy::Force,
            })
            .await;
        }
        Ok(())
    }
}
