//! `throw_exception` and `do_try`.

use camel_api::definition::StepDefinition;
use camel_api::{BoxProcessor, CamelError, Exchange};
use camel_eip::config::{DoCatch, DoFinally, DoTry, ThrowException};
use camel_eip::try_catch::Catch;

use crate::compiler::decode::decode;
use crate::compiler::node_options::node_options;
use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

/// `throw_exception: {exception_type: IllegalArgumentException, message: "${body}"}`:
/// fails the exchange with an error of that kind; the message is a simple expression.
pub(super) fn throw_exception(
    config: ThrowException,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let kind = camel_api::error_kind::simple_name(&config.exception_type).to_string();
    if kind.is_empty() {
        return Err(cx.error_at(
            "/exception_type",
            RouteErrorKind::Missing("an exception type (a kind or Java class name)".into()),
        ));
    }
    let message = match &config.message {
        None => None,
        Some(text) => Some(cx.expression_text("simple", text, "/message")?),
    };
    Ok(BoxProcessor::sync(move |ex: Exchange| {
        let text = match &message {
            None => String::new(),
            Some(e) => e.evaluate(&ex)?.to_string(),
        };
        Err(CamelError::user(&kind, text))
    })
    .named("throw_exception"))
}

/// `do_try: {steps, do_catch: [{exception, on_when, steps}], do_finally: {steps}}`, the
/// catches and the finally block also as the last items of `steps` (Kaoto's form).
pub(super) fn do_try(config: DoTry, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    let parts = split_block(config, cx)?;
    let block = cx.compile_steps(&parts.block, "/steps")?;
    let mut t = camel_eip::try_catch::DoTry::new(block);
    for (at, c) in &parts.catches {
        // Camel's catch without a list catches `java.lang.Exception`: every failure.
        let exceptions = if c.exception.is_empty() {
            vec!["java.lang.Exception".to_string()]
        } else {
            c.exception.clone()
        };
        if exceptions.iter().all(|e| e.trim().is_empty()) {
            return Err(cx.error_at(
                &format!("{at}/exception"),
                RouteErrorKind::InvalidValue(
                    "`exception` lists kinds or Java class names; leave it out to catch every failure".into(),
                ),
            ));
        }
        let steps = cx.compile_steps(&c.steps, &format!("{at}/steps"))?;
        let mut catch = Catch::new(exceptions, steps);
        if let Some(w) = &c.on_when {
            catch = catch.on_when(cx.predicate(w, &format!("{at}/on_when"))?);
        }
        t = t.catch(catch);
    }
    if let Some((at, f)) = &parts.finally {
        t = t.finally(cx.compile_steps(&f.steps, &format!("{at}/steps"))?);
    }
    Ok(BoxProcessor::new(t).named("do_try"))
}

/// A `do_try` with its catches and finally block gathered from both places, each with
/// the pointer it was written at.
struct TryParts {
    block: Vec<StepDefinition>,
    catches: Vec<(String, DoCatch)>,
    finally: Option<(String, DoFinally)>,
}

fn split_block(config: DoTry, cx: &StepContext<'_>) -> Result<TryParts, RouteError> {
    let mut parts = TryParts {
        block: Vec::new(),
        catches: config
            .do_catch
            .into_iter()
            .enumerate()
            .map(|(i, c)| (format!("/do_catch/{i}"), c))
            .collect(),
        finally: config.do_finally.map(|f| ("/do_finally".to_string(), f)),
    };
    // Set once a catch or the finally block has been met among the steps.
    let mut in_tail = false;
    for (i, step) in config.steps.into_iter().enumerate() {
        let at = format!("/steps/{i}/{}", step.name);
        match step.name.as_str() {
            "do_catch" | "do_finally" => {
                in_tail = true;
                push_tail(&mut parts, step, &at, cx)?;
            }
            _ if in_tail => {
                return Err(cx.error_at(
                    &format!("/steps/{i}"),
                    RouteErrorKind::InvalidValue(
                        "the steps of a `do_try` come before its `do_catch` and `do_finally`"
                            .into(),
                    ),
                ));
            }
            _ => parts.block.push(step),
        }
    }
    Ok(parts)
}

/// Adds a `do_catch` or `do_finally` written as a step of the block.
fn push_tail(
    parts: &mut TryParts,
    step: StepDefinition,
    at: &str,
    cx: &StepContext<'_>,
) -> Result<(), RouteError> {
    let (config, _) = node_options(&step.config);
    if step.name == "do_catch" {
        parts
            .catches
            .push((at.to_string(), nested(&config, at, cx)?));
        return Ok(());
    }
    if parts.finally.is_some() {
        return Err(cx.error_at(
            at,
            RouteErrorKind::InvalidValue("a `do_try` has one `do_finally`".into()),
        ));
    }
    parts.finally = Some((at.to_string(), nested(&config, at, cx)?));
    Ok(())
}

/// Decodes the configuration of a catch or finally written as a step, located there.
fn nested<T: serde::de::DeserializeOwned>(
    config: &serde_json::Value,
    at: &str,
    cx: &StepContext<'_>,
) -> Result<T, RouteError> {
    decode(config).map_err(|(pointer, kind)| cx.error_at(&format!("{at}{pointer}"), kind))
}
