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

use camel_api::{BoxProcessor, CamelError, Exchange, Process, ProcessorFuture};

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
    fn process(&self, mut ex: Exchange) -> ProcessorFuture {
        for (i, step) in self.steps.iter().enumerate() {
            if ex.is_stopped() {
                break;
            }
            // In-place steps take the exchange by reference: no move in and out per step.
            match step.process_in_place(&mut ex) {
                Some(Ok(())) => continue,
                Some(Err(e)) => return ProcessorFuture::ready(Err(e)),
                None => {}
            }
            match step.process(ex) {
                ProcessorFuture::Ready(Some(Ok(next))) => ex = next,
                ProcessorFuture::Ready(Some(Err(e))) => return ProcessorFuture::ready(Err(e)),
                ProcessorFuture::Ready(None) => {
                    return ProcessorFuture::ready(Err(CamelError::processor(
                        "a step returned a future that had already completed",
                    )))
                }
                pending @ ProcessorFuture::Pending(_) => {
                    return ProcessorFuture::boxed(finish(pending, self.steps.clone(), i + 1))
                }
            }
        }
        ProcessorFuture::ready(Ok(ex))
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
