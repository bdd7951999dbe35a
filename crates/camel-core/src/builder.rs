//! The Rust DSL: a fluent builder that produces the same [`RouteDefinition`] as the YAML
//! DSL, so a route means the same thing whichever way it was written.
//!
//! ```
//! use camel_core::builder::{simple, RouteBuilder};
//!
//! let route = RouteBuilder::from("direct:orders")
//!     .id("orders")
//!     .set_header("kind", simple("${body}"))
//!     .filter(simple("${header.kind} == 'priority'"), |b| b.to("log:priority"))
//!     .to("mock:out")
//!     .build();
//! assert_eq!(route.steps.len(), 3);
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use camel_api::definition::{StepConfig, WithExpression};
use camel_api::{BoxProcessor, CamelError, Exchange};
use camel_eip::config::{
    Choice, ConvertBodyTo, ConvertVariableTo, Filter, Log, Marshal, Otherwise, RemoveHeader,
    RemoveHeaders, RemoveProperty, RemoveVariable, SetBody, SetHeader, SetProperty, SetVariable,
    Stop, Transacted, Unmarshal, When,
};
use serde::Serialize;
use serde_json::Value as Json;

pub use camel_api::definition::ExpressionDefinition;
pub use camel_eip::config::{DataFormat, Multicast, Resequence, Strategy};
pub use camel_eip::convert::BodyType;
pub use camel_eip::resequencer::{CapacityPolicy, GapPolicy, OnSwap};

use crate::model::{EndpointDefinition, Process, RouteDefinition, StepDefinition};

/// A `simple` language expression or predicate.
pub fn simple(text: impl Into<String>) -> ExpressionDefinition {
    language("simple", text)
}

/// A constant.
pub fn constant(text: impl Into<String>) -> ExpressionDefinition {
    language("constant", text)
}

/// The value of a header.
pub fn header(name: impl Into<String>) -> ExpressionDefinition {
    language("header", name)
}

/// A JSONPath expression over the body.
pub fn jsonpath(text: impl Into<String>) -> ExpressionDefinition {
    language("jsonpath", text)
}

/// An expression in any registered language.
pub fn language(name: &str, text: impl Into<String>) -> ExpressionDefinition {
    ExpressionDefinition::new(name, text)
}

/// A configuration of type `C` carrying `e`.
fn with_expression<C: WithExpression + Default>(e: ExpressionDefinition) -> C {
    let mut c = C::default();
    c.set_expression(e);
    c
}

static PROCESSOR_NAMES: AtomicU64 = AtomicU64::new(1);

/// Builds a route (or, inside `filter`/`choice` closures, a list of nested steps).
#[derive(Debug, Clone)]
#[must_use = "call .build() to get the route definition"]
pub struct RouteBuilder {
    pub(crate) route: RouteDefinition,
}

impl RouteBuilder {
    /// A route consuming from `uri`.
    pub fn from(uri: impl Into<String>) -> Self {
        RouteBuilder {
            route: RouteDefinition::from(uri),
        }
    }

    /// A route consuming from an endpoint with parameters beside the URI.
    pub fn from_endpoint(endpoint: EndpointDefinition) -> Self {
        RouteBuilder {
            route: RouteDefinition {
                from: endpoint,
                ..RouteDefinition::from("")
            },
        }
    }

    fn nested() -> Self {
        RouteBuilder {
            route: RouteDefinition::default(),
        }
    }

    /// Sets the route id.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.route.id = Some(id.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.route.description = Some(text.into());
        self
    }

    /// Whether the route starts with the context (default true).
    pub fn auto_startup(mut self, yes: bool) -> Self {
        self.route.auto_startup = yes;
        self
    }

    /// Position in the startup order.
    pub fn startup_order(mut self, order: i32) -> Self {
        self.route.startup_order = Some(order);
        self
    }

    /// Adds any step by name and configuration: the escape hatch for steps registered
    /// with [`CamelContext::add_step`](crate::CamelContext::add_step). `config` is
    /// anything serialisable into the step's configuration (its typed config, or JSON).
    ///
    /// # Panics
    /// When `config` cannot be represented as JSON (a map with non-text keys): a
    /// programming error in the caller.
    #[track_caller]
    pub fn step(mut self, name: &str, config: impl Serialize) -> Self {
        let config = match serde_json::to_value(config) {
            Ok(Json::Object(m)) if m.is_empty() => Json::Null,
            Ok(v) => v,
            Err(e) => panic!("the configuration of step `{name}` is not JSON: {e}"),
        };
        self.route.steps.push(StepDefinition::new(name, config));
        self
    }

    /// Adds a step by its typed configuration, under the configuration's
    /// [`StepConfig::NAME`].
    #[track_caller]
    pub fn step_config<C: StepConfig>(self, config: C) -> Self {
        self.step(C::NAME, config)
    }

    pub(crate) fn nested_steps(
        &mut self,
        f: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Vec<StepDefinition> {
        let nested = f(RouteBuilder::nested()).route;
        self.route.processors.extend(nested.processors);
        self.route.layers.extend(nested.layers);
        nested.steps
    }

    /// Sends to an endpoint.
    pub fn to(self, uri: impl Into<String>) -> Self {
        self.step("to", uri.into())
    }

    /// Sends to an endpoint with parameters beside the URI.
    pub fn to_endpoint(self, endpoint: EndpointDefinition) -> Self {
        self.step_config(endpoint)
    }

    /// Logs a `simple` template.
    pub fn log(self, message: impl Into<String>) -> Self {
        self.step("log", message.into())
    }

    /// Logs with a level and a logger name.
    pub fn log_with(self, log: Log) -> Self {
        self.step_config(log)
    }

    /// Sets a header.
    pub fn set_header(self, name: &str, e: ExpressionDefinition) -> Self {
        let mut c: SetHeader = with_expression(e);
        c.name = name.to_string();
        self.step_config(c)
    }

    /// Sets an exchange property.
    pub fn set_property(self, name: &str, e: ExpressionDefinition) -> Self {
        let mut c: SetProperty = with_expression(e);
        c.name = name.to_string();
        self.step_config(c)
    }

    /// Sets a variable (`global:name` for a process-wide one); see docs/routes.md.
    pub fn set_variable(self, name: &str, e: ExpressionDefinition) -> Self {
        let mut c: SetVariable = with_expression(e);
        c.name = name.to_string();
        self.step_config(c)
    }

    /// Removes a variable.
    pub fn remove_variable(self, name: &str) -> Self {
        self.step_config(RemoveVariable { name: name.into() })
    }

    /// Converts a variable: `to` is `String`, `Integer`, `Long`, `Double`, `Float` or
    /// `Boolean` (checked when the route is compiled).
    pub fn convert_variable_to(self, name: &str, to: &str) -> Self {
        self.step_config(ConvertVariableTo {
            name: name.into(),
            to: to.into(),
        })
    }

    /// Replaces the body.
    pub fn set_body(self, e: ExpressionDefinition) -> Self {
        self.step_config(with_expression::<SetBody>(e))
    }

    /// Replaces the body (Camel's `transform`).
    pub fn transform(self, e: ExpressionDefinition) -> Self {
        self.step("transform", with_expression::<SetBody>(e))
    }

    /// Removes a header.
    pub fn remove_header(self, name: &str) -> Self {
        self.step_config(RemoveHeader { name: name.into() })
    }

    /// Removes headers matching a wildcard pattern.
    pub fn remove_headers(self, pattern: &str) -> Self {
        self.step_config(RemoveHeaders {
            pattern: pattern.into(),
        })
    }

    /// Removes an exchange property.
    pub fn remove_property(self, name: &str) -> Self {
        self.step_config(RemoveProperty { name: name.into() })
    }

    /// Runs the nested steps only when the predicate holds.
    pub fn filter(
        mut self,
        predicate: ExpressionDefinition,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        let mut c: Filter = with_expression(predicate);
        c.steps = self.nested_steps(steps);
        self.step_config(c)
    }

    /// A content-based router.
    pub fn choice(mut self, branches: impl FnOnce(ChoiceBuilder) -> ChoiceBuilder) -> Self {
        let built = branches(ChoiceBuilder::default());
        self.route.processors.extend(built.processors);
        self.route.layers.extend(built.layers);
        self.step_config(built.choice)
    }

    /// Stops routing this exchange.
    pub fn stop(self) -> Self {
        self.step_config(Stop {})
    }

    /// Serialises the body as JSON text.
    pub fn marshal_json(self) -> Self {
        self.marshal(DataFormat::json())
    }

    /// Parses the body as JSON.
    pub fn unmarshal_json(self) -> Self {
        self.unmarshal(DataFormat::json())
    }

    /// Writes the body in a data format: `.marshal(DataFormat::csv().delimiter(';'))`.
    pub fn marshal(self, format: impl Into<DataFormat>) -> Self {
        self.step_config(Marshal(format.into()))
    }

    /// Reads the body as a data format: `.unmarshal(DataFormat::csv().use_maps(true))`.
    pub fn unmarshal(self, format: impl Into<DataFormat>) -> Self {
        self.step_config(Unmarshal(format.into()))
    }

    /// Converts the body.
    pub fn convert_body_to(self, to: BodyType) -> Self {
        self.step_config(ConvertBodyTo::from(to))
    }

    fn process_named(mut self, processor: BoxProcessor) -> Self {
        let name = format!(
            "process-{}",
            PROCESSOR_NAMES.fetch_add(1, Ordering::Relaxed)
        );
        self.route.processors.insert(name.clone(), processor);
        self.process_ref(&name)
    }

    /// Runs a Rust closure on each exchange.
    pub fn process<F>(self, f: F) -> Self
    where
        F: Fn(Exchange) -> Result<Exchange, CamelError> + Send + Sync + 'static,
    {
        self.process_named(BoxProcessor::sync(f))
    }

    /// Runs any processor (for asynchronous Rust code or tower services).
    pub fn process_with(self, processor: BoxProcessor) -> Self {
        self.process_named(processor)
    }

    /// Runs a processor registered in the context under `name`.
    pub fn process_ref(self, name: &str) -> Self {
        self.step_config(Process {
            reference: name.into(),
        })
    }

    /// Resequences the exchanges: the steps after this one form the continuation.
    ///
    /// ```
    /// use camel_core::builder::{header, Resequence, RouteBuilder};
    /// let route = RouteBuilder::from("direct:in")
    ///     .resequence(Resequence::stream(header("seq")).capacity(1000))
    ///     .to("log:ordered")
    ///     .build();
    /// assert_eq!(route.steps[0].name, "resequence");
    /// ```
    pub fn resequence(self, config: Resequence) -> Self {
        self.step_config(config)
    }

    /// Sends a copy of the exchange to each nested step (each step is a branch) and
    /// combines the results as `multicast` says.
    ///
    /// ```
    /// use camel_core::builder::{Multicast, RouteBuilder, Strategy};
    /// let route = RouteBuilder::from("direct:in")
    ///     .multicast(Multicast::parallel().strategy(Strategy::CollectAll), |b| {
    ///         b.to("direct:a").to("direct:b")
    ///     })
    ///     .build();
    /// assert_eq!(route.steps[0].config["steps"].as_array().map(Vec::len), Some(2));
    /// ```
    pub fn multicast(
        mut self,
        mut multicast: Multicast,
        branches: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        multicast.steps = self.nested_steps(branches);
        self.step_config(multicast)
    }

    /// Runs `steps` in one database transaction: committed when they succeed, rolled back
    /// when one fails. `datasource` names the database (a component's default when `None`).
    pub fn transacted(
        mut self,
        datasource: Option<&str>,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        let steps = self.nested_steps(steps);
        self.step_config(Transacted {
            datasource: datasource.map(str::to_string),
            steps,
        })
    }

    /// Scatter-gather: a parallel multicast (Camel's stateless form).
    pub fn scatter_gather(
        mut self,
        strategy: Strategy,
        branches: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        let multicast = Multicast {
            steps: self.nested_steps(branches),
            ..Multicast::parallel().strategy(strategy)
        };
        self.step("scatter_gather", multicast)
    }

    /// The finished definition.
    pub fn build(self) -> RouteDefinition {
        self.route
    }
}

/// Builds the branches of a `choice`.
#[derive(Debug, Default)]
#[must_use]
pub struct ChoiceBuilder {
    choice: Choice,
    processors: std::collections::HashMap<String, BoxProcessor>,
    layers: std::collections::HashMap<String, camel_eip::layer::ProcessorLayer>,
}

impl ChoiceBuilder {
    fn steps_of(&mut self, f: impl FnOnce(RouteBuilder) -> RouteBuilder) -> Vec<StepDefinition> {
        let nested = f(RouteBuilder::nested()).route;
        self.processors.extend(nested.processors);
        self.layers.extend(nested.layers);
        nested.steps
    }

    /// A branch taken when `predicate` holds (the first matching branch wins).
    pub fn when(
        mut self,
        predicate: ExpressionDefinition,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        let mut when: When = with_expression(predicate);
        when.steps = self.steps_of(steps);
        self.choice.when.push(when);
        self
    }

    /// The branch taken when no `when` matched.
    pub fn otherwise(mut self, steps: impl FnOnce(RouteBuilder) -> RouteBuilder) -> Self {
        let steps = self.steps_of(steps);
        self.choice.otherwise = Some(Otherwise { steps });
        self
    }
}
