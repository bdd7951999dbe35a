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
use camel_eip::multicast::{Multicast, MulticastConfig};
use serde_json::Value as Json;

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

const KEYS: &[&str] = &["parallel", "strategy", "steps"];

fn branches_and_config(
    config: &Json,
    cx: &mut StepContext<'_>,
) -> Result<(Vec<BoxProcessor>, MulticastConfig), RouteError> {
    let mut map = cx.object(config)?;
    let steps = map.remove("steps").unwrap_or(Json::Null);
    for key in ["parallel_processing", "aggregation_strategy"] {
        if let Some(v) = map.remove(key) {
            let canonical = if key == "parallel_processing" {
                "parallel"
            } else {
                "strategy"
            };
            map.insert(canonical.into(), v);
        }
    }
    // MulticastConfig accepts unknown keys (it is meant to be embedded); check them here.
    let mut unknown = map.clone();
    unknown.retain(|k, _| !KEYS.contains(&k.as_str()));
    cx.no_more_keys(&unknown, KEYS)?;
    let config: MulticastConfig = cx.decode(&Json::Object(map))?;
    let Json::Array(items) = steps else {
        return Err(cx.error(RouteErrorKind::Missing(
            "steps (one branch per step)".into(),
        )));
    };
    let mut branches = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        branches.push(cx.compile_step(item, &format!("/steps/{i}"))?);
    }
    Ok((branches, config))
}

pub(super) fn multicast(
    config: &Json,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let (branches, config) = branches_and_config(config, cx)?;
    Ok(Multicast::new(branches, config).into_processor())
}

/// A pure alias: lowers to `multicast` with `parallel: true`.
pub(super) fn scatter_gather(
    config: &Json,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let (branches, mut config) = branches_and_config(config, cx)?;
    config.parallel = true;
    Ok(Multicast::new(branches, config).into_processor())
}
