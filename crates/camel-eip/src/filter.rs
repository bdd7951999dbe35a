//! Filter: runs its steps only for exchanges that match a predicate.
//!
//! A non-matching exchange continues the route unchanged (Camel's behaviour), with the
//! property `CamelFilterMatched = false`; use `stop` inside the filter to end the route.

use camel_api::{names, BoxPredicate, BoxProcessor, Exchange, Process, ProcessorFuture};

/// The filter processor.
#[derive(Debug)]
pub struct Filter {
    predicate: BoxPredicate,
    steps: BoxProcessor,
}

/// Builds a filter running `steps` when `predicate` holds.
pub fn filter(predicate: BoxPredicate, steps: BoxProcessor) -> BoxProcessor {
    BoxProcessor::new(Filter { predicate, steps }).named("filter")
}

impl Process for Filter {
    fn process(&self, mut ex: Exchange) -> ProcessorFuture {
        match self.predicate.matches(&ex) {
            Err(e) => ProcessorFuture::ready(Err(e)),
            Ok(matched) => {
                ex.properties.insert(names::FILTER_MATCHED, matched);
                if matched {
                    self.steps.process(ex)
                } else {
                    ProcessorFuture::ready(Ok(ex))
                }
            }
        }
    }
}
