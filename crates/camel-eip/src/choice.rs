//! Choice (content-based router): the first `when` whose predicate holds runs its steps;
//! otherwise the `otherwise` steps run, if any.

use camel_api::{BoxPredicate, BoxProcessor, Exchange, Process, ProcessorFuture};

/// The choice processor.
#[derive(Debug)]
pub struct Choice {
    whens: Vec<(BoxPredicate, BoxProcessor)>,
    otherwise: Option<BoxProcessor>,
}

/// Builds a choice from `(predicate, steps)` branches and an optional fallback.
pub fn choice(
    whens: Vec<(BoxPredicate, BoxProcessor)>,
    otherwise: Option<BoxProcessor>,
) -> BoxProcessor {
    BoxProcessor::new(Choice { whens, otherwise }).named("choice")
}

impl Process for Choice {
    fn process(&self, ex: Exchange) -> ProcessorFuture {
        for (predicate, steps) in &self.whens {
            match predicate.matches(&ex) {
                Ok(true) => return steps.process(ex),
                Ok(false) => {}
                Err(e) => return ProcessorFuture::ready(Err(e)),
            }
        }
        match &self.otherwise {
            Some(steps) => steps.process(ex),
            None => ProcessorFuture::ready(Ok(ex)),
        }
    }
}
