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
    RemoveHeaders, RemoveProperty, RemoveVariable, SetBody, SetExchangePattern, SetHeader,
    SetProperty, SetVariable, Step, Stop, Transacted, Unmarshal, Validate, When,
};
use serde::Serialize;
use serde_json::Value as Json;

pub use camel_api::definition::ExpressionDefinition;
pub use camel_api::ExchangePattern;
pub use camel_eip::config::{
    Aggregate, CircuitBreaker, ClaimCheck, ClaimCheckOperation, ConvertHeaderTo, DataFormat, Delay,
    DynamicRouter, Enrich, FailoverBalancer, IdempotentConsumer, LoadBalance, Loop, Multicast,
    PollEnrich, RecipientList, Resequence, RoutingSlip, Sample, SlidingWindowType, Sort, Split,
    Strategy, Throttle, ToD, Tokenize, WireTap,
};
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
pub(crate) fn with_expression<C: WithExpression + Default>(e: ExpressionDefinition) -> C {
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

    /// Calls a method of a registered bean (`bean: {ref, method}`, ADR 0076).
    ///
    /// ```
    /// use camel_core::model::BeanStep;
    /// use camel_core::RouteBuilder;
    /// let route = RouteBuilder::from("direct:in")
    ///     .bean(BeanStep::reference("greeter").method("hello"))
    ///     .build();
    /// assert_eq!(route.steps[0].name, "bean");
    /// ```
    pub fn bean(self, config: crate::model::BeanStep) -> Self {
        self.step_config(config)
    }

    /// Declares a bean built from a registered bean type when the route is added, as a
    /// file's top-level `beans:` entry does.
    pub fn declare_bean(mut self, bean: crate::model::BeanDefinition) -> Self {
        self.route.beans.push(bean);
        self
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

    /// Collects exchanges with the same correlation key into one; `steps` run on each
    /// completed group (the incoming exchanges go on unchanged).
    ///
    /// ```
    /// use camel_core::builder::{header, Aggregate, RouteBuilder};
    /// let route = RouteBuilder::from("direct:in")
    ///     .aggregate(
    ///         Aggregate::new(header("orderId"), "GroupedBodyAggregationStrategy")
    ///             .completion_size(3)
    ///             .completion_timeout_ms(2000),
    ///         |b| b.to("log:orders"),
    ///     )
    ///     .build();
    /// assert_eq!(route.steps[0].name, "aggregate");
    /// ```
    pub fn aggregate(
        mut self,
        mut aggregate: Aggregate,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        aggregate.steps = self.nested_steps(steps);
        self.step_config(aggregate)
    }

    /// Runs `steps` once per message id (`id` gives it); `options` sets the repository
    /// and Camel's flags (`IdempotentConsumer::default()` for an in-memory LRU of 1000).
    ///
    /// ```
    /// use camel_core::builder::{header, IdempotentConsumer, RouteBuilder};
    /// let route = RouteBuilder::from("direct:in")
    ///     .idempotent_consumer(header("id"), IdempotentConsumer::default(), |b| b.to("log:once"))
    ///     .build();
    /// assert_eq!(route.steps[0].name, "idempotent_consumer");
    /// ```
    pub fn idempotent_consumer(
        mut self,
        id: ExpressionDefinition,
        mut options: IdempotentConsumer,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        options.set_expression(id);
        options.steps = self.nested_steps(steps);
        self.step_config(options)
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

    /// Splits each exchange into parts (as `split` says) and runs `steps` for each.
    ///
    /// ```
    /// use camel_core::builder::{RouteBuilder, Split, Tokenize};
    /// let route = RouteBuilder::from("file:inbox")
    ///     .split(Split::tokenize(Tokenize::token("\n")).streaming(true), |b| b.to("log:line"))
    ///     .build();
    /// assert_eq!(route.steps[0].name, "split");
    /// ```
    pub fn split(
        mut self,
        mut split: Split,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        split.steps = self.nested_steps(steps);
        self.step_config(split)
    }

    /// Splits each exchange into the parts `e` gives (a JSONPath, a `simple` list, …).
    pub fn split_by(
        self,
        e: ExpressionDefinition,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        self.split(with_expression(e), steps)
    }

    /// Lets at most N exchanges per period go on (see [`Throttle`]).
    pub fn throttle(self, throttle: Throttle) -> Self {
        self.step_config(throttle)
    }

    /// Holds each exchange for the milliseconds `e` gives.
    pub fn delay(self, e: ExpressionDefinition) -> Self {
        self.step_config::<Delay>(with_expression(e))
    }

    /// Runs `steps` as [`Loop`] says (a count, or while a predicate holds).
    ///
    /// ```
    /// use camel_core::builder::{Loop, RouteBuilder};
    /// let route = RouteBuilder::from("direct:in")
    ///     .loop_(Loop::times(3).copy(true), |b| b.to("direct:attempt"))
    ///     .build();
    /// assert_eq!(route.steps[0].name, "loop");
    /// ```
    pub fn loop_(
        mut self,
        mut looping: Loop,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        looping.steps = self.nested_steps(steps);
        self.step_config(looping)
    }

    /// Sorts the list `e` gives (the body when `None`) into the body; `comparator` is
    /// `natural` or `reverse`.
    pub fn sort(self, e: Option<ExpressionDefinition>, comparator: Option<&str>) -> Self {
        let mut sort: Sort = match e {
            Some(e) => with_expression(e),
            None => Sort::default(),
        };
        sort.comparator = comparator.map(str::to_string);
        self.step_config(sort)
    }

    /// Lets one exchange per period (or every Nth) go on; the others stop.
    pub fn sample(self, sample: Sample) -> Self {
        self.step_config(sample)
    }

    /// Sends a copy to every endpoint the list's expression names and aggregates the
    /// replies (see docs/eips.md#recipient-list).
    ///
    /// ```
    /// use camel_core::builder::{header, RecipientList, RouteBuilder};
    /// let route = RouteBuilder::from("direct:in")
    ///     .recipient_list(RecipientList::new(header("to")).parallel().strategy("grouped_body"))
    ///     .build();
    /// assert_eq!(route.steps[0].name, "recipient_list");
    /// ```
    pub fn recipient_list(self, config: RecipientList) -> Self {
        self.step_config(config)
    }

    /// Routes the exchange through the endpoints the slip's expression names, in order.
    pub fn routing_slip(self, config: RoutingSlip) -> Self {
        self.step_config(config)
    }

    /// Routes the exchange to the endpoints the expression names, asking again after each
    /// hop until it returns null.
    pub fn dynamic_router(self, config: DynamicRouter) -> Self {
        self.step_config(config)
    }

    /// Sends to the endpoint a `simple` URI template names (Camel's `toD`).
    pub fn to_d(self, uri: impl Into<String>) -> Self {
        self.step_config(ToD::new(uri))
    }

    /// Sends a copy of the exchange to an endpoint on the tap's own task.
    ///
    /// ```
    /// use camel_core::builder::{RouteBuilder, WireTap};
    /// let route = RouteBuilder::from("direct:in")
    ///     .wire_tap(WireTap::new("seda:audit").queue_size(100))
    ///     .to("log:main")
    ///     .build();
    /// assert_eq!(route.steps[0].config["queue_size"], 100);
    /// ```
    pub fn wire_tap(self, config: WireTap) -> Self {
        self.step_config(config)
    }

    /// A wire tap whose copies are prepared by `prepare`'s steps before they are sent.
    pub fn wire_tap_prepared(
        mut self,
        mut config: WireTap,
        prepare: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        let steps = self.nested_steps(prepare);
        config.on_prepare = Some(camel_eip::config::OnPrepare::Steps(steps));
        self.step_config(config)
    }

    /// Calls an endpoint and merges its reply into the exchange.
    pub fn enrich(self, config: Enrich) -> Self {
        self.step_config(config)
    }

    /// Takes one message from a pollable endpoint and merges it into the exchange.
    pub fn poll_enrich(self, config: PollEnrich) -> Self {
        self.step_config(config)
    }

    /// Parks or takes back the message (Camel's claim check).
    pub fn claim_check(self, config: ClaimCheck) -> Self {
        self.step_config(config)
    }

    /// Sends each exchange to one of the nested steps (each step is a target), chosen as
    /// `balance` says.
    ///
    /// ```
    /// use camel_core::builder::{LoadBalance, RouteBuilder};
    /// let route = RouteBuilder::from("direct:in")
    ///     .load_balance(LoadBalance::weighted(&[3, 1]), |b| b.to("direct:a").to("direct:b"))
    ///     .build();
    /// assert_eq!(route.steps[0].name, "load_balance");
    /// ```
    pub fn load_balance(
        mut self,
        mut balance: LoadBalance,
        targets: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        balance.steps = self.nested_steps(targets);
        self.step_config(balance)
    }

    /// Runs the nested steps behind a circuit breaker (no fallback: a refused exchange
    /// passes on unchanged, or fails with `throw_when_open`).
    pub fn circuit_breaker(
        mut self,
        mut breaker: CircuitBreaker,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        breaker.steps = self.nested_steps(steps);
        self.step_config(breaker)
    }

    /// Runs the nested steps behind a circuit breaker, and `fallback` when they fail, time
    /// out or the circuit is open.
    ///
    /// ```
    /// use std::time::Duration;
    /// use camel_core::builder::{constant, CircuitBreaker, RouteBuilder};
    /// let route = RouteBuilder::from("direct:in")
    ///     .circuit_breaker_with_fallback(
    ///         CircuitBreaker::new().minimum_number_of_calls(5).timeout(Duration::from_secs(2)),
    ///         |b| b.to("http://inventory/stock"),
    ///         |f| f.set_body(constant("unknown")),
    ///     )
    ///     .build();
    /// assert_eq!(route.steps[0].name, "circuit_breaker");
    /// ```
    pub fn circuit_breaker_with_fallback(
        mut self,
        mut breaker: CircuitBreaker,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
        fallback: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        breaker.steps = self.nested_steps(steps);
        breaker.on_fallback = Some(camel_eip::config::OnFallback {
            steps: self.nested_steps(fallback),
        });
        self.step_config(breaker)
    }

    /// Fails the exchange with a `PredicateValidationException` unless `predicate` holds.
    pub fn validate(self, predicate: ExpressionDefinition) -> Self {
        self.step_config(with_expression::<Validate>(predicate))
    }

    /// Sets the exchange pattern for the rest of the route.
    pub fn set_exchange_pattern(self, pattern: ExchangePattern) -> Self {
        self.step_config(SetExchangePattern {
            pattern: pattern.into(),
        })
    }

    /// Sends to an endpoint with its own exchange pattern (restored afterwards).
    pub fn to_with_pattern(self, uri: impl Into<String>, pattern: ExchangePattern) -> Self {
        self.to_endpoint(EndpointDefinition::new(uri).pattern(pattern))
    }

    /// Camel's `step`: the nested steps as one group named `id` (in errors and spans).
    pub fn step_group(
        mut self,
        id: &str,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        let steps = self.nested_steps(steps);
        self.step(
            <Step as StepConfig>::NAME,
            serde_json::json!({"id": id, "steps": steps}),
        )
    }

    /// Converts a header: `to` is `String`, `Integer`, `Long`, `Double`, `Float`,
    /// `Boolean` or `byte[]` (checked when the route is compiled); see
    /// [`ConvertHeaderTo`] for `to_name`, `mandatory` and `charset`.
    pub fn convert_header_to(self, name: &str, to: &str) -> Self {
        self.step_config(ConvertHeaderTo {
            name: name.into(),
            to: to.into(),
            ..Default::default()
        })
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
