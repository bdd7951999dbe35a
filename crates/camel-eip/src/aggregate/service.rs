//! The aggregator's intake and completion: one exchange in, its group updated in the
//! repository, completed groups delivered to the nested steps.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::{
    BoxExpression, BoxPredicate, BoxProcessor, CamelError, Exchange, Process, ProcessorFuture,
    Value,
};
use tokio::sync::{Notify, RwLock};
use tokio::time::Instant;
use tracing::{debug, warn};

use super::completion::{ClosedKeys, CompletedBy, Deadlines};
use super::names;
use super::repository::{MemoryAggregationRepository, RepositoryError, SharedRepository};
use crate::aggregation::SharedStrategy;

/// A write that keeps conflicting this many times in a row fails the exchange.
const MAX_CONFLICT_RETRIES: usize = 1000;

/// The aggregator's options, decoded from [`crate::config::Aggregate`].
#[derive(Clone, Debug, Default)]
pub struct AggregatorOptions {
    /// Complete at this many exchanges.
    pub completion_size: Option<usize>,
    /// Complete this long after a group's last exchange.
    pub completion_timeout: Option<Duration>,
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
    parts: AggregatorParts,
    pub(crate) repository: SharedRepository,
    /// Set when the repository is this step's own in-memory one (handed over on a swap).
    pub(crate) own_memory: Option<Arc<MemoryAggregationRepository>>,
    /// Serialises updates unless `optimistic_locking`.
    pub(crate) lock: tokio::sync::Mutex<()>,
    /// `true` while the step takes exchanges; an update holds a read guard, so the
    /// lifecycle's write guard waits for updates in progress.
    pub(crate) gate: RwLock<bool>,
    pub(crate) deadlines: Mutex<Deadlines>,
    /// Woken when a deadline earlier than any armed one is set.
    pub(crate) rearmed: Notify,
    closed: Mutex<ClosedKeys>,
    /// Exchanges aggregated in the current batch (`completion_from_batch_consumer`).
    batch_seen: AtomicUsize,
    /// Completion ids being delivered now (recovery leaves them alone).
    pub(crate) delivering: Mutex<HashSet<String>>,
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
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
            lock: tokio::sync::Mutex::new(()),
            gate: RwLock::new(true),
            deadlines: Mutex::new(Deadlines::default()),
            rearmed: Notify::new(),
            batch_seen: AtomicUsize::new(0),
            delivering: Mutex::new(HashSet::new()),
        }
    }

    fn correlation_key(&self, ex: &Exchange) -> Result<Option<String>, CamelError> {
        let value = self.parts.correlation.evaluate(ex)?;
        let key = match value {
            Value::Null => None,
            Value::Json(j) if j.is_null() => None,
            other => other
                .as_str()
                .map(str::to_string)
                .or_else(|| Some(other.to_json().to_string())),
        };
        Ok(key.filter(|k| !k.is_empty()))
    }

    /// Takes one exchange into its group; returns it unchanged.
    pub(crate) async fn accept(self: Arc<Self>, ex: Exchange) -> Result<Exchange, CamelError> {
        let Some(key) = self.correlation_key(&ex)? else {
            if self.options.ignore_invalid_correlation_keys {
                debug!(route_id = %self.route_id, "aggregate: no correlation key, exchange passed on");
                return Ok(ex);
            }
            return Err(CamelError::user(
                "CamelExchangeException",
                format!(
                    "aggregate `{}`: the correlation expression gave no key (set ignore_invalid_correlation_keys to pass such exchanges on)",
                    self.step_name
                ),
            ));
        };
        if self.options.close_correlation_key_on_completion.is_some()
            && locked(&self.closed).contains(&key)
        {
            return Err(CamelError::user(
                "ClosedCorrelationKeyException",
                format!("aggregate: correlation key `{key}` is closed (its group completed)"),
            ));
        }
        let size_limit = match &self.parts.completion_size {
            Some(e) => e
                .evaluate(&ex)?
                .as_i64()
                .and_then(|n| usize::try_from(n).ok())
                .or(self.options.completion_size),
            None => self.options.completion_size,
        };
        let timeout = match &self.parts.completion_timeout {
            Some(e) => e
                .evaluate(&ex)?
                .as_i64()
                .and_then(|n| u64::try_from(n).ok())
                .map(Duration::from_millis)
                .or(self.options.completion_timeout),
            None => self.options.completion_timeout,
        };
        let eager_done = match (
            &self.parts.completion_predicate,
            self.options.eager_check_completion,
        ) {
            (Some(p), true) => p.matches(&ex)?,
            _ => false,
        };
        let batch_size = if self.options.completion_from_batch_consumer {
            ex.property("CamelBatchSize")
                .or_else(|| ex.header("CamelBatchSize"))
                .and_then(Value::as_i64)
        } else {
            None
        };

        let gate = self.gate.read().await;
        if !*gate {
            return Err(CamelError::Stopping(
                format!("aggregate `{}` is stopping", self.step_name).into(),
            ));
        }
        let guard = if self.options.optimistic_locking {
            None
        } else {
            Some(self.lock.lock().await)
        };
        let mut out = Vec::new();
        let mut retries = 0;
        let new_group = loop {
            let stored = if guard.is_some() {
                self.repository.get_for_update(&key).await?
            } else {
                self.repository.get(&key).await?
            };
            let new_group = stored.is_none();
            let (old, version) = match stored {
                Some(s) => (Some(s.exchange), Some(s.version)),
                None => (None, None),
            };
            let old_size = old
                .as_ref()
                .and_then(|o| o.property(names::SIZE))
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let mut aggregated = match self.parts.strategy.aggregate(old, ex.clone()) {
                Ok(a) => a,
                Err(e) if self.options.discard_on_aggregation_failure => {
                    warn!(route_id = %self.route_id, key = %key, error = %e, "aggregation failed; the group is discarded");
                    if let Some(c) = self.take(&key, CompletedBy::Predicate).await? {
                        self.repository.confirm(&c.completion_id).await?;
                    }
                    return Ok(ex);
                }
                Err(e) => return Err(e),
            };
            let size = old_size + 1;
            aggregated.properties.insert(names::SIZE, size);
            aggregated
                .properties
                .insert(names::CORRELATION_KEY, key.as_str());
            let lazy_done = match (
                &self.parts.completion_predicate,
                self.options.eager_check_completion,
            ) {
                (Some(p), false) => p.matches(&aggregated)?,
                _ => false,
            };
            let by = if eager_done || lazy_done {
                Some(CompletedBy::Predicate)
            } else if size_limit.is_some_and(|n| size as usize >= n) {
                Some(CompletedBy::Size)
            } else {
                None
            };
            let written = match by {
                Some(by) => {
                    let c = self.finish(aggregated, by);
                    match self
                        .repository
                        .complete(&key, version, &c.completion_id, &c.exchange)
                        .await
                    {
                        Ok(()) => {
                            self.closed_now(&key);
                            out.push(c);
                            Ok(())
                        }
                        Err(e) => Err(e),
                    }
                }
                None => match self.repository.put(&key, &aggregated, version).await {
                    Ok(_) => {
                        if let Some(t) = timeout {
                            self.arm(&key, Instant::now() + t);
                        }
                        Ok(())
                    }
                    Err(e) => Err(e),
                },
            };
            match written {
                Ok(()) => break new_group,
                Err(RepositoryError::Conflict) if retries < MAX_CONFLICT_RETRIES => {
                    retries += 1;
                    tokio::task::yield_now().await;
                }
                Err(RepositoryError::Conflict) => {
                    return Err(CamelError::processor(format!(
                        "aggregate: group `{key}` kept changing under {retries} attempts"
                    )))
                }
                Err(RepositoryError::Failed(e)) => return Err(e),
            }
        };
        if new_group && self.options.completion_on_new_correlation_group {
            for other in self.repository.keys().await? {
                if other != key {
                    out.extend(self.take(&other, CompletedBy::NewCorrelationGroup).await?);
                }
            }
        }
        if let Some(batch) = batch_size {
            let seen = self.batch_seen.fetch_add(1, Ordering::AcqRel) + 1;
            if seen as i64 >= batch {
                self.batch_seen.store(0, Ordering::Release);
                for k in self.repository.keys().await? {
                    out.extend(self.take(&k, CompletedBy::Consumer).await?);
                }
            }
        }
        drop(guard);
        drop(gate);
        for c in out {
            self.deliver(c).await;
        }
        Ok(ex)
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

    fn finish(&self, mut exchange: Exchange, by: CompletedBy) -> Completion {
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

    fn closed_now(&self, key: &str) {
        self.disarm(key);
        if self.options.close_correlation_key_on_completion.is_some() {
            locked(&self.closed).close(key);
        }
    }

    fn arm(&self, key: &str, at: Instant) {
        let mut d = locked(&self.deadlines);
        let before = d.next();
        d.arm(key, at);
        if before.is_none_or(|b| at < b) {
            drop(d);
            self.rearmed.notify_one();
        }
    }

    fn disarm(&self, key: &str) {
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
        let at = Instant::now() + t;
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

/// The intake processor.
pub(crate) struct Intake(pub(crate) Arc<Inner>);

impl Process for Intake {
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        ProcessorFuture::boxed(self.0.clone().accept(exchange))
    }
}
