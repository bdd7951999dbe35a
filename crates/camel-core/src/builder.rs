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

use camel_api::{BoxProcessor, CamelError, Exchange};
use serde_json::{json, Map, Value as Json};

use crate::model::{EndpointDefinition, RouteDefinition, StepDefinition};

/// An expression in a route definition: a language and its text (compiled with the route).
#[derive(Clone, Debug, PartialEq)]
pub struct ExpressionDefinition {
    /// The language name.
    pub language: String,
    /// The expression text.
    pub text: String,
    /// Language options (`suppress_exceptions` …).
    pub options: Map<String, Json>,
}

impl ExpressionDefinition {
    /// Writes the expression into a step configuration map.
    fn insert_into(self, map: &mut Map<String, Json>) {
        let value = if self.options.is_empty() {
            Json::String(self.text)
        } else {
            let mut o = self.options;
            o.insert("expression".into(), Json::String(self.text));
            Json::Object(o)
        };
        map.insert(self.language, value);
    }
}

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
    ExpressionDefinition {
        language: name.to_string(),
        text: text.into(),
        options: Map::new(),
    }
}

impl ExpressionDefinition {
    /// Adds a language option.
    pub fn option(mut self, name: &str, value: impl Into<Json>) -> Self {
        self.options.insert(name.to_string(), value.into());
        self
    }
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
    pub fn from_endpoint(uri: impl Into<String>, parameters: Json) -> Self {
        let mut b = Self::from(uri);
        if let Json::Object(m) = parameters {
            b.route.from.parameters = m.into_iter().collect();
        }
        b
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

    /// Adds any step by name and configuration (the escape hatch for steps without a
    /// dedicated method).
    pub fn step(mut self, name: &str, config: Json) -> Self {
        self.route.steps.push(StepDefinition::new(name, config));
        self
    }

    fn expression_step(self, name: &str, head: Map<String, Json>, e: ExpressionDefinition) -> Self {
        let mut map = head;
        e.insert_into(&mut map);
        self.step(name, Json::Object(map))
    }

    fn take_steps(&mut self, nested: RouteBuilder) -> Json {
        self.route.processors.extend(nested.route.processors);
        self.route.layers.extend(nested.route.layers);
        serde_json::to_value(nested.route.steps).unwrap_or(Json::Null)
    }

    /// Sends to an endpoint.
    pub fn to(self, uri: impl Into<String>) -> Self {
        self.step("to", Json::String(uri.into()))
    }

    /// Sends to an endpoint with parameters beside the URI.
    pub fn to_endpoint(self, uri: impl Into<String>, parameters: Json) -> Self {
        let mut def = EndpointDefinition::new(uri);
        if let Json::Object(m) = parameters {
            def.parameters = m.into_iter().collect();
        }
        let config = serde_json::to_value(def).unwrap_or(Json::Null);
        self.step("to", config)
    }

    /// Logs a `simple` template.
    pub fn log(self, message: impl Into<String>) -> Self {
        self.step("log", Json::String(message.into()))
    }

    /// Sets a header.
    pub fn set_header(self, name: &str, e: ExpressionDefinition) -> Self {
        let head = Map::from_iter([("name".to_string(), Json::from(name))]);
        self.expression_step("set_header", head, e)
    }

    /// Sets an exchange property.
    pub fn set_property(self, name: &str, e: ExpressionDefinition) -> Self {
        let head = Map::from_iter([("name".to_string(), Json::from(name))]);
        self.expression_step("set_property", head, e)
    }

    /// Replaces the body.
    pub fn set_body(self, e: ExpressionDefinition) -> Self {
        self.expression_step("set_body", Map::new(), e)
    }

    /// Replaces the body (Camel's `transform`).
    pub fn transform(self, e: ExpressionDefinition) -> Self {
        self.expression_step("transform", Map::new(), e)
    }

    /// Removes a header.
    pub fn remove_header(self, name: &str) -> Self {
        self.step("remove_header", json!({ "name": name }))
    }

    /// Removes headers matching a wildcard pattern.
    pub fn remove_headers(self, pattern: &str) -> Self {
        self.step("remove_headers", json!({ "pattern": pattern }))
    }

    /// Removes an exchange property.
    pub fn remove_property(self, name: &str) -> Self {
        self.step("remove_property", json!({ "name": name }))
    }

    /// Runs the nested steps only when the predicate holds.
    pub fn filter(
        mut self,
        predicate: ExpressionDefinition,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        let nested = self.take_steps(steps(RouteBuilder::nested()));
        let head = Map::from_iter([("steps".to_string(), nested)]);
        self.expression_step("filter", head, predicate)
    }

    /// A content-based router.
    pub fn choice(mut self, branches: impl FnOnce(ChoiceBuilder) -> ChoiceBuilder) -> Self {
        let built = branches(ChoiceBuilder::default());
        self.route.processors.extend(built.processors);
        self.route.layers.extend(built.layers);
        let mut map = Map::new();
        map.insert("when".into(), Json::Array(built.whens));
        if let Some(o) = built.otherwise {
            map.insert("otherwise".into(), json!({ "steps": o }));
        }
        self.step("choice", Json::Object(map))
    }

    /// Stops routing this exchange.
    pub fn stop(self) -> Self {
        self.step("stop", Json::Null)
    }

    /// Serialises the body as JSON text.
    pub fn marshal_json(self) -> Self {
        self.step("marshal", json!({ "json": {} }))
    }

    /// Parses the body as JSON.
    pub fn unmarshal_json(self) -> Self {
        self.step("unmarshal", json!({ "json": {} }))
    }

    /// Converts the body (`String`, `bytes`, `json`).
    pub fn convert_body_to(self, to: &str) -> Self {
        self.step("convert_body_to", json!({ "type": to }))
    }

    /// Runs a Rust closure on each exchange.
    pub fn process<F>(mut self, f: F) -> Self
    where
        F: Fn(Exchange) -> Result<Exchange, CamelError> + Send + Sync + 'static,
    {
        let name = format!(
            "process-{}",
            PROCESSOR_NAMES.fetch_add(1, Ordering::Relaxed)
        );
        self.route
            .processors
            .insert(name.clone(), BoxProcessor::sync(f));
        self.step("process", json!({ "ref": name }))
    }

    /// Runs any processor (for asynchronous Rust code or tower services).
    pub fn process_with(mut self, processor: BoxProcessor) -> Self {
        let name = format!(
            "process-{}",
            PROCESSOR_NAMES.fetch_add(1, Ordering::Relaxed)
        );
        self.route.processors.insert(name.clone(), processor);
        self.step("process", json!({ "ref": name }))
    }

    /// Runs a processor registered in the context under `name`.
    pub fn process_ref(self, name: &str) -> Self {
        self.step("process", json!({ "ref": name }))
    }

    /// Resequences the exchanges: the steps after this one form the continuation. `config`
    /// is the YAML form, e.g. `json!({"stream": {"sequence": "${header.seq}"}})`.
    pub fn resequence(self, config: Json) -> Self {
        self.step("resequence", config)
    }

    /// Sends a copy of the exchange to each nested step (each step is a branch) and
    /// combines the results with `strategy` (`last_wins`, `collect_all`, `original`).
    pub fn multicast(
        mut self,
        parallel: bool,
        strategy: &str,
        branches: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        let steps = self.take_steps(branches(RouteBuilder::nested()));
        self.step(
            "multicast",
            json!({ "parallel": parallel, "strategy": strategy, "steps": steps }),
        )
    }

    /// Runs `steps` in one database transaction: committed when they succeed, rolled back
    /// when one fails. `datasource` names the database (a component's default when `None`).
    pub fn transacted(
        mut self,
        datasource: Option<&str>,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        let nested = self.take_steps(steps(RouteBuilder::nested()));
        let mut map = Map::new();
        if let Some(d) = datasource {
            map.insert("datasource".into(), Json::String(d.to_string()));
        }
        map.insert("steps".into(), nested);
        self.step("transacted", Json::Object(map))
    }

    /// Scatter-gather: a parallel multicast (Camel's stateless form).
    pub fn scatter_gather(
        mut self,
        strategy: &str,
        branches: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        let steps = self.take_steps(branches(RouteBuilder::nested()));
        self.step(
            "scatter_gather",
            json!({ "strategy": strategy, "steps": steps }),
        )
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
    whens: Vec<Json>,
    otherwise: Option<Json>,
    processors: std::collections::HashMap<String, BoxProcessor>,
    layers: std::collections::HashMap<String, camel_eip::layer::ProcessorLayer>,
}

impl ChoiceBuilder {
    fn steps_of(&mut self, f: impl FnOnce(RouteBuilder) -> RouteBuilder) -> Json {
        let nested = f(RouteBuilder::nested()).route;
        self.processors.extend(nested.processors);
        self.layers.extend(nested.layers);
        serde_json::to_value(nested.steps).unwrap_or(Json::Null)
    }

    /// A branch taken when `predicate` holds (the first matching branch wins).
    pub fn when(
        mut self,
        predicate: ExpressionDefinition,
        steps: impl FnOnce(RouteBuilder) -> RouteBuilder,
    ) -> Self {
        let steps = self.steps_of(steps);
        let mut map = Map::from_iter([("steps".to_string(), steps)]);
        predicate.insert_into(&mut map);
        self.whens.push(Json::Object(map));
        self
    }

    /// The branch taken when no `when` matched.
    pub fn otherwise(mut self, steps: impl FnOnce(RouteBuilder) -> RouteBuilder) -> Self {
        self.otherwise = Some(self.steps_of(steps));
        self
    }
}
