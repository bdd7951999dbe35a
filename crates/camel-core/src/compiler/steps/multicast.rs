//! `multicast` and its alias `scatter_gather`: every step of `steps` is a branch that gets
//! a copy of the exchange; the results are combined by the aggregation strategy.
//!
//! ```yaml
//! - multicast:
//!     parallel: true            # parallel_processing in Camel
//!     strategy: collect_all     # last_wins (default) | collect_all | original
//!     steps:
//!       - to: direct:a          # branch 1
//!       - to: direct:b          # branch 2
//! - scatter_gather: {strategy: collect_all, steps: [...]}   # = multicast, parallel: true
//! ```

use camel_api::BoxProcessor;
use camel_eip::config::Multicast as MulticastStep;
use camel_eip::multicast::Multicast;

use crate::compiler::StepContext;
use crate::error::RouteError;

fn branches(
    config: &MulticastStep,
    cx: &mut StepContext<'_>,
) -> Result<Vec<BoxProcessor>, RouteError> {
    let mut branches = Vec::with_capacity(config.steps.len());
    for (i, step) in config.steps.iter().enumerate() {
        let branch = cx.compile_step(step, &format!("/steps/{i}"))?;
        let path = format!("{}.steps[{i}]", cx.path);
        branches.push(crate::compiler::errors::around_part(branch, &path));
    }
    Ok(branches)
}

pub(super) fn multicast(
    config: MulticastStep,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let branches = branches(&config, cx)?;
    Ok(Multicast::new(branches, config.options()).into_processor())
}

/// A pure alias: lowers to `multicast` with `parallel: true`.
pub(super) fn scatter_gather(
    config: MulticastStep,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let branches = branches(&config, cx)?;
    let mut options = config.options();
    options.parallel = true;
    Ok(Multicast::new(branches, options).into_processor())
}
