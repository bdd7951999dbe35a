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
    if config.precondition == Some(true) {
        return precondition(&config, cx);
    }
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

/// Camel's `precondition: true`: the predicates are tested once, when the route is
/// built, on an empty message (they read properties and Kamelet parameters, as the
/// catalog's `${propertiesExist:…}` tests do), and only the branch chosen is built: the
/// others, which may name options their use left out, are never compiled.
fn precondition(config: &Choice, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    let probe = camel_api::Exchange::new(camel_api::Body::Empty);
    for (i, when) in config.when.iter().enumerate() {
        let at = format!("/when/{i}");
        let predicate = cx.predicate_in(when, &at)?;
        let holds = predicate.matches(&probe).map_err(|e| {
            cx.error_at(
                &at,
                crate::error::RouteErrorKind::InvalidValue(format!(
                    "a `precondition` choice tests its predicates once, when the route is \
                     built, on an empty message, and this one failed: {e}"
                )),
            )
        })?;
        if holds {
            return cx.compile_steps(&when.steps, &format!("{at}/steps"));
        }
    }
    match &config.otherwise {
        Some(o) => cx.compile_steps(&o.steps, "/otherwise/steps"),
        None => cx.compile_steps(&[], "/otherwise/steps"),
    }
}

/// `switch`: Camel's Switch EIP before 4.23 has `choice`'s shape and runs as one. Camel
/// 4.23's new `switch` (a `selector` and a table of `case`s) is refused as not supported.
pub(super) struct Switch;

impl crate::compiler::StepCompiler for Switch {
    fn compile(
        &self,
        config: &serde_json::Value,
        cx: &mut StepContext<'_>,
    ) -> Result<BoxProcessor, RouteError> {
        if let Some(key) = ["selector", "case"]
            .into_iter()
            .find(|k| config.get(k).is_some())
        {
            return Err(cx.error_at(
                &format!("/{key}"),
                crate::error::RouteErrorKind::InvalidValue(
                    "Camel 4.23's `switch` with `selector` and `case` is a Camel EIP that \
                     camel-rs does not support yet (write a `choice`, or the older `switch` \
                     with `when`/`otherwise`)"
                        .into(),
                ),
            ));
        }
        crate::compiler::typed(choice).compile(config, cx)
    }
}
