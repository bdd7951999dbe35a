//! Error handling in builder routes (ADR 0052): the same configurations the YAML DSL
//! reads, so a builder route and its YAML twin compare equal.
//!
//! ```
//! use camel_core::RouteBuilder;
//! use camel_eip::config::{OnException, PredicateOption, RedeliveryPolicyConfig};
//!
//! let route = RouteBuilder::from("direct:orders")
//!     .dead_letter_channel(
//!         "log:dead",
//!         RedeliveryPolicyConfig { maximum_redeliveries: Some(3), ..Default::default() },
//!     )
//!     .on_exception(
//!         OnException {
//!             exception: vec!["java.io.IOException".into()],
//!             handled: Some(PredicateOption::Fixed(true)),
//!             ..Default::default()
//!         },
//!         |s| s.to("log:io"),
//!     )
//!     .throw_exception("IllegalArgumentException", "bad order ${body}")
//!     .build();
//! assert!(route.errors.error_handler.is_some());
//! assert_eq!(route.errors.on_exception[0].steps.len(), 1);
//! ```

use camel_api::definition::ExpressionDefinition;
use camel_eip::config::{
    DeadLetterChannel, DoCatch, DoFinally, DoTry, ErrorHandlerConfig, NoErrorHandler,
    OnCompletionConfig, OnException, RedeliveryPolicyConfig, ThrowException,
};

use crate::builder::RouteBuilder;

impl RouteBuilder {
    /// Sets the route's error handler (it wins over the context's).
    pub fn error_handler(mut self, config: ErrorHandlerConfig) -> Self {
        self.route.errors.error_handler = Some(config);
        self
    }

    /// A dead letter channel to `uri` with `policy`.
    pub fn dead_letter_channel(
        self,
        uri: impl Into<String>,
        policy: RedeliveryPolicyConfig,
    ) -> Self {
        self.error_handler(ErrorHandlerConfig {
            dead_letter_channel: Some(DeadLetterChannel {
                dead_letter_uri: uri.into(),
                dead_letter_handle_new_exception: true,
                redelivery_policy: Some(policy),
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    /// No error handling: a failure fails the exchange at once.
    pub fn no_error_handler(self) -> Self {
        self.error_handler(ErrorHandlerConfig {
            no_error_handler: Some(NoErrorHandler::default()),
            ..Default::default()
        })
    }

    /// Adds an `on_exception` clause whose steps `steps` builds (replacing any in
    /// `clause.steps`).
    pub fn on_exception(
        mut self,
        mut clause: OnException,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        clause.steps = self.nested_steps(steps);
        self.route.errors.on_exception.push(clause);
        self
    }

    /// Adds an `on_completion` whose steps `steps` builds.
    pub fn on_completion(
        mut self,
        mut config: OnCompletionConfig,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        config.steps = self.nested_steps(steps);
        self.route.errors.on_completion.push(config);
        self
    }

    /// Fails the exchange with an error of `kind` (a kind or Java class name); `message`
    /// is a simple expression.
    pub fn throw_exception(self, kind: impl Into<String>, message: impl Into<String>) -> Self {
        self.step_config(ThrowException {
            id: None,
            exception_type: kind.into(),
            message: Some(message.into()),
        })
    }
}

impl RouteBuilder {
    /// A `do_try` block built by `block`, with the catches and finally `handlers` adds.
    ///
    /// ```
    /// use camel_core::RouteBuilder;
    /// let route = RouteBuilder::from("direct:a")
    ///     .do_try(
    ///         |s| s.to("log:risky"),
    ///         |t| t.do_catch(["java.io.IOException"], None, |s| s.to("log:io"))
    ///             .do_finally(|s| s.to("log:done")),
    ///     )
    ///     .build();
    /// assert_eq!(route.steps[0].name, "do_try");
    /// ```
    pub fn do_try(
        mut self,
        block: impl FnOnce(RouteBuilder) -> RouteBuilder,
        handlers: impl FnOnce(TryBuilder) -> TryBuilder,
    ) -> Self {
        let steps = self.nested_steps(block);
        let built = handlers(TryBuilder {
            owner: self,
            config: DoTry {
                steps,
                ..Default::default()
            },
        });
        built.owner.step_config(built.config)
    }
}

/// Adds the `do_catch` and `do_finally` parts of [`RouteBuilder::do_try`].
#[derive(Debug)]
#[must_use]
pub struct TryBuilder {
    owner: RouteBuilder,
    config: DoTry,
}

impl TryBuilder {
    /// A `do_catch` for the listed kinds or Java class names, only when `on_when` holds.
    pub fn do_catch<I, S>(
        mut self,
        exception: I,
        on_when: Option<ExpressionDefinition>,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let steps = self.owner.nested_steps(steps);
        self.config.do_catch.push(DoCatch {
            id: None,
            exception: exception.into_iter().map(Into::into).collect(),
            on_when,
            steps,
        });
        self
    }

    /// The `do_finally` steps.
    pub fn do_finally(mut self, steps: impl FnOnce(RouteBuilder) -> RouteBuilder) -> Self {
        let steps = self.owner.nested_steps(steps);
        self.config.do_finally = Some(DoFinally { id: None, steps });
        self
    }
}
