//! A step and an expression language defined outside camel-core, and registered on a
//! context from user code.
//!
//! - The `uppercase` step: `- uppercase: {}` upper-cases the body, `- uppercase: {header:
//!   name}` a header. Its options are one typed configuration, [`Uppercase`]: the YAML
//!   reader, the builder and the compiler all go through it, so a misspelt key is an error
//!   with its file, line and column and the nearest known key.
//! - The `upper` language: `expression: {upper: "${body}!"}` evaluates a `simple` template
//!   and upper-cases the result.
//!
//! ```
//! use camel_core::{CamelContext, RouteBuilder};
//! use custom_step::{register, Uppercase, UppercaseStep};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let ctx = CamelContext::new();
//! register(&ctx);
//! let route = RouteBuilder::from("direct:in").uppercase(Uppercase::body()).build();
//! ctx.add_routes(vec![route]).await.unwrap();
//! ctx.start().await.unwrap();
//! let out = ctx.request("direct:in", camel_api::Exchange::new("hi")).await.unwrap();
//! assert_eq!(out.message.body.as_text().as_deref(), Some("HI"));
//! ctx.stop().await;
//! # }
//! ```

// Route errors carry a location and are built on the cold compile path; their size does
// not matter there (camel-core makes the same choice).
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use camel_api::definition::StepConfig;
use camel_api::{
    Body, BoxExpression, BoxProcessor, CamelError, Exchange, Expression, ExpressionError, Language,
    Value,
};
use camel_core::compiler::{typed, StepContext};
use camel_core::{CamelContext, RouteBuilder, RouteError};
use serde::{Deserialize, Serialize};

/// The `uppercase` step's options. Unknown keys are refused; `headerName` (Camel's
/// camelCase) is accepted for `header`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Uppercase {
    /// Upper-case this header instead of the body.
    #[serde(default, alias = "headerName", skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
}

impl Uppercase {
    /// Upper-cases the body.
    pub fn body() -> Self {
        Uppercase::default()
    }

    /// Upper-cases the header `name`.
    pub fn header(name: impl Into<String>) -> Self {
        Uppercase {
            header: Some(name.into()),
        }
    }
}

impl StepConfig for Uppercase {
    const NAME: &'static str = "uppercase";
}

/// Compiles an `uppercase` step. Runs synchronously: no future is allocated per exchange.
fn compile(config: Uppercase, _cx: &mut StepContext<'_>) -> Result<BoxProcessor, RouteError> {
    Ok(BoxProcessor::sync(move |mut ex: Exchange| {
        match &config.header {
            None => {
                let text = ex.message.body.as_text().map(|t| t.to_uppercase());
                if let Some(text) = text {
                    ex.message.body = Body::from(text);
                }
            }
            Some(name) => {
                let text = ex
                    .header(name)
                    .and_then(Value::as_str)
                    .map(str::to_uppercase);
                if let Some(text) = text {
                    ex.message.headers.insert(name.as_str(), text);
                }
            }
        }
        Ok(ex)
    })
    .named("uppercase"))
}

/// The `upper` language: a `simple` template whose result is upper-cased.
#[derive(Debug, Clone, Copy, Default)]
pub struct UpperLanguage;

#[derive(Debug)]
struct Upper(BoxExpression);

impl Expression for Upper {
    fn evaluate(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        Ok(match self.0.evaluate(exchange)? {
            Value::Null => Value::Null,
            v => Value::from(
                v.as_str()
                    .map(str::to_uppercase)
                    .unwrap_or_else(|| v.to_json().to_string().to_uppercase()),
            ),
        })
    }
}

impl Language for UpperLanguage {
    fn name(&self) -> &'static str {
        "upper"
    }

    fn expression(
        &self,
        text: &str,
        options: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<BoxExpression, ExpressionError> {
        if let Some(key) = options.keys().next() {
            return Err(ExpressionError {
                language: "upper".into(),
                expression: text.into(),
                column: 1,
                message: format!("the upper language takes no options, got `{key}`"),
            });
        }
        let inner = camel_language::simple(text).map_err(|e| ExpressionError {
            language: "upper".into(),
            ..e
        })?;
        Ok(Arc::new(Upper(inner)))
    }
}

/// Registers the `uppercase` step and the `upper` language on `ctx`.
pub fn register(ctx: &CamelContext) {
    ctx.add_step(Uppercase::NAME, typed(compile));
    ctx.add_language("upper", UpperLanguage);
}

/// The builder method for the step: `RouteBuilder::uppercase`.
pub trait UppercaseStep {
    /// Adds an `uppercase` step.
    fn uppercase(self, config: Uppercase) -> Self;
}

impl UppercaseStep for RouteBuilder {
    fn uppercase(self, config: Uppercase) -> Self {
        self.step_config(config)
    }
}
