//! `split`.
//!
//! ```yaml
//! - split:
//!     tokenize: {token: "\n", group: 100, skip_first: true}   # or jsonpath / simple / none
//!     streaming: true
//!     parallel_processing: true
//!     parallel_limit: 8
//!     stop_on_exception: true
//!     aggregation_strategy: GroupedBodyAggregationStrategy
//!     timeout: 5000
//!     steps:
//!       - to: file:out
//! ```

use std::time::Duration;

use camel_api::definition::{ExpressionSlotError, WithExpression};
use camel_api::BoxProcessor;
use camel_eip::config::Split as SplitStep;
use camel_eip::split::{Split, SplitExpression, SplitOptions, TextDelimiter};

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

/// Camel's default thread pool size, the default bound of a parallel split.
const DEFAULT_PARALLEL_LIMIT: usize = 10;

pub(super) fn split(
    config: SplitStep,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let expression = expression(&config, cx)?;
    let strategy = match &config.aggregation_strategy {
        Some(name) => Some(super::strategy::strategy(
            name,
            "/aggregation_strategy",
            cx,
        )?),
        None => None,
    };
    let parallel_limit = match (config.parallel_processing, config.parallel_limit) {
        (false, _) => 1,
        (true, None) => DEFAULT_PARALLEL_LIMIT,
        (true, Some(0)) => {
            return Err(cx.error_at(
                "/parallel_limit",
                RouteErrorKind::InvalidValue("`parallel_limit` must be at least 1".into()),
            ))
        }
        (true, Some(n)) => n,
    };
    let steps = cx.compile_steps(&config.steps, "/steps")?;
    let (steps, correlate) = crate::compiler::errors::around_part(steps, &cx.path);
    let delimiter = delimiter(config.delimiter.as_deref(), cx)?;
    let options = SplitOptions {
        expression,
        delimiter,
        streaming: config.streaming,
        parallel_limit,
        stop_on_exception: config.stop_on_exception,
        strategy,
        timeout: config.timeout.filter(|t| *t > 0).map(Duration::from_millis),
        correlate,
    };
    Ok(Split::new(options, steps).into_processor())
}

fn expression(config: &SplitStep, cx: &StepContext<'_>) -> Result<SplitExpression, RouteError> {
    match config.expression() {
        Err(ExpressionSlotError::Missing) => Ok(SplitExpression::Body),
        Ok((at, e)) if e.language == "tokenize" => {
            let t = camel_language::tokenizer(&e.text, &e.options)
                .map_err(|x| cx.error_at(&at, RouteErrorKind::Expression(x)))?;
            Ok(SplitExpression::Tokenize(t))
        }
        _ => Ok(SplitExpression::Expression(cx.expression_in(config, "")?)),
    }
}

/// Camel's split `delimiter`: `false` and `single` keep text whole, any other text cuts
/// at it (taken literally, as Camel does).
fn delimiter(text: Option<&str>, cx: &StepContext<'_>) -> Result<TextDelimiter, RouteError> {
    match text {
        None => Ok(TextDelimiter::Lines),
        Some(t) if t.eq_ignore_ascii_case("false") || t.eq_ignore_ascii_case("single") => {
            Ok(TextDelimiter::Whole)
        }
        Some(t) => camel_language::Tokenizer::new(t, false)
            .map(TextDelimiter::Token)
            .map_err(|why| {
                cx.error_at(
                    "/delimiter",
                    RouteErrorKind::InvalidValue(format!("`delimiter`: {why}")),
                )
            }),
    }
}
