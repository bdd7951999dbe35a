//! `once:NAME` — a route source that fires exactly one exchange, after a delay (Camel 4's
//! camel-once).
//!
//! The exchange's body, headers, exchange properties and variables come from the URI:
//! `body=…`, `header.KEY=…`, `exchangeProperty.KEY=…`, `variable.KEY=…` (or, in YAML
//! `parameters`, the maps `headers`, `exchangeProperties` and `variables`). They are set
//! in Camel's order — variables, properties, headers, body — so a later value can be an
//! expression over an earlier one. Each value is one of:
//!
//! - plain text, turned into a boolean (`true`/`false`) or an integer when it reads as
//!   one, as Camel converts it; otherwise text;
//! - `file:PATH`, the text of that file (read when the endpoint is built, so a missing
//!   file is a load error; a regular file of at most [`MAX_FILE_BYTES`]);
//! - `language:NAME:EXPRESSION` (`language:simple:${variable.amount}`), the expression's
//!   result on the exchange built so far; the expression may itself be `file:PATH`.
//!
//! A once endpoint only consumes: using it in `to` is an error. Once it has fired the
//! consumer is done; the route stays up until it is stopped.
//!
//! # URI options
//!
//! | Option | Default | Meaning |
//! |---|---|---|
//! | `delay` | `1000` (ms) | Time before the firing; `0` or a negative number fires at once. |
//! | `body` | empty | The body, as above. |
//! | `header.KEY` / `headers` | none | A header; `headers` is a YAML map of them. |
//! | `exchange_property.KEY` / `exchange_properties` | none | An exchange property. |
//! | `variable.KEY` / `variables` | none | An exchange variable. |
//!
//! ```
//! use camel_api::{BoxProcessor, Component, ConsumerContext, EndpointUri};
//! use camel_components::{BareContext, OnceComponent};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
//! let uri = EndpointUri::parse("once:hello?delay=-1&body=Hello&header.count=3").unwrap();
//! let endpoint = OnceComponent.endpoint(uri, &BareContext).unwrap();
//! let ctx = ConsumerContext::for_pipeline("hello", BoxProcessor::identity());
//! endpoint.consumer().unwrap().run(ctx.clone()).await.unwrap();
//! assert_eq!(ctx.stats().completed(), 1);
//! # }
//! ```

mod value;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use camel_api::{
    parse_duration, BoxProcessor, CamelError, Component, ComponentContext, Consumer,
    ConsumerContext, Endpoint, EndpointUri, Exchange,
};

pub use value::MAX_FILE_BYTES;
use value::{Assignments, Source};

const OPTIONS: &[&str] = &[
    "delay",
    "body",
    "headers",
    "exchange_properties",
    "variables",
    "header.KEY",
    "exchange_property.KEY",
    "variable.KEY",
];
const DEFAULT_DELAY: Duration = Duration::from_millis(1000);

/// The `once` component. Stateless: every endpoint owns its one firing.
#[derive(Clone, Copy, Debug, Default)]
pub struct OnceComponent;

impl Component for OnceComponent {
    fn scheme(&self) -> &str {
        "once"
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let raw = uri.raw();
        // `uri: once` with the name in `parameters`, as Camel's YAML example writes it.
        let name = match uri.path() {
            "" => uri.parameters.take_str("name").unwrap_or_default(),
            path => path.to_string(),
        };
        if name.is_empty() {
            return Err(CamelError::invalid_uri(
                raw,
                "this endpoint needs a name, as in `once:hello`",
            ));
        }
        let delay = match uri.parameters.take_str("delay") {
            None => DEFAULT_DELAY,
            Some(text) => delay(&text).ok_or_else(|| {
                CamelError::invalid_uri(
                    raw.clone(),
                    format!("parameter `delay` = `{text}` is not a number of milliseconds"),
                )
            })?,
        };
        let assignments = Assignments::take(&mut uri, ctx)?;
        uri.parameters.finish(OPTIONS).map_err(prefixed_hint)?;
        Ok(Arc::new(OnceEndpoint {
            uri: raw,
            firing: Arc::new(Firing { delay, assignments }),
        }))
    }
}

/// A prefixed option given in YAML `parameters` is only seen as unknown (the query is
/// where its key's case survives): say where it goes instead.
fn prefixed_hint(error: CamelError) -> CamelError {
    match error {
        CamelError::InvalidUri { uri, reason }
            if ["`header.", "`exchange_property.", "`variable."]
                .iter()
                .any(|p| reason.contains(p)) =>
        {
            CamelError::invalid_uri(
                uri,
                format!(
                    "{reason}; give `header.KEY`, `exchangeProperty.KEY` and `variable.KEY` in \
                     the URI's query, or use the `headers`, `exchangeProperties` and `variables` \
                     maps in `parameters`"
                ),
            )
        }
        other => other,
    }
}

/// Camel's delay is a number of milliseconds where zero or less means at once; a unit
/// (`2s`) is accepted as everywhere else here.
fn delay(text: &str) -> Option<Duration> {
    match text.trim().parse::<i64>() {
        Ok(ms) => Some(Duration::from_millis(u64::try_from(ms).unwrap_or(0))),
        Err(_) => parse_duration(text),
    }
}

/// When the one exchange goes and what it holds.
#[derive(Debug)]
struct Firing {
    delay: Duration,
    assignments: Assignments,
}

#[derive(Debug)]
struct OnceEndpoint {
    uri: Arc<str>,
    firing: Arc<Firing>,
}

impl Endpoint for OnceEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Err(CamelError::invalid_uri(
            self.uri.clone(),
            "once can only start a route (`from`), not be sent to",
        ))
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        Ok(Box::new(OnceConsumer {
            uri: self.uri.clone(),
            firing: self.firing.clone(),
        }))
    }
}

#[derive(Debug)]
struct OnceConsumer {
    uri: Arc<str>,
    firing: Arc<Firing>,
}

#[async_trait]
impl Consumer for OnceConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        tokio::select! {
            biased;
            () = ctx.cancelled() => return Ok(()),
            () = tokio::time::sleep(self.firing.delay) => {}
        }
        let exchange = match self.firing.assignments.exchange() {
            Ok(exchange) => exchange,
            Err(error) => {
                tracing::warn!(uri = %self.uri, %error, "once: the exchange could not be built");
                return Ok(());
            }
        };
        match ctx.send(exchange).await {
            Ok(_) | Err(CamelError::Stopping(_)) => {}
            Err(error) => tracing::warn!(uri = %self.uri, %error, "once exchange failed"),
        }
        Ok(())
    }
}

impl Assignments {
    /// The exchange of the firing: variables, then properties, then headers, then body.
    fn exchange(&self) -> Result<Exchange, CamelError> {
        let mut exchange = Exchange::default();
        for (name, source) in &self.variables {
            let value = source.value(&exchange)?;
            exchange.set_variable(name, value);
        }
        for (name, source) in &self.properties {
            let value = source.value(&exchange)?;
            exchange.properties.insert(name.as_str(), value);
        }
        for (name, source) in &self.headers {
            let value = source.value(&exchange)?;
            exchange.message.headers.insert(name.as_str(), value);
        }
        if let Some(body) = &self.body {
            // A literal body stays text as written ("123" is not the number 123).
            exchange.message.body = match body {
                Source::Literal { text, .. } => text.clone().into(),
                other => other.value(&exchange)?.into(),
            };
        }
        Ok(exchange)
    }
}

#[cfg(test)]
mod tests;
