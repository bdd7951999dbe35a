//! `set_variable`, `set_variables`, `remove_variable` and `convert_variable_to`.

use camel_api::variables::Variable;
use camel_api::BoxProcessor;
use camel_eip::config::{ConvertVariableTo, RemoveVariable, SetVariable, SetVariables};
use camel_eip::variable::{self as eip, ValueType};

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

/// Checks the name and its scope at compile time, so `route:x` is a located error.
fn variable(name: &str, at: &str, cx: &StepContext<'_>) -> Result<Variable, RouteError> {
    Variable::parse(name)
        .map_err(|e| cx.error_at(at, RouteErrorKind::InvalidValue(format!("`{name}`: {e}"))))
}

pub(super) fn set_variable(
    config: SetVariable,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let expression = cx.expression_in(&config, "")?;
    Ok(eip::set_variable(
        variable(&config.name, "/name", cx)?,
        expression,
    ))
}

pub(super) fn set_variables(
    config: SetVariables,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let mut steps = Vec::with_capacity(config.variables.len());
    for (i, item) in config.variables.iter().enumerate() {
        let at = format!("/variables/{i}");
        let expression = cx.expression_in(item, &at)?;
        let v = variable(&item.name, &format!("{at}/name"), cx)?;
        steps.push((v, expression));
    }
    Ok(eip::set_variables(steps))
}

pub(super) fn remove_variable(
    config: RemoveVariable,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    Ok(eip::remove_variable(variable(&config.name, "/name", cx)?))
}

pub(super) fn convert_variable_to(
    config: ConvertVariableTo,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let to = ValueType::parse(&config.to).ok_or_else(|| {
        cx.error_at(
            "/type",
            RouteErrorKind::InvalidValue(format!(
                "cannot convert a variable to `{}` (use String, Integer, Long, Double, Float or Boolean)",
                config.to
            )),
        )
    })?;
    Ok(eip::convert_variable_to(
        variable(&config.name, "/name", cx)?,
        to,
    ))
}
