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

use camel_eip::config::{
    DeadLetterChannel, ErrorHandlerConfig, NoErrorHandler, OnException, RedeliveryPolicyConfig,
    ThrowException,
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
