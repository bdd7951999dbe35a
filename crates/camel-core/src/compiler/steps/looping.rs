//! `loop` and `sort`.
//!
//! ```yaml
//! - loop: {constant: 3, copy: true, steps: [{to: direct:attempt}]}
//! - loop: {do_while: true, simple: "${header.more} == true", steps: [...]}
//! - sort: {jsonpath: "$.items", comparator: reverse}
//! ```

use camel_api::definition::{ExpressionSlotError, WithExpression};
use camel_api::BoxProcessor;
use camel_eip::config::{Loop as LoopStep, Sort as SortStep};
use camel_eip::looping::{Loop, LoopMode};
use camel_eip::sort::{sort as sort_step, Order};

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

pub(super) fn looping(
    config: LoopStep,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let mode = if config.do_while {
        LoopMode::While(cx.predicate_in(&config, "")?)
    } else {
        LoopMode::Count(cx.expression_in(&config, "")?)
    };
    let body = cx.compile_steps(&config.steps, "/steps")?;
    Ok(Loop::new(mode, config.copy, body).into_processor())
}

pub(super) fn sort(config: SortStep, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    let expression = match config.expression() {
        Err(ExpressionSlotError::Missing) => None,
        _ => Some(cx.expression_in(&config, "")?),
    };
    let order = match &config.comparator {
        None => Order::Natural,
        Some(name) => Order::named(name).ok_or_else(|| {
            cx.error_at(
                "/comparator",
                RouteErrorKind::InvalidValue(format!(
                    "unknown comparator `{name}` (known: natural, reverse)"
                )),
            )
        })?,
    };
    Ok(sort_step(expression, order))
}
