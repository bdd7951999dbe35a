//! The unit of work of one exchange: work a step defers until the route is done with the
//! exchange, told whether it failed (Camel's `UnitOfWork` synchronizations).
//!
//! An idempotent consumer with `completion_eager: false` (Camel's default) uses it: it
//! confirms the message id — or, when the exchange failed after its block, forgets it —
//! only once the whole route finished, so a failure later in the route also counts.
//!
//! The unit lives in a tokio task-local, opened by [`scoped`] around a route's pipeline.
//! A route called from another route in the same task (`direct:`) joins the caller's
//! unit, as in Camel. Work registered where no unit is open (a step in a spawned task, a
//! processor used outside a route) is refused by [`on_done`], and the caller completes at
//! once instead.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use camel_api::{BoxProcessor, CamelError, Exchange};
//! use camel_eip::unit_of_work::{on_done, scoped};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let log = seen.clone();
//! let step = BoxProcessor::sync(move |ex: Exchange| {
//!     let log = log.clone();
//!     let _ = on_done(move |failed| {
//!         Box::pin(async move { log.lock().unwrap().push(failed) })
//!     });
//!     Ok(ex)
//! });
//! let fail = BoxProcessor::sync(|_| Err(CamelError::processor("later")));
//! let route = scoped(camel_eip::pipeline::pipeline(vec![step, fail]));
//! assert!(route.process(Exchange::new("x")).await.is_err());
//! assert_eq!(*seen.lock().unwrap(), [true]);
//! # }
//! ```

use std::sync::{Arc, Mutex};

use camel_api::{BoxProcessor, CamelError, Exchange, Process, ProcessorFuture};
use futures::future::BoxFuture;

/// Deferred work: called once with `true` when the exchange failed.
pub type OnDone = Box<dyn FnOnce(bool) -> BoxFuture<'static, ()> + Send>;

#[derive(Default)]
struct Unit {
    on_done: Mutex<Vec<OnDone>>,
}

impl Unit {
    fn take(&self) -> Vec<OnDone> {
        // A push or a take is the whole critical section: a poisoned list is still whole.
        std::mem::take(&mut *self.on_done.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

tokio::task_local! {
    static UNIT: Arc<Unit>;
}

/// Defers `work` to the end of the current exchange's unit of work. Gives `work` back when
/// no unit is open here (see the module docs): the caller then does it at once.
pub fn on_done<F>(work: F) -> Result<(), F>
where
    F: FnOnce(bool) -> BoxFuture<'static, ()> + Send + 'static,
{
    match UNIT.try_with(Arc::clone) {
        Ok(unit) => {
            unit.on_done
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Box::new(work));
            Ok(())
        }
        Err(_) => Err(work),
    }
}

/// `route` with a unit of work per exchange: its deferred work runs, in the order it was
/// registered, after `route` finished and before the result is returned. Inside an open
/// unit (a `direct:` call from another route) it joins that unit instead.
pub fn scoped(route: BoxProcessor) -> BoxProcessor {
    BoxProcessor::new(Scoped(route)).named("unit_of_work")
}

struct Scoped(BoxProcessor);

impl Process for Scoped {
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        if UNIT.try_with(|_| ()).is_ok() {
            return self.0.process(exchange);
        }
        let unit = Arc::new(Unit::default());
        // A synchronous route does its work in `process`, so the unit is set there too.
        let run = UNIT.sync_scope(unit.clone(), || self.0.process(exchange));
        match run {
            ProcessorFuture::Ready(Some(result)) => {
                let work = unit.take();
                if work.is_empty() {
                    return ProcessorFuture::ready(result);
                }
                ProcessorFuture::boxed(finish(work, result))
            }
            pending => ProcessorFuture::boxed(UNIT.scope(unit.clone(), async move {
                let result = pending.await;
                finish(unit.take(), result).await
            })),
        }
    }
}

async fn finish(
    work: Vec<OnDone>,
    result: Result<Exchange, CamelError>,
) -> Result<Exchange, CamelError> {
    let failed = result.is_err();
    for w in work {
        w(failed).await;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recording(seen: &Arc<Mutex<Vec<bool>>>) -> BoxProcessor {
        let seen = seen.clone();
        BoxProcessor::from_fn(move |ex: Exchange| {
            let seen = seen.clone();
            async move {
                tokio::task::yield_now().await;
                let registered = on_done(move |failed| {
                    Box::pin(async move { seen.lock().unwrap().push(failed) })
                });
                assert!(registered.is_ok(), "a unit is open");
                Ok(ex)
            }
        })
    }

    #[tokio::test]
    async fn work_runs_once_at_the_end_with_the_outcome() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let ok = scoped(recording(&seen));
        ok.process(Exchange::new("x")).await.unwrap();
        assert_eq!(*seen.lock().unwrap(), [false]);
        let inner = scoped(recording(&seen));
        let fail = BoxProcessor::sync(|_| Err(CamelError::processor("later")));
        let nested = scoped(crate::pipeline::pipeline(vec![inner, fail]));
        assert!(nested.process(Exchange::new("x")).await.is_err());
        // The inner scope joined the outer unit: its work saw the whole route fail.
        assert_eq!(*seen.lock().unwrap(), [false, true]);
    }

    #[tokio::test]
    async fn without_a_unit_the_work_is_given_back() {
        assert!(on_done(|_| Box::pin(async {})).is_err());
    }
}
