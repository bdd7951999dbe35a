//! `throw_exception`.

use camel_api::{BoxProcessor, CamelError, Exchange};
use camel_eip::config::ThrowException;

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
