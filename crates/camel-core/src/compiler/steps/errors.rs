//! `throw_exception` and `do_try`.

use camel_api::{BoxProcessor, CamelError, Exchange};
use camel_eip::config::{DoTry, ThrowException};
use camel_eip::try_catch::Catch;

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

/// `do_try: {steps, do_catch: [{exception, on_when, steps}], do_finally: {steps}}`.
pub(super) fn do_try(config: DoTry, cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    let block = cx.compile_steps(&config.steps, "/steps")?;
    let mut t = camel_eip::try_catch::DoTry::new(block);
    for (i, c) in config.do_catch.iter().enumerate() {
        let at = format!("/do_catch/{i}");
        if c.exception.iter().all(|e| e.trim().is_empty()) {
            return Err(cx.error_at(
                &format!("{at}/exception"),
                RouteErrorKind::InvalidValue(
                    "`exception` lists at least one kind or Java class name (`java.lang.Exception` catches all)".into(),
                ),
            ));
        }
        let steps = cx.compile_steps(&c.steps, &format!("{at}/steps"))?;
        let mut catch = Catch::new(c.exception.clone(), steps);
        if let Some(w) = &c.on_when {
            catch = catch.on_when(cx.predicate(w, &format!("{at}/on_when"))?);
        }
        t = t.catch(catch);
    }
    if let Some(f) = &config.do_finally {
        t = t.finally(cx.compile_steps(&f.steps, "/do_finally/steps")?);
    }
    Ok(BoxProcessor::new(t).named("do_try"))
}
