//! Collecting the parts' results: folded in part order by the aggregation strategy as
//! they arrive (parallel parts may finish out of order), the first failure kept.
//!
//! Invariant: a result is folded once, in index order; a failed or abandoned index is a
//! gap that is skipped. Without a strategy nothing is kept, so memory does not grow with
//! the number of parts.

use std::collections::BTreeMap;

use camel_api::{CamelError, Exchange};

use crate::aggregation::SharedStrategy;

#[derive(Default)]
pub(crate) struct Results {
    strategy: Option<SharedStrategy>,
    aggregate: Option<Exchange>,
    /// Results that finished before an earlier index; `None` marks a failed part.
    waiting: BTreeMap<usize, Option<Exchange>>,
    next: usize,
    error: Option<CamelError>,
}

impl Results {
    pub(crate) fn new(strategy: Option<SharedStrategy>) -> Self {
        Results {
            strategy,
            ..Default::default()
        }
    }

    /// True once a part failed.
    pub(crate) fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Records the outcome of part `index`. An error of the strategy itself is returned:
    /// it fails the split at once.
    pub(crate) fn record(
        &mut self,
        index: usize,
        outcome: Result<Exchange, CamelError>,
    ) -> Result<(), CamelError> {
        let result = match outcome {
            Ok(ex) => Some(ex),
            Err(e) => {
                self.error.get_or_insert(e);
                None
            }
        };
        if self.strategy.is_none() {
            return Ok(());
        }
        if index == self.next {
            self.fold(result)?;
            while let Some(r) = self.waiting.remove(&self.next) {
                self.fold(r)?;
            }
        } else {
            self.waiting.insert(index, result);
        }
        Ok(())
    }

    fn fold(&mut self, result: Option<Exchange>) -> Result<(), CamelError> {
        self.next += 1;
        if let (Some(strategy), Some(ex)) = (&self.strategy, result) {
            self.aggregate = Some(strategy.aggregate(self.aggregate.take(), ex)?);
        }
        Ok(())
    }

    /// The split's result for `original`: its first failure, or `original` carrying the
    /// aggregated message (unchanged without a strategy or without results). Results still
    /// waiting behind an abandoned part (a timeout) are folded in order.
    pub(crate) fn finish(mut self, original: Exchange) -> Result<Exchange, CamelError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        for (_, r) in std::mem::take(&mut self.waiting) {
            self.fold(r)?;
        }
        let (Some(strategy), Some(aggregate)) = (&self.strategy, self.aggregate) else {
            return Ok(original);
        };
        let done = strategy.on_completion(aggregate, Some(&original));
        let mut out = original;
        out.message = done.message;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use camel_api::Body;

    #[test]
    fn out_of_order_results_fold_in_index_order() {
        let mut r = Results::new(crate::aggregation::builtin("grouped_body"));
        r.record(2, Ok(Exchange::new("c"))).unwrap();
        r.record(0, Ok(Exchange::new("a"))).unwrap();
        r.record(1, Ok(Exchange::new("b"))).unwrap();
        let out = r.finish(Exchange::new("in")).unwrap();
        assert_eq!(
            out.message.body,
            Body::from(serde_json::json!(["a", "b", "c"]))
        );
    }

    #[test]
    fn a_failure_is_the_result_and_a_gap_is_skipped() {
        let mut r = Results::new(crate::aggregation::builtin("grouped_body"));
        r.record(1, Ok(Exchange::new("b"))).unwrap();
        r.record(0, Err(CamelError::processor("boom"))).unwrap();
        assert!(r.failed());
        assert!(r.finish(Exchange::new("in")).is_err());
        let mut r = Results::new(crate::aggregation::builtin("grouped_body"));
        r.record(1, Ok(Exchange::new("b"))).unwrap();
        let out = r.finish(Exchange::new("in")).unwrap();
        assert_eq!(out.message.body, Body::from(serde_json::json!(["b"])));
    }
}
