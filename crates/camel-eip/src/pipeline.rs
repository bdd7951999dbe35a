//! Pipeline: runs steps one after another, each on the previous step's output.
//!
//! Synchronous steps run without allocating: the pipeline only boxes a future from the
//! first step that actually suspends. A stopped exchange ([`Exchange::stop`]) skips every
//! later step.
//!
//! ```
//! use camel_api::{BoxProcessor, Body, Exchange};
//! use camel_eip::pipeline::pipeline;
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let p = pipeline(vec![
//!     BoxProcessor::sync(|mut ex| { ex.message.body = Body::from("a"); Ok(ex) }),
//!     BoxProcessor::sync(|mut ex| { ex.stop(); Ok(ex) }),
//!     BoxProcessor::sync(|mut ex| { ex.message.body = Body::from("never"); Ok(ex) }),
//! ]);
//! let out = p.process(Exchange::default()).await.unwrap();
//! assert_eq!(out.message.body, Body::from("a"));
//! # }
//! ```

use std::sync::Arc;
use std::task::{Context, Poll};

use camel_api::{BoxProcessor, CamelError, Exchange, Process, ProcessorFuture};
use tower::{Layer, Service};

use crate::layer::EipFuture;

/// Steps run in sequence.
#[derive(Debug, Clone)]
pub struct Pipeline {
    steps: Arc<[BoxProcessor]>,
}

/// Builds the processor for a list of steps (one step is returned as is).
pub fn pipeline(mut steps: Vec<BoxProcessor>) -> BoxProcessor {
    match steps.len() {
        0 => BoxProcessor::identity(),
        1 => steps.remove(0),
        _ => BoxProcessor::new(Pipeline {
            steps: steps.into(),
        })
        .named("pipeline"),
    }
}

/// Where running the steps synchronously got to.
enum Progress {
    /// Every step completed at once (or the exchange was stopped).
    Done(Exchange),
    /// A step failed.
    Failed(CamelError),
    /// The step before `next` suspended; the rest must run in a boxed future.
    Suspended {
        pending: ProcessorFuture,
        next: usize,
    },
}

/// Runs `steps` for as long as they complete synchronously: no allocation on that path.
fn run_sync(steps: &[BoxProcessor], mut ex: Exchange) -> Progress {
    for (i, step) in steps.iter().enumerate() {
        if ex.is_stopped() {
            break;
        }
        // In-place steps take the exchange by reference: no move in and out per step.
        let next = match step.process_in_place(&mut ex) {
            Some(Ok(())) => continue,
            // The step may recover (an error handler wraps it): it gets the exchange.
            Some(Err(e)) => step.in_place_failed(ex, e),
            None => step.process(ex),
        };
        match next {
            ProcessorFuture::Ready(Some(Ok(next))) => ex = next,
            ProcessorFuture::Ready(Some(Err(e))) => return Progress::Failed(e),
            ProcessorFuture::Ready(None) => {
                return Progress::Failed(CamelError::processor(
                    "a step returned a future that had already completed",
                ))
            }
            pending @ ProcessorFuture::Pending(_) => {
                return Progress::Suspended {
                    pending,
                    next: i + 1,
                }
            }
        }
    }
    Progress::Done(ex)
}

async fn finish(
    first: ProcessorFuture,
    steps: Arc<[BoxProcessor]>,
    from: usize,
) -> Result<Exchange, CamelError> {
    let mut ex = first.await?;
    for step in &steps[from..] {
        if ex.is_stopped() {
            break;
        }
        ex = step.process(ex).await?;
    }
    Ok(ex)
}

impl Process for Pipeline {
    fn process(&self, ex: Exchange) -> ProcessorFuture {
        match run_sync(&self.steps, ex) {
            Progress::Done(ex) => ProcessorFuture::ready(Ok(ex)),
            Progress::Failed(e) => ProcessorFuture::ready(Err(e)),
            Progress::Suspended { pending, next } => {
                ProcessorFuture::boxed(finish(pending, self.steps.clone(), next))
            }
        }
    }
}

/// The steps of a pipeline, then the inner service `S` (skipped for a stopped exchange).
#[derive(Debug, Clone)]
pub struct PipelineService<S> {
    steps: Arc<[BoxProcessor]>,
    inner: S,
}

impl<S> Service<Exchange> for PipelineService<S>
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
        match run_sync(&self.steps, ex) {
            Progress::Done(ex) if ex.is_stopped() => EipFuture::ready(Ok(ex)),
            Progress::Done(ex) => EipFuture::inner(self.inner.call(ex)),
            Progress::Failed(e) => EipFuture::ready(Err(e)),
            Progress::Suspended { pending, next } => {
                let mut ready = crate::layer::take_ready(&mut self.inner);
                let steps = self.steps.clone();
                EipFuture::step(ProcessorFuture::boxed(async move {
                    let ex = finish(pending, steps, next).await?;
                    if ex.is_stopped() {
                        // Readiness was reserved but is not spent: drop it with `ready`.
                        return Ok(ex);
                    }
                    ready.call(ex).await
                }))
            }
        }
    }
}

/// Runs a list of steps in front of the inner service.
#[derive(Debug, Clone)]
pub struct PipelineLayer {
    steps: Arc<[BoxProcessor]>,
}

impl PipelineLayer {
    /// A layer running `steps` before the service it wraps.
    pub fn new(steps: Vec<BoxProcessor>) -> Self {
        PipelineLayer {
            steps: steps.into(),
        }
    }
}

impl<S> Layer<S> for PipelineLayer {
    type Service = PipelineService<S>;

    fn layer(&self, inner: S) -> PipelineService<S> {
        PipelineService {
            steps: self.steps.clone(),
            inner,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use camel_api::Body;

    fn append(tag: &'static str) -> BoxProcessor {
        BoxProcessor::sync(move |mut ex| {
            let text = format!("{}{tag}", ex.message.body.as_text().unwrap_or_default());
            ex.message.body = Body::from(text);
            Ok(ex)
        })
    }

    #[tokio::test]
    async fn runs_sync_and_async_steps_in_order() {
        let asynchronous = BoxProcessor::from_fn(|mut ex: Exchange| async move {
            tokio::task::yield_now().await;
            let text = format!("{}b", ex.message.body.as_text().unwrap_or_default());
            ex.message.body = Body::from(text);
            Ok(ex)
        });
        let p = pipeline(vec![append("a"), asynchronous, append("c")]);
        let out = p.process(Exchange::new("")).await.unwrap();
        assert_eq!(out.message.body.as_text().as_deref(), Some("abc"));
    }

    #[tokio::test]
    async fn an_error_skips_the_rest() {
        let fail = BoxProcessor::sync(|_| Err(CamelError::processor("boom")));
        let p = pipeline(vec![append("a"), fail, append("c")]);
        let err = p.process(Exchange::new("")).await.unwrap_err();
        assert_eq!(err.to_string(), "boom");
    }
}
