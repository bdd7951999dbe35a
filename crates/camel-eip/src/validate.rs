//! Validate: fails the exchange when a predicate does not hold.
//!
//! The failure is [`CamelError::Validation`], of kind `PredicateValidationException` (with
//! `ValidationException` as its ancestor), so `on_exception` and `do_catch` can name it as
//! Camel routes do. As a tower layer, [`ValidateLayer`] calls the inner service only with
//! valid exchanges.
//!
//! ```
//! use camel_api::{BoxProcessor, Exchange};
//! use camel_eip::validate::validate;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let positive = camel_language::simple_predicate("${header.n} > 0").unwrap();
//! let step = validate(positive, "${header.n} > 0");
//! assert!(step.process(Exchange::new("x").with_header("n", 3)).await.is_ok());
//! let err = step.process(Exchange::new("x").with_header("n", -1)).await.unwrap_err();
//! assert_eq!(err.kind_name(), "PredicateValidationException");
//! # }
//! ```

use std::sync::Arc;
use std::task::{Context, Poll};

use camel_api::{BoxPredicate, BoxProcessor, CamelError, Exchange, Process, ProcessorFuture};
use tower::{Layer, Service};

use crate::layer::EipFuture;

/// The validate service: `inner` runs for the exchanges `predicate` holds for.
#[derive(Debug, Clone)]
pub struct Validate<S = BoxProcessor> {
    predicate: BoxPredicate,
    text: Arc<str>,
    inner: S,
}

/// The `validate` step: `text` is the predicate as written, for the error message.
pub fn validate(predicate: BoxPredicate, text: &str) -> BoxProcessor {
    // The inner step does nothing in place, so a valid exchange stays on the pipeline's
    // by-reference path.
    let nothing = BoxProcessor::sync_in_place(|_| Ok(()));
    BoxProcessor::new(ValidateLayer::new(predicate, text).layer(nothing)).named("validate")
}

impl<S> Validate<S> {
    fn check(&self, ex: &Exchange) -> Result<(), CamelError> {
        if self.predicate.matches(ex)? {
            Ok(())
        } else {
            Err(CamelError::Validation {
                predicate: self.text.clone(),
            })
        }
    }
}

impl Process for Validate<BoxProcessor> {
    fn process(&self, ex: Exchange) -> ProcessorFuture {
        match self.check(&ex) {
            Ok(()) => self.inner.process(ex),
            Err(e) => ProcessorFuture::ready(Err(e)),
        }
    }

    fn process_in_place(&self, ex: &mut Exchange) -> Option<Result<(), CamelError>> {
        if let Err(e) = self.check(ex) {
            return Some(Err(e));
        }
        self.inner.process_in_place(ex)
    }
}

impl<S> Service<Exchange> for Validate<S>
where
    S: Service<Exchange, Response = Exchange, Error = CamelError>,
{
    type Response = Exchange;
    type Error = CamelError;
    type Future = EipFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), CamelError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, ex: Exchange) -> Self::Future {
        match self.check(&ex) {
            Ok(()) => EipFuture::inner(self.inner.call(ex)),
            Err(e) => EipFuture::ready(Err(e)),
        }
    }
}

/// Wraps a service in a [`Validate`].
#[derive(Debug, Clone)]
pub struct ValidateLayer {
    predicate: BoxPredicate,
    text: Arc<str>,
}

impl ValidateLayer {
    /// A layer refusing exchanges `predicate` does not hold for; `text` names it in errors.
    pub fn new(predicate: BoxPredicate, text: &str) -> Self {
        ValidateLayer {
            predicate,
            text: text.into(),
        }
    }
}

impl<S> Layer<S> for ValidateLayer {
    type Service = Validate<S>;

    fn layer(&self, inner: S) -> Validate<S> {
        Validate {
            predicate: self.predicate.clone(),
            text: self.text.clone(),
            inner,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::ServiceExt;

    #[tokio::test]
    async fn invalid_exchanges_never_reach_the_inner_service() {
        let p = camel_language::simple_predicate("${body} == 'ok'").unwrap();
        let layer = ValidateLayer::new(p, "${body} == 'ok'");
        let inner = tower::service_fn(|mut ex: Exchange| async move {
            ex.message.headers.insert("reached", true);
            Ok::<_, CamelError>(ex)
        });
        let mut svc = layer.layer(inner);
        let out = svc
            .ready()
            .await
            .unwrap()
            .call(Exchange::new("ok"))
            .await
            .unwrap();
        assert!(out.header("reached").is_some());
        let err = svc
            .ready()
            .await
            .unwrap()
            .call(Exchange::new("no"))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, CamelError::Validation { predicate } if &**predicate == "${body} == 'ok'")
        );
        assert_eq!(
            camel_api::error_kind::distance(&err, "org.apache.camel.ValidationException"),
            Some(1)
        );
        assert!(err.to_string().contains("${body} == 'ok'"), "{err}");
    }

    #[tokio::test]
    async fn the_step_passes_a_valid_exchange_in_place() {
        let p = camel_language::simple_predicate("${header.n} > 1").unwrap();
        let step = validate(p, "${header.n} > 1");
        let mut ex = Exchange::new("x").with_header("n", 2);
        assert!(matches!(step.process_in_place(&mut ex), Some(Ok(()))));
        let mut ex = Exchange::new("x").with_header("n", 0);
        assert!(matches!(
            step.process_in_place(&mut ex),
            Some(Err(CamelError::Validation { .. }))
        ));
    }
}
