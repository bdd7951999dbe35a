//! `do_try` / `do_catch` / `do_finally` (ADR 0052): a block that is its own error handler.
//!
//! A failure in the block goes to the closest `do_catch` whose `exception` list matches
//! (the rule of [`camel_api::error_kind`]) and whose `on_when` holds; its steps run on the
//! exchange as it entered the block, with the caught error readable as `${exception…}`,
//! and the route goes on with their result. A failure no catch takes fails the step (and
//! reaches the route's error handler). `do_finally` runs in every case, after the catch.
//!
//! ```
//! use camel_api::{BoxProcessor, CamelError, Exchange};
//! use camel_eip::try_catch::{Catch, DoTry};
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let block = BoxProcessor::sync(|_| Err(CamelError::user("java.io.IOException", "disk")));
//! let caught = BoxProcessor::sync(|mut ex: Exchange| { ex.message.body = "saved".into(); Ok(ex) });
//! let t = DoTry::new(block).catch(Catch::new(vec!["IOException".into()], caught));
//! let out = BoxProcessor::new(t).process(Exchange::default()).await.unwrap();
//! assert_eq!(out.message.body, "saved".into());
//! # }
//! ```

use std::sync::Arc;

use camel_api::error_kind as names;
use camel_api::{BoxPredicate, BoxProcessor, CamelError, Exchange, Process, ProcessorFuture};

/// One `do_catch`.
#[derive(Debug, Clone)]
pub struct Catch {
    exceptions: Vec<String>,
    on_when: Option<BoxPredicate>,
    steps: BoxProcessor,
}

impl Catch {
    /// A catch of the listed kinds or Java class names running `steps`.
    pub fn new(exceptions: Vec<String>, steps: BoxProcessor) -> Self {
        Catch {
            exceptions,
            on_when: None,
            steps,
        }
    }

    /// Only when `predicate` holds on the failed exchange.
    pub fn on_when(mut self, predicate: BoxPredicate) -> Self {
        self.on_when = Some(predicate);
        self
    }
}

/// The `do_try` step.
#[derive(Debug, Clone)]
pub struct DoTry {
    block: BoxProcessor,
    catches: Arc<[Catch]>,
    finally: Option<BoxProcessor>,
}

impl DoTry {
    /// A try block with no catch yet.
    pub fn new(block: BoxProcessor) -> Self {
        DoTry {
            block,
            catches: Arc::from(Vec::new()),
            finally: None,
        }
    }

    /// Adds a `do_catch` (declaration order breaks ties between equally close ones).
    pub fn catch(mut self, c: Catch) -> Self {
        let mut all = self.catches.to_vec();
        all.push(c);
        self.catches = all.into();
        self
    }

    /// Sets the `do_finally` steps.
    pub fn finally(mut self, steps: BoxProcessor) -> Self {
        self.finally = Some(steps);
        self
    }

    async fn failed(self, saved: Exchange, error: CamelError) -> Result<Exchange, CamelError> {
        let error = Arc::new(error);
        let mut ex = saved;
        ex.set_caught_error(Some(error.clone()));
        ex.properties
            .insert(names::EXCEPTION_CAUGHT, error.to_string());
        ex.properties
            .insert(names::EXCEPTION_KIND, error.kind_name().to_string());
        let eligible: Vec<&Catch> = self
            .catches
            .iter()
            .filter(|c| {
                c.on_when
                    .as_ref()
                    .is_none_or(|p| p.matches(&ex).unwrap_or(false))
            })
            .collect();
        let lists = eligible
            .iter()
            .map(|c| c.exceptions.iter().map(String::as_str));
        let outcome = match camel_api::error_kind::closest(&error, lists) {
            Some(i) => eligible[i].steps.process(ex.clone()).await,
            None => Err((*error).clone()),
        };
        self.run_finally(outcome, ex).await
    }

    /// Runs `do_finally` after `outcome`; on a failure it runs on `fallback` (the failed
    /// exchange) and the failure stands unless the finally block fails too.
    async fn run_finally(
        &self,
        outcome: Result<Exchange, CamelError>,
        fallback: Exchange,
    ) -> Result<Exchange, CamelError> {
        let Some(finally) = &self.finally else {
            return outcome;
        };
        match outcome {
            Ok(ex) => finally.process(ex).await,
            Err(e) => {
                finally.process(fallback).await?;
                Err(e)
            }
        }
    }
}

impl Process for DoTry {
    fn process(&self, ex: Exchange) -> ProcessorFuture {
        let saved = ex.clone();
        match self.block.process(ex) {
            ProcessorFuture::Ready(Some(Err(e))) => {
                ProcessorFuture::boxed(self.clone().failed(saved, e))
            }
            ProcessorFuture::Pending(f) => {
                let this = self.clone();
                ProcessorFuture::boxed(async move {
                    match f.await {
                        Ok(ex) => this.run_finally(Ok(ex), saved).await,
                        Err(e) => this.failed(saved, e).await,
                    }
                })
            }
            ProcessorFuture::Ready(Some(Ok(ex))) => match &self.finally {
                None => ProcessorFuture::ready(Ok(ex)),
                Some(f) => f.process(ex),
            },
            done => done,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use camel_api::{Body, Predicate};

    use super::*;

    fn recorder(tag: &'static str, log: &Arc<Mutex<Vec<String>>>) -> BoxProcessor {
        let log = log.clone();
        BoxProcessor::sync(move |ex: Exchange| {
            let seen = ex.caught_error().map(|e| e.kind_name().to_string());
            log.lock()
                .unwrap()
                .push(format!("{tag}:{}", seen.unwrap_or_default()));
            Ok(ex)
        })
    }

    fn failing(kind: &'static str) -> BoxProcessor {
        BoxProcessor::sync(move |_| Err(CamelError::user(kind, "x")))
    }

    #[derive(Debug)]
    struct BodyIs(&'static str);
    impl Predicate for BodyIs {
        fn matches(&self, ex: &Exchange) -> Result<bool, CamelError> {
            Ok(ex.message.body == Body::from(self.0))
        }
    }

    #[tokio::test]
    async fn the_closest_catch_runs_then_finally() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let t = DoTry::new(failing("java.io.FileNotFoundException"))
            .catch(Catch::new(
                vec!["java.lang.Exception".into()],
                recorder("any", &log),
            ))
            .catch(Catch::new(
                vec!["FileNotFoundException".into()],
                recorder("exact", &log),
            ))
            .finally(recorder("finally", &log));
        BoxProcessor::new(t)
            .process(Exchange::default())
            .await
            .unwrap();
        assert_eq!(
            *log.lock().unwrap(),
            [
                "exact:FileNotFoundException",
                "finally:FileNotFoundException"
            ]
        );
    }

    #[tokio::test]
    async fn uncaught_failures_still_run_finally_and_fail() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let t = DoTry::new(failing("Boom"))
            .catch(
                Catch::new(vec!["Boom".into()], recorder("when", &log))
                    .on_when(Arc::new(BodyIs("yes"))),
            )
            .finally(recorder("finally", &log));
        let p = BoxProcessor::new(t);
        let out = p.process(Exchange::new("no")).await;
        assert_eq!(out.unwrap_err().kind_name(), "Boom");
        assert_eq!(*log.lock().unwrap(), ["finally:Boom"]);
        log.lock().unwrap().clear();
        p.process(Exchange::new("yes")).await.unwrap();
        assert_eq!(*log.lock().unwrap(), ["when:Boom", "finally:Boom"]);
    }

    #[tokio::test]
    async fn success_runs_only_finally_and_nested_tries_catch_inside_out() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let inner = DoTry::new(failing("Inner"))
            .catch(Catch::new(vec!["Other".into()], recorder("inner", &log)));
        let outer = DoTry::new(BoxProcessor::new(inner))
            .catch(Catch::new(vec!["Inner".into()], recorder("outer", &log)))
            .finally(recorder("finally", &log));
        BoxProcessor::new(outer)
            .process(Exchange::default())
            .await
            .unwrap();
        assert_eq!(*log.lock().unwrap(), ["outer:Inner", "finally:Inner"]);
        log.lock().unwrap().clear();
        let ok = DoTry::new(BoxProcessor::identity()).finally(recorder("finally", &log));
        BoxProcessor::new(ok)
            .process(Exchange::default())
            .await
            .unwrap();
        assert_eq!(*log.lock().unwrap(), ["finally:"]);
    }
}
