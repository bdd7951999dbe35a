//! The aggregator's intake: one exchange in, its group updated, the exchange passed on
//! unchanged.
//!
//! Two paths give the same result. The key and the per-exchange options are read once,
//! first (an [`Admission`]). Then, when the step keeps its groups in its own in-memory
//! repository with pessimistic locking and no option that lists every group per exchange,
//! the *synchronous* path tries the gate and the update lock without waiting; if both are
//! free it lends the group, folds the exchange in and writes it back without a future, and
//! the processor answers [`ProcessorFuture::Ready`] (a completed group is then delivered in
//! a future, as on the other path). Anything else — a database or shared repository,
//! `optimistic_locking`, `completion_on_new_correlation_group`,
//! `completion_from_batch_consumer`, a gate or lock that someone holds or waits for —
//! takes the *asynchronous* path, which waits for the gate and the lock in turn and redoes
//! an update whose version conflicted.
//!
//! Invariant: both paths change a group only while holding the gate's read guard and
//! (unless locking is optimistic) the update lock, so the lifecycle's stop and hand-over
//! and the timer's completions see whole updates only.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use camel_api::{CamelError, Exchange, Process, ProcessorFuture, Value};
use tokio::time::Instant;
use tracing::{debug, warn};

use super::completion::CompletedBy;
use super::names;
use super::repository::{GroupChange, RepositoryError};
use super::service::{locked, Completion, Inner, MAX_CONFLICT_RETRIES};

/// What the options say about one exchange, read before its group is touched.
pub(super) struct Admission {
    key: Arc<str>,
    size_limit: Option<usize>,
    timeout: Option<Duration>,
    eager_done: bool,
    batch_size: Option<i64>,
}

/// What folding one exchange into its group leads to.
enum Fold {
    /// The group stays open with this aggregate.
    Open(Exchange),
    /// The group completed.
    Complete(Completion),
    /// The strategy failed under `discard_on_aggregation_failure`: the group is dropped.
    Discarded,
}

/// A [`Fold`] once the repository has the aggregate.
enum Folded {
    Open,
    Completed(Completion),
    Discarded,
}

impl Inner {
    /// The correlation key; text values are shared, not copied.
    fn correlation_key(&self, ex: &Exchange) -> Result<Option<Arc<str>>, CamelError> {
        let key = match self.parts.correlation.evaluate(ex)? {
            Value::Null => None,
            Value::Json(j) if j.is_null() => None,
            Value::Text(t) => Some(t),
            other => Some(Arc::from(
                other
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| other.to_json().to_string()),
            )),
        };
        Ok(key.filter(|k| !k.is_empty()))
    }

    /// Reads the key and the per-exchange options. `None`: the exchange has no key and is
    /// passed on (`ignore_invalid_correlation_keys`).
    fn admit(&self, ex: &Exchange) -> Result<Option<Admission>, CamelError> {
        let Some(key) = self.correlation_key(ex)? else {
            if self.options.ignore_invalid_correlation_keys {
                debug!(route_id = %self.route_id, "aggregate: no correlation key, exchange passed on");
                return Ok(None);
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
                .evaluate(ex)?
                .as_i64()
                .and_then(|n| usize::try_from(n).ok())
                .or(self.options.completion_size),
            None => self.options.completion_size,
        };
        let timeout = match &self.parts.completion_timeout {
            Some(e) => e
                .evaluate(ex)?
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
            (Some(p), true) => p.matches(ex)?,
            _ => false,
        };
        let batch_size = if self.options.completion_from_batch_consumer {
            ex.property("CamelBatchSize")
                .or_else(|| ex.header("CamelBatchSize"))
                .and_then(Value::as_i64)
        } else {
            None
        };
        Ok(Some(Admission {
            key,
            size_limit,
            timeout,
            eager_done,
            batch_size,
        }))
    }

    /// Folds `ex` into `old` (its group so far, `None` for a new group) and decides whether
    /// the group completes.
    fn fold(
        &self,
        a: &Admission,
        old: Option<Exchange>,
        ex: &Exchange,
    ) -> Result<Fold, CamelError> {
        let old_size = old
            .as_ref()
            .and_then(|o| o.property(names::SIZE))
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let mut aggregated = match self.parts.strategy.aggregate_borrowed(old, ex) {
            Ok(aggregated) => aggregated,
            Err(e) if self.options.discard_on_aggregation_failure => {
                warn!(route_id = %self.route_id, key = %a.key, error = %e, "aggregation failed; the group is discarded");
                return Ok(Fold::Discarded);
            }
            Err(e) => return Err(e),
        };
        let size = old_size + 1;
        aggregated.properties.set(&self.size_name, Value::Int(size));
        aggregated
            .properties
            .set(&self.key_name, Value::Text(a.key.clone()));
        let lazy_done = match (
            &self.parts.completion_predicate,
            self.options.eager_check_completion,
        ) {
            (Some(p), false) => p.matches(&aggregated)?,
            _ => false,
        };
        Ok(if a.eager_done || lazy_done {
            Fold::Complete(self.finish(aggregated, CompletedBy::Predicate))
        } else if a.size_limit.is_some_and(|n| size as usize >= n) {
            Fold::Complete(self.finish(aggregated, CompletedBy::Size))
        } else {
            Fold::Open(aggregated)
        })
    }

    fn stopping(&self) -> CamelError {
        CamelError::Stopping(format!("aggregate `{}` is stopping", self.step_name).into())
    }

    /// The synchronous path (see the module docs). `None` when it does not apply now, with
    /// nothing changed; otherwise the outcome and the group to deliver, if it completed.
    fn accept_now(
        &self,
        a: &Admission,
        ex: &Exchange,
    ) -> Option<Result<Option<Completion>, CamelError>> {
        let memory = self.sync_memory.as_ref()?;
        let gate = self.gate.try_read().ok()?;
        if !*gate {
            return Some(Err(self.stopping()));
        }
        let _guard = self.lock.try_lock().ok()?;
        let folded = memory.change(&a.key, |old| match self.fold(a, old, ex) {
            Ok(Fold::Open(aggregated)) => (GroupChange::Open(aggregated), Ok(Folded::Open)),
            Ok(Fold::Complete(c)) => {
                let kept = GroupChange::Completed {
                    completion_id: c.completion_id.clone(),
                    exchange: c.exchange.clone(),
                };
                (kept, Ok(Folded::Completed(c)))
            }
            Ok(Fold::Discarded) => (GroupChange::Dropped, Ok(Folded::Discarded)),
            // The strategy had the group: it is gone, as on the asynchronous path.
            Err(e) => (GroupChange::Dropped, Err(e)),
        });
        Some(folded.map(|folded| match folded {
            Folded::Open => {
                if let Some(t) = a.timeout {
                    self.arm(&a.key, Instant::now() + t);
                }
                None
            }
            Folded::Completed(c) => {
                self.closed_now(&a.key);
                Some(c)
            }
            Folded::Discarded => {
                self.disarm(&a.key);
                None
            }
        }))
    }

    /// The asynchronous path (see the module docs).
    async fn accept(self: Arc<Self>, ex: Exchange, a: Admission) -> Result<Exchange, CamelError> {
        let gate = self.gate.read().await;
        if !*gate {
            return Err(self.stopping());
        }
        let guard = if self.options.optimistic_locking {
            None
        } else {
            Some(self.lock.lock().await)
        };
        let key = &*a.key;
        let mut out = Vec::new();
        let mut retries = 0;
        let new_group = loop {
            let stored = if guard.is_some() {
                self.repository.get_for_update(key).await?
            } else {
                self.repository.get(key).await?
            };
            let new_group = stored.is_none();
            let version = stored.as_ref().map(|s| s.version);
            let written = match self.fold(&a, stored.map(|s| s.exchange), &ex)? {
                Fold::Discarded => {
                    if let Some(c) = self.take(key, CompletedBy::Predicate).await? {
                        self.repository.confirm(&c.completion_id).await?;
                    }
                    return Ok(ex);
                }
                Fold::Complete(c) => self
                    .repository
                    .complete(key, version, &c.completion_id, &c.exchange)
                    .await
                    .map(|()| {
                        self.closed_now(key);
                        out.push(c);
                    }),
                Fold::Open(aggregated) => {
                    self.repository
                        .put(key, &aggregated, version)
                        .await
                        .map(|_| {
                            if let Some(t) = a.timeout {
                                self.arm(key, Instant::now() + t);
                            }
                        })
                }
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
        if let Some(batch) = a.batch_size {
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
}

/// The intake processor.
pub(crate) struct Intake(pub(crate) Arc<Inner>);

impl Process for Intake {
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        let inner = &self.0;
        let admission = match inner.admit(&exchange) {
            Ok(Some(a)) => a,
            Ok(None) => return ProcessorFuture::ready(Ok(exchange)),
            Err(e) => return ProcessorFuture::ready(Err(e)),
        };
        match inner.accept_now(&admission, &exchange) {
            Some(Ok(None)) => ProcessorFuture::ready(Ok(exchange)),
            Some(Ok(Some(completed))) => {
                let inner = inner.clone();
                ProcessorFuture::boxed(async move {
                    inner.deliver(completed).await;
                    Ok(exchange)
                })
            }
            Some(Err(e)) => ProcessorFuture::ready(Err(e)),
            None => ProcessorFuture::boxed(inner.clone().accept(exchange, admission)),
        }
    }
}

#[cfg(test)]
mod tests {
    use camel_api::{BoxProcessor, Expression};

    use super::*;
    use crate::aggregate::{AggregatorOptions, AggregatorParts};
    use crate::aggregation::builtin;

    #[derive(Debug)]
    struct Key;

    impl Expression for Key {
        fn evaluate(&self, ex: &Exchange) -> Result<Value, CamelError> {
            Ok(ex.header("key").cloned().unwrap_or_default())
        }
    }

    fn intake(optimistic_locking: bool) -> (Intake, Arc<Inner>) {
        let options = AggregatorOptions {
            completion_size: Some(3),
            optimistic_locking,
            ..Default::default()
        };
        let parts = AggregatorParts {
            correlation: Arc::new(Key),
            strategy: builtin("grouped_body").unwrap(),
            completion_size: None,
            completion_timeout: None,
            completion_predicate: None,
            repository: None,
            steps: BoxProcessor::identity(),
            dead_letter: None,
        };
        let inner = Arc::new(Inner::new("r", "aggregate", options, parts));
        (Intake(inner.clone()), inner)
    }

    fn ex() -> Exchange {
        Exchange::new("x").with_header("key", "k")
    }

    #[tokio::test]
    async fn the_synchronous_path_runs_only_when_nothing_waits() {
        let (sync, inner) = intake(false);
        assert!(matches!(
            sync.process(ex()),
            ProcessorFuture::Ready(Some(Ok(_)))
        ));
        // The update lock held (by the timer task, say): the asynchronous path waits.
        let held = inner.lock.lock().await;
        let waiting = sync.process(ex());
        assert!(matches!(waiting, ProcessorFuture::Pending(_)));
        drop(held);
        waiting.await.unwrap();
        let own = inner.own_memory.as_ref().unwrap();
        assert_eq!(own.open_groups(), 1, "both exchanges are in one group");

        let (optimistic, _) = intake(true);
        let out = optimistic.process(ex());
        assert!(matches!(out, ProcessorFuture::Pending(_)));
        out.await.unwrap();
    }
}
