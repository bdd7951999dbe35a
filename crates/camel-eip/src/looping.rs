//! Loop: runs the inner steps a number of times, or while a predicate holds.
//!
//! Each iteration gets the previous iteration's result, or with `copy` a fresh copy of
//! the exchange the loop received; the loop's result is the last iteration's. The
//! properties `CamelLoopIndex` (from 0) and, when counting, `CamelLoopSize` are set on
//! each iteration. A stopped exchange ends the loop (and the route). Each iteration
//! yields to the scheduler, so a `do_while` that never ends keeps the runtime usable and
//! the route stoppable.
//!
//! As a tower layer, [`LoopLayer`] makes the wrapped service the loop's body.
//!
//! ```
//! use camel_api::{Body, BoxProcessor, Exchange};
//! use camel_eip::looping::{Loop, LoopMode};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let append = BoxProcessor::sync(|mut ex: Exchange| {
//!     let text = format!("{}x", ex.message.body.as_text().unwrap_or_default());
//!     ex.message.body = Body::from(text);
//!     Ok(ex)
//! });
//! let three = Loop::new(LoopMode::Count(camel_language::constant("3")), false, append);
//! let out = three.into_processor().process(Exchange::new("")).await.unwrap();
//! assert_eq!(out.message.body, Body::from("xxx"));
//! # }
//! ```

use std::sync::Arc;
use std::task::{Context, Poll};

use camel_api::{
    BoxExpression, BoxPredicate, BoxProcessor, CamelError, Exchange, Process, ProcessorFuture,
    Value,
};
use tower::{Layer, Service, ServiceExt};

/// Property with the iteration's index, from 0.
pub const LOOP_INDEX: &str = "CamelLoopIndex";
/// Property with the number of iterations, when counting.
pub const LOOP_SIZE: &str = "CamelLoopSize";

/// When a loop ends.
#[derive(Clone, Debug)]
pub enum LoopMode {
    /// After the expression's number of iterations (evaluated once, on the input).
    Count(BoxExpression),
    /// When the predicate, tested before each iteration, is false.
    While(BoxPredicate),
}

#[derive(Debug)]
struct Options {
    mode: LoopMode,
    copy: bool,
}

/// Runs `S` repeatedly.
#[derive(Clone, Debug)]
pub struct Loop<S = BoxProcessor> {
    options: Arc<Options>,
    body: S,
}

impl<S> Loop<S> {
    /// A loop over `body`; `copy` starts each iteration from the input.
    pub fn new(mode: LoopMode, copy: bool, body: S) -> Self {
        Loop {
            options: Arc::new(Options { mode, copy }),
            body,
        }
    }
}

impl Loop<BoxProcessor> {
    /// The loop as a route step.
    pub fn into_processor(self) -> BoxProcessor {
        BoxProcessor::new(self).named("loop")
    }
}

impl Process for Loop<BoxProcessor> {
    fn process(&self, ex: Exchange) -> ProcessorFuture {
        ProcessorFuture::boxed(run(self.options.clone(), self.body.clone(), ex))
    }
}

impl<S> Service<Exchange> for Loop<S>
where
    S: Service<Exchange, Response = Exchange, Error = CamelError> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Exchange;
    type Error = CamelError;
    type Future = ProcessorFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), CamelError>> {
        // Every iteration waits for the body's readiness itself.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, ex: Exchange) -> ProcessorFuture {
        ProcessorFuture::boxed(run(self.options.clone(), self.body.clone(), ex))
    }
}

async fn run<S>(options: Arc<Options>, mut body: S, ex: Exchange) -> Result<Exchange, CamelError>
where
    S: Service<Exchange, Response = Exchange, Error = CamelError>,
{
    let count = match &options.mode {
        LoopMode::Count(e) => {
            let value = e.evaluate(&ex)?;
            let n = match &value {
                Value::Null => 0,
                v => v.as_i64().ok_or_else(|| {
                    CamelError::processor(format!(
                        "loop: expected a whole number of iterations, got `{value}`"
                    ))
                })?,
            };
            Some(n.max(0) as u64)
        }
        LoopMode::While(_) => None,
    };
    let original = options.copy.then(|| ex.clone());
    let mut current = ex;
    let mut index: u64 = 0;
    loop {
        match (&options.mode, count) {
            (_, Some(n)) if index >= n => break,
            (LoopMode::While(p), _) if !p.matches(&current)? => break,
            _ => {}
        }
        let mut input = match &original {
            Some(o) => o.clone(),
            None => current,
        };
        input.properties.insert(LOOP_INDEX, index);
        if let Some(n) = count {
            input.properties.insert(LOOP_SIZE, n);
        }
        current = body.ready().await?.call(input).await?;
        index += 1;
        if current.is_stopped() {
            break;
        }
        tokio::task::consume_budget().await;
    }
    Ok(current)
}

/// Wraps a service in a [`Loop`]: the service is the loop's body.
#[derive(Clone, Debug)]
pub struct LoopLayer {
    options: Arc<Options>,
}

impl LoopLayer {
    /// A loop layer.
    pub fn new(mode: LoopMode, copy: bool) -> Self {
        LoopLayer {
            options: Arc::new(Options { mode, copy }),
        }
    }
}

impl<S> Layer<S> for LoopLayer {
    type Service = Loop<S>;

    fn layer(&self, body: S) -> Loop<S> {
        Loop {
            options: self.options.clone(),
            body,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use camel_api::Body;
    use camel_language::{constant, simple_predicate};

    /// Appends the loop index to the body.
    fn mark() -> BoxProcessor {
        BoxProcessor::sync(|mut ex: Exchange| {
            let i = ex.property(LOOP_INDEX).cloned().unwrap_or_default();
            let text = format!("{}{i}", ex.message.body.as_text().unwrap_or_default());
            ex.message.body = Body::from(text);
            Ok(ex)
        })
    }

    async fn body_after(l: Loop) -> Exchange {
        l.into_processor().process(Exchange::new("")).await.unwrap()
    }

    #[tokio::test]
    async fn count_copy_and_properties() {
        let out = body_after(Loop::new(LoopMode::Count(constant("3")), false, mark())).await;
        assert_eq!(out.message.body, Body::from("012"));
        assert_eq!(out.property(LOOP_SIZE), Some(&Value::from(3u64)));
        let out = body_after(Loop::new(LoopMode::Count(constant("3")), true, mark())).await;
        assert_eq!(out.message.body, Body::from("2"));
        let out = body_after(Loop::new(LoopMode::Count(constant("0")), false, mark())).await;
        assert_eq!(out.message.body, Body::from(""));
        let bad = Loop::new(LoopMode::Count(constant("many")), false, mark());
        let e = bad
            .into_processor()
            .process(Exchange::new(""))
            .await
            .unwrap_err();
        assert!(e.to_string().contains("whole number"), "{e}");
    }

    #[tokio::test]
    async fn do_while_tests_before_each_iteration() {
        let p = simple_predicate("${body.length} < 4").unwrap();
        let out = body_after(Loop::new(LoopMode::While(p), false, mark())).await;
        assert_eq!(out.message.body, Body::from("0123"));
    }

    #[tokio::test]
    async fn a_stop_ends_the_loop() {
        let stop_at_one = BoxProcessor::sync(|mut ex: Exchange| {
            if ex.property(LOOP_INDEX) == Some(&Value::from(1u64)) {
                ex.stop();
            }
            Ok(ex)
        });
        let out = body_after(Loop::new(
            LoopMode::Count(constant("5")),
            false,
            stop_at_one,
        ))
        .await;
        assert!(out.is_stopped());
        assert_eq!(out.property(LOOP_INDEX), Some(&Value::from(1u64)));
    }
}
