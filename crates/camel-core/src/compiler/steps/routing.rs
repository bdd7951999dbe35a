//! `filter` and `choice`.

use camel_api::BoxProcessor;
use camel_eip::config::{Choice, Filter};

use crate::compiler::StepContext;
use crate::error::RouteError;

/// `filter: {simple: "...", steps: [...]}`.
pub(super) fn filter(config: Filter, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    let predicate = cx.predicate_in(&config, "")?;
    let steps = cx.compile_steps(&config.steps, "/steps")?;
    Ok(camel_eip::filter::filter(predicate, steps))
}

/// `choice: {when: [{simple: "...", steps: [...]}, …], otherwise: {steps: [...]}}`.
pub(super) fn choice(config: Choice, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    let mut branches = Vec::with_capacity(config.when.len());
    for (i, when) in config.when.iter().enumerate() {
        let at = format!("/when/{i}");
        let predicate = cx.predicate_in(when, &at)?;
        let steps = cx.compile_steps(&when.steps, &format!("{at}/steps"))?;
        branches.push((predicate, steps));
    }
    let otherwise = match &config.otherwise {
        None => None,
        Some(o) => Some(cx.compile_steps(&o.steps, "/otherwise/steps")?),
    };
    Ok(camel_eip::choice::choice(branches, otherwise))
}
