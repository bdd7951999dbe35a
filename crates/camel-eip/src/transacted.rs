//! Transacted: runs nested steps inside one database transaction, committed when they
//! succeed and rolled back when one fails (the exchange then fails with that step's
//! error). Producers inside that write to the same database join the transaction through
//! [`camel_api::transaction::current`]. A `transacted` nested in another on the same
//! database joins the outer transaction instead of opening its own.
//!
//! An exchange cut off while inside (a route stopped past its deadline) drops the open
//! transaction, which the database rolls back.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};

use camel_api::transaction::{self, TransactionManager};
use camel_api::{BoxProcessor, CamelError, Exchange, Process, ProcessorFuture};
use tower::{Layer, Service};

use crate::layer::EipFuture;

/// Runs `steps` in a transaction of `manager`.
pub fn transacted(manager: Arc<dyn TransactionManager>, steps: BoxProcessor) -> BoxProcessor {
    BoxProcessor::new(Transacted {
        manager,
        inner: steps,
    })
    .named("transacted")
}

/// The transacted service: `inner` runs inside a transaction of `manager`.
#[derive(Debug, Clone)]
pub struct Transacted<S = BoxProcessor> {
    manager: Arc<dyn TransactionManager>,
    inner: S,
}

impl<S> Transacted<S> {
    /// True when the exchange already runs in a transaction on this database, which it
    /// then joins.
    fn joins_current(&self) -> bool {
        transaction::current().is_some_and(|t| t.key() == self.manager.key())
    }
}

/// Begins a transaction, runs `call` inside its scope, and commits or rolls back.
///
/// `call` starts the wrapped steps; it runs inside the scope because synchronous steps do
/// their work when called, not when polled.
async fn in_transaction<F, Fut>(
    manager: Arc<dyn TransactionManager>,
    call: F,
) -> Result<Exchange, CamelError>
where
    F: FnOnce() -> Fut + Send,
    Fut: Future<Output = Result<Exchange, CamelError>> + Send,
{
    let tx = manager.begin().await?;
    let result = transaction::scope(tx.clone(), async move { call().await }).await;
    match result {
        Ok(ex) => {
            tx.commit().await?;
            Ok(ex)
        }
        Err(e) => {
            if let Err(rollback) = tx.rollback().await {
                tracing::warn!(error = %rollback, "rollback failed after a step failed");
            }
            Err(e)
        }
    }
}

impl Process for Transacted<BoxProcessor> {
    fn process(&self, ex: Exchange) -> ProcessorFuture {
        if self.joins_current() {
            return self.inner.process(ex);
        }
        let steps = self.inner.clone();
        ProcessorFuture::boxed(in_transaction(self.manager.clone(), move || {
            steps.process(ex)
        }))
    }
}

impl<S> Service<Exchange> for Transacted<S>
where
    S: Service<Exchange, Response = Exchange, Error = CamelError> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Exchange;
    type Error = CamelError;
    type Future = EipFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), CamelError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, ex: Exchange) -> Self::Future {
        if self.joins_current() {
            return EipFuture::inner(self.inner.call(ex));
        }
        let mut ready = crate::layer::take_ready(&mut self.inner);
        EipFuture::step(ProcessorFuture::boxed(in_transaction(
            self.manager.clone(),
            move || ready.call(ex),
        )))
    }
}

/// Wraps a service in a [`Transacted`].
#[derive(Debug, Clone)]
pub struct TransactedLayer {
    manager: Arc<dyn TransactionManager>,
}

impl TransactedLayer {
    /// A layer running the inner service in a transaction of `manager`.
    pub fn new(manager: Arc<dyn TransactionManager>) -> Self {
        TransactedLayer { manager }
    }
}

impl<S> Layer<S> for TransactedLayer {
    type Service = Transacted<S>;

    fn layer(&self, inner: S) -> Transacted<S> {
        Transacted {
            manager: self.manager.clone(),
            inner,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use camel_api::transaction::Transaction;
    use futures::future::BoxFuture;

    use super::*;
    use camel_api::CamelError;

    /// Records what happened to each transaction it began.
    #[derive(Debug, Default)]
    struct Recorder {
        log: Arc<Mutex<Vec<String>>>,
    }

    #[derive(Debug)]
    struct Tx {
        n: usize,
        log: Arc<Mutex<Vec<String>>>,
    }

    impl Transaction for Tx {
        fn key(&self) -> &str {
            "db"
        }
        fn commit(self: Arc<Self>) -> BoxFuture<'static, Result<(), CamelError>> {
            self.log.lock().unwrap().push(format!("commit {}", self.n));
            Box::pin(async { Ok(()) })
        }
        fn rollback(self: Arc<Self>) -> BoxFuture<'static, Result<(), CamelError>> {
            self.log
                .lock()
                .unwrap()
                .push(format!("rollback {}", self.n));
            Box::pin(async { Ok(()) })
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    impl TransactionManager for Recorder {
        fn key(&self) -> &str {
            "db"
        }
        fn begin(&self) -> BoxFuture<'static, Result<Arc<dyn Transaction>, CamelError>> {
            let log = self.log.clone();
            Box::pin(async move {
                let n = {
                    let mut l = log.lock().unwrap();
                    l.push("begin".into());
                    l.iter().filter(|e| *e == "begin").count()
                };
                Ok(Arc::new(Tx { n, log }) as Arc<dyn Transaction>)
            })
        }
    }

    /// A step that notes which transaction it ran in, and fails on a body of "fail".
    fn probe(log: Arc<Mutex<Vec<String>>>) -> BoxProcessor {
        BoxProcessor::sync(move |ex: Exchange| {
            let seen =
                transaction::current().and_then(|t| t.as_any().downcast_ref::<Tx>().map(|t| t.n));
            log.lock().unwrap().push(format!("step in {seen:?}"));
            if ex.message.body.as_text().as_deref() == Some("fail") {
                return Err(CamelError::processor("failed on purpose"));
            }
            Ok(ex)
        })
    }

    #[tokio::test]
    async fn commits_on_success_and_rolls_back_on_failure() {
        let manager = Arc::new(Recorder::default());
        let log = manager.log.clone();
        let step = transacted(manager, probe(log.clone()));
        step.process(Exchange::new("ok")).await.unwrap();
        let err = step.process(Exchange::new("fail")).await.unwrap_err();
        assert!(err.to_string().contains("failed on purpose"));
        assert_eq!(
            *log.lock().unwrap(),
            [
                "begin",
                "step in Some(1)",
                "commit 1",
                "begin",
                "step in Some(2)",
                "rollback 2"
            ]
        );
        assert!(
            transaction::current().is_none(),
            "the scope ends with the step"
        );
    }

    #[tokio::test]
    async fn a_nested_transacted_on_the_same_database_joins_the_outer_one() {
        let manager = Arc::new(Recorder::default());
        let log = manager.log.clone();
        let inner = transacted(manager.clone(), probe(log.clone()));
        let outer = transacted(manager, inner);
        outer.process(Exchange::new("ok")).await.unwrap();
        assert_eq!(
            *log.lock().unwrap(),
            ["begin", "step in Some(1)", "commit 1"]
        );
    }
}
