//! Interceptors on builder routes (ADR 0090): the same definitions a YAML file's
//! `intercept`, `interceptFrom` and `interceptSendToEndpoint` make, here for one route.
//!
//! ```
//! use camel_core::builder::simple;
//! use camel_core::model::intercept::InterceptSendToEndpointDefinition;
//! use camel_core::RouteBuilder;
//!
//! let route = RouteBuilder::from("direct:orders")
//!     .intercept(None, |s| s.to("log:every-step"))
//!     .intercept_send_to_endpoint(
//!         InterceptSendToEndpointDefinition {
//!             uri: "http*".into(),
//!             skip_send_to_original_endpoint: camel_core::model::intercept::Flag(true),
//!             ..Default::default()
//!         },
//!         Some(simple("${header.dryRun} == true")),
//!         |s| s.to("mock:http"),
//!     )
//!     .to("http://example.org/orders")
//!     .build();
//! assert_eq!(route.errors.intercepts.intercept.len(), 1);
//! ```

use camel_api::definition::ExpressionDefinition;
use camel_eip::config::When;

use crate::builder::{with_expression, RouteBuilder};
use crate::model::intercept::{
    InterceptDefinition, InterceptFromDefinition, InterceptSendToEndpointDefinition,
};
use crate::model::StepDefinition;

impl RouteBuilder {
    /// Runs the steps `steps` builds before every step of this route (only when `when`
    /// holds, if given).
    pub fn intercept(
        mut self,
        when: Option<ExpressionDefinition>,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        let steps = self.interceptor_steps(when, steps);
        self.route.errors.intercepts.intercept.push((
            InterceptDefinition {
                steps,
                ..Default::default()
            },
            String::new(),
        ));
        self
    }

    /// Runs the steps `steps` builds before this route's first step, when its `from`
    /// matches `uri` (always without one) and `when` holds (if given).
    pub fn intercept_from(
        mut self,
        uri: Option<&str>,
        when: Option<ExpressionDefinition>,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        let steps = self.interceptor_steps(when, steps);
        self.route.errors.intercepts.intercept_from.push((
            InterceptFromDefinition {
                uri: uri.map(str::to_string),
                steps,
                ..Default::default()
            },
            String::new(),
        ));
        self
    }

    /// Runs the steps `steps` builds around this route's `to` steps matching
    /// `config.uri` (when `when` holds, if given), with `config`'s skip and `after_uri`.
    pub fn intercept_send_to_endpoint(
        mut self,
        mut config: InterceptSendToEndpointDefinition,
        when: Option<ExpressionDefinition>,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        config.steps = self.interceptor_steps(when, steps);
        self.route
            .errors
            .intercepts
            .intercept_send_to_endpoint
            .push((config, String::new()));
        self
    }

    /// The steps, behind a first `when` step (Camel's shape) when a condition is given.
    fn interceptor_steps(
        &mut self,
        when: Option<ExpressionDefinition>,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Vec<StepDefinition> {
        let steps = self.nested_steps(steps);
        match when {
            None => steps,
            Some(predicate) => {
                let condition: When = with_expression(predicate);
                let mut config = serde_json::to_value(condition).unwrap_or_default();
                if let serde_json::Value::Object(map) = &mut config {
                    map.remove("steps");
                }
                let mut all = vec![StepDefinition::new("when", config)];
                all.extend(steps);
                all
            }
        }
    }
}
