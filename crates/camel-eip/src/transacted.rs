//! Transacted: runs nested steps inside one database transaction, committed when they
//! succeed and rolled back when one fails (the exchange then fails with that step's
//! error). Producers inside that write to the same database join the transaction through
//! [`camel_api::transaction::current`]. A `transacted` nested in another on the same
//! database joins the outer transaction instead of opening its own.
//!
//! An exchange cut off while inside (a route stopped past its deadline) drops the open
//! transaction, which the database rolls back.

use std::sync::Arc;

use camel_api::transaction::{self, TransactionManager};
use camel_api::{BoxProcessor, Exchange, Process, ProcessorFuture};

/// Runs `steps` in a transaction of `manager`.
pub fn transacted(manager: Arc<dyn TransactionManager>, steps: BoxProcessor) -> BoxProcessor {
    BoxProcessor::new(Transacted { manager, steps }).named("transacted")
}

#[derive(Debug)]
struct Transacted {
    manager: Arc<dyn TransactionManager>,
    steps: BoxProcessor,
}

impl Process for Transacted {
    fn process(&self, ex: Exchange) -> ProcessorFuture {
        if transaction::current().is_some_and(|t| t.key() == self.manager.key()) {
            return self.steps.process(ex);
        }
        let begin = self.manager.begin();
        let steps = self.steps.clone();
        ProcessorFuture::boxed(async move {
            let tx = begin.await?;
            // `process` runs synchronous steps at once, so it must be called inside the
            // scope, not before it.
            let result =
                transaction::scope(tx.clone(), async move { steps.process(ex).await }).await;
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
        })
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
