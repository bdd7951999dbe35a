//! `on_completion` (ADR 0052): steps run once a route is done with an exchange, on a copy
//! of it, when it completed (`on_complete_only`), failed (`on_failure_only`), or either.
//!
//! `mode: AfterConsumer` (Camel's default) runs them in their own task after the route
//! has answered its consumer; `BeforeConsumer` runs them before the answer. Their own
//! failure is logged and never changes the route's outcome.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use camel_api::{BoxProcessor, Exchange};
//! use camel_eip::on_completion::{with_completions, Mode, OnCompletion, When};
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let seen = Arc::new(Mutex::new(0));
//! let s = seen.clone();
//! let done = BoxProcessor::sync(move |ex| { *s.lock().unwrap() += 1; Ok(ex) });
//! let route = with_completions(
//!     BoxProcessor::identity(),
//!     vec![OnCompletion::new(done, When::Complete, Mode::BeforeConsumer)],
//! );
//! route.process(Exchange::default()).await.unwrap();
//! assert_eq!(*seen.lock().unwrap(), 1);
//! # }
//! ```

use std::sync::Arc;

use camel_api::error_kind as names;
use camel_api::{BoxPredicate, BoxProcessor, CamelError, Exchange, Process, ProcessorFuture};

/// Which outcomes an `on_completion` runs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Completed or failed.
    Always,
    /// Completed only.
    Complete,
    /// Failed only.
    Failure,
}

/// When the steps run relative to the route's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// In their own task, after the answer (Camel's default).
    AfterConsumer,
    /// Before the answer.
    BeforeConsumer,
}

/// One `on_completion`.
#[derive(Debug, Clone)]
pub struct OnCompletion {
    steps: BoxProcessor,
    when: When,
    mode: Mode,
    on_when: Option<BoxPredicate>,
}

impl OnCompletion {
    /// Runs `steps` for the outcomes `when` names, in `mode`.
    pub fn new(steps: BoxProcessor, when: When, mode: Mode) -> Self {
        OnCompletion {
            steps,
            when,
            mode,
            on_when: None,
        }
    }

    /// Only when `predicate` holds on the finished exchange.
    pub fn on_when(mut self, predicate: BoxPredicate) -> Self {
        self.on_when = Some(predicate);
        self
    }

    fn applies(&self, failed: bool, ex: &Exchange) -> bool {
        let outcome = match self.when {
            When::Always => true,
            When::Complete => !failed,
            When::Failure => failed,
        };
        outcome
            && self
                .on_when
                .as_ref()
                .is_none_or(|p| p.matches(ex).unwrap_or(false))
    }
}

/// The route `route` with its `on_completion`s.
pub fn with_completions(route: BoxProcessor, completions: Vec<OnCompletion>) -> BoxProcessor {
    if completions.is_empty() {
        return route;
    }
    let keep_input = completions.iter().any(|c| c.when != When::Complete);
    BoxProcessor::new(Completions {
        route,
        completions: completions.into(),
        keep_input,
    })
    .named("on_completion")
}

#[derive(Debug, Clone)]
struct Completions {
    route: BoxProcessor,
    completions: Arc<[OnCompletion]>,
    /// A failure consumes the exchange; its input is kept only when a completion runs on
    /// failures.
    keep_input: bool,
}

impl Process for Completions {
    fn process(&self, ex: Exchange) -> ProcessorFuture {
        let input = self.keep_input.then(|| ex.clone());
        let this = self.clone();
        let run = self.route.process(ex);
        ProcessorFuture::boxed(async move {
            let outcome = run.await;
            let (failed, mut copy) = match (&outcome, input) {
                (Ok(ex), _) => (false, ex.clone()),
                (Err(e), Some(mut input)) => {
                    input.set_caught_error(Some(Arc::new(e.clone())));
                    input
                        .properties
                        .insert(names::EXCEPTION_CAUGHT, e.to_string());
                    (true, input)
                }
                (Err(_), None) => return outcome,
            };
            // The copy runs its own steps even when the route stopped the exchange.
            copy.resume();
            for c in this.completions.iter().filter(|c| c.applies(failed, &copy)) {
                let steps = c.steps.clone();
                let ex = copy.clone();
                match c.mode {
                    Mode::BeforeConsumer => report(steps.process(ex).await),
                    Mode::AfterConsumer => {
                        tokio::spawn(async move { report(steps.process(ex).await) });
                    }
                }
            }
            outcome
        })
    }
}

fn report(result: Result<Exchange, CamelError>) {
    if let Err(e) = result {
        tracing::warn!(error = %e, "on_completion steps failed");
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    fn counter() -> (BoxProcessor, Arc<Mutex<Vec<bool>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let p = BoxProcessor::sync(move |ex: Exchange| {
            s.lock().unwrap().push(ex.caught_error().is_some());
            Ok(ex)
        });
        (p, seen)
    }

    #[tokio::test]
    async fn complete_only_failure_only_and_after_consumer() {
        let (done, done_seen) = counter();
        let (failed, failed_seen) = counter();
        let (after, after_seen) = counter();
        let completions = vec![
            OnCompletion::new(done, When::Complete, Mode::BeforeConsumer),
            OnCompletion::new(failed, When::Failure, Mode::BeforeConsumer),
            OnCompletion::new(after, When::Always, Mode::AfterConsumer),
        ];
        let ok = with_completions(BoxProcessor::identity(), completions.clone());
        ok.process(Exchange::default()).await.unwrap();
        let bad = with_completions(
            BoxProcessor::sync(|_| Err(CamelError::processor("x"))),
            completions,
        );
        assert!(bad.process(Exchange::default()).await.is_err());
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
        assert_eq!(*done_seen.lock().unwrap(), [false]);
        assert_eq!(*failed_seen.lock().unwrap(), [true]);
        assert_eq!(after_seen.lock().unwrap().len(), 2);
    }
}
