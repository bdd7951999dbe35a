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

/// The multicast over the compiled branches: each behind a part channel, with its own
/// exchange id, when the route's error handler handles branches (ADR 0092).
fn multicast_with(
    config: &MulticastStep,
    options: camel_eip::multicast::MulticastConfig,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let mut branches = Vec::with_capacity(config.steps.len());
    let mut handled = false;
    for (i, step) in config.steps.iter().enumerate() {
        let branch = cx.compile_step(step, &format!("/steps/{i}"))?;
        let path = format!("{}.steps[{i}]", cx.path);
        let (branch, part) = crate::compiler::errors::around_part(branch, &path);
        handled |= part;
        branches.push(branch);
    }
    let multicast = Multicast::new(branches, options);
    let multicast = match handled {
        true => multicast.with_branch_ids(),
        false => multicast,
    };
    Ok(multicast.into_processor())
}

pub(super) fn multicast(
    config: MulticastStep,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let options = config.options();
    multicast_with(&config, options, cx)
}

/// A pure alias: lowers to `multicast` with `parallel: true`.
pub(super) fn scatter_gather(
    config: MulticastStep,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let mut options = config.options();
    options.parallel = true;
    multicast_with(&config, options, cx)
}
