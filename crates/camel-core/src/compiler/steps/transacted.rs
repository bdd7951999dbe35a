//! `transacted: {datasource: URL, steps: [...]}`: the nested steps share one database
//! transaction (see `camel_eip::transacted`).

use camel_api::BoxProcessor;
use camel_eip::config::Transacted;

use crate::compiler::StepContext;
use crate::error::RouteError;

pub(super) fn transacted(
    config: Transacted,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let datasource = config
        .datasource
        .as_deref()
        .filter(|d| !d.trim().is_empty());
    let relative = if datasource.is_some() {
        "/datasource"
    } else {
        ""
    };
    let manager = cx.transaction_manager(datasource, relative)?;
    let steps = cx.compile_steps(&config.steps, "/steps")?;
    Ok(camel_eip::transacted::transacted(manager, steps))
}
