//! Step spans: one `tracing` span per step execution, named `step`, with the route id,
//! the step's path in the route (`steps[1].filter.steps[0].log`) and the exchange id, under
//! the target `camel::step` at `DEBUG`. A step that fails logs its error inside its span,
//! and so does each step containing it, from the inside out.
//!
//! Whether a route's steps get spans is decided when the route is compiled: with the
//! target disabled (the default), [`traced`] returns the step untouched and costs nothing.
//! Enable it with, for example, `RUST_LOG=info,camel::step=debug`.

use std::sync::Arc;

use camel_api::{BoxProcessor, CamelError, Exchange, Process, ProcessorFuture};
use tracing::Instrument;

/// The target of step spans.
pub const TARGET: &str = "camel::step";

/// Wraps `step` in a span per execution when [`TARGET`] is enabled at `DEBUG` now.
pub fn traced(step: BoxProcessor, route_id: &str, path: &str) -> BoxProcessor {
    if !tracing::enabled!(target: TARGET, tracing::Level::DEBUG) {
        return step;
    }
    BoxProcessor::new(Traced {
        step,
        route_id: route_id.into(),
        path: path.into(),
    })
    .named("traced")
}

#[derive(Debug)]
struct Traced {
    step: BoxProcessor,
    route_id: Arc<str>,
    path: Arc<str>,
}

fn report(result: &Result<Exchange, CamelError>) {
    if let Err(e) = result {
        tracing::debug!(target: TARGET, error = %e, "step failed");
    }
}

impl Process for Traced {
    fn process(&self, ex: Exchange) -> ProcessorFuture {
        let span = tracing::debug_span!(
            target: TARGET,
            "step",
            route_id = %self.route_id,
            step = %self.path,
            exchange_id = %ex.id
        );
        let entered = span.enter();
        match self.step.process(ex) {
            ProcessorFuture::Ready(Some(result)) => {
                report(&result);
                ProcessorFuture::ready(result)
            }
            ProcessorFuture::Ready(None) => ProcessorFuture::Ready(None),
            pending => {
                drop(entered);
                ProcessorFuture::boxed(
                    async move {
                        let result = pending.await;
                        report(&result);
                        result
                    }
                    .instrument(span),
                )
            }
        }
    }
}
