//! `to` and `process`.

use camel_api::variables::Variable;
use camel_api::BoxProcessor;
use serde_json::Value as Json;

use crate::compiler::{StepCompiler, StepContext};
use crate::error::{RouteError, RouteErrorKind};
use crate::model::{EndpointDefinition, Process};

/// `to: "uri"` or `to: {uri, parameters, pattern}`.
pub(super) fn to(
    config: EndpointDefinition,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    // A scalar `to: uri` has no `/uri` node; the locator falls back to the step.
    let at = "/uri";
    let endpoint = cx.endpoint(&config, at)?;
    let producer = endpoint
        .producer()
        .map_err(|e| cx.error_at(at, RouteErrorKind::Endpoint(e)))?;
    let producer = crate::observe::metrics::timed_send(producer, cx.route_id(), &config.uri);
    Ok(match config.pattern {
        Some(p) => camel_eip::exchange::send_with_pattern(producer, p.into()),
        None => producer,
    })
}

/// `process: {ref: name}` or `process: name`: a Rust processor registered by name.
pub(super) fn process(
    config: Process,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    if let Some(processor) = cx.processor(&config.reference) {
        return Ok(processor);
    }
    let name = crate::model::bean_name(&config.reference);
    if crate::bean::was_refused(cx.registry, name) {
        return Ok(crate::bean::refused_stand_in(name));
    }
    Err(cx.error(RouteErrorKind::InvalidValue(format!(
        "no processor is registered under `{}`",
        config.reference
    ))))
}

/// Camel's `variableSend`/`variableReceive` (Camel 4.4) on a sending step: the options
/// are taken off the configuration, the step compiled by `inner` from the rest, and its
/// processor wrapped by [`camel_eip::variable::around_send`].
pub(super) struct BodyVariables<C>(pub(super) C);

/// The spellings of the two options (the reader keeps option keys as written).
const SEND: &[&str] = &["variable_send", "variableSend", "variable-send"];
const RECEIVE: &[&str] = &["variable_receive", "variableReceive", "variable-receive"];

impl<C: StepCompiler> StepCompiler for BodyVariables<C> {
    fn compile(&self, config: &Json, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
        let Json::Object(map) = config else {
            return self.0.compile(config, cx);
        };
        let mut rest = map.clone();
        let send = take_variable(&mut rest, SEND, cx)?;
        let receive = take_variable(&mut rest, RECEIVE, cx)?;
        let inner = self.0.compile(&Json::Object(rest), cx)?;
        Ok(camel_eip::variable::around_send(inner, send, receive))
    }
}

fn take_variable(
    map: &mut serde_json::Map<String, Json>,
    spellings: &[&str],
    cx: &StepContext<'_>,
) -> Result<Option<Variable>, RouteError> {
    let Some((key, value)) = spellings
        .iter()
        .find_map(|k| map.remove(*k).map(|v| (spellings[0], v)))
    else {
        return Ok(None);
    };
    let at = format!("/{key}");
    let Json::String(name) = value else {
        return Err(cx.error_at(
            &at,
            RouteErrorKind::InvalidValue(format!("`{key}` takes a variable name")),
        ));
    };
    Variable::parse(&name)
        .map(Some)
        .map_err(|e| cx.error_at(&at, RouteErrorKind::InvalidValue(format!("`{name}`: {e}"))))
}
