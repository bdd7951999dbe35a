use std::sync::Arc;

use camel_api::definition::{
    ExpressionDefinition, ExpressionSlotError, StepConfig, WithExpression,
};
use camel_api::suggest::nearest;
use camel_api::{BoxExpression, BoxPredicate, BoxProcessor, Endpoint, Language, StepLifecycle};
use serde::de::DeserializeOwned;
use serde_json::Value as Json;

use super::decode::{decode, decode_step};
use crate::compiler::Registry;
use crate::error::{RouteError, RouteErrorKind};
use crate::model::{EndpointDefinition, RouteDefinition, StepDefinition};

/// What a step compiler sees while it compiles one step: where the step is (for errors),
/// the context's registries, and the route's lifecycle collector.
pub struct StepContext<'a> {
    pub(crate) registry: &'a Registry,
    pub(crate) route: &'a RouteDefinition,
    pub(crate) route_id: &'a str,
    /// Absolute JSON pointer of this step's configuration.
    pub(crate) pointer: String,
    /// Human-readable path (`steps[2].filter`).
    pub(crate) path: String,
    pub(crate) depth: usize,
    pub(crate) lifecycles: &'a mut Vec<Arc<dyn StepLifecycle>>,
}

impl std::fmt::Debug for StepContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepContext")
            .field("route_id", &self.route_id)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl<'a> StepContext<'a> {
    /// The route id.
    pub fn route_id(&self) -> &str {
        self.route_id
    }

    /// The step's path within the route, for messages.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The step's Camel node id (`id:` beside its options), if it has one.
    pub fn node_id(&self) -> Option<&str> {
        let name = self.pointer.rsplit('/').next()?;
        self.path
            .rsplit_once(&format!(".{name}#"))
            .map(|(_, id)| id)
    }

    /// True for a step directly in the route's step list (not nested in another step).
    pub fn is_top_level(&self) -> bool {
        self.depth == 0
    }

    /// An error located at this step.
    pub fn error(&self, kind: RouteErrorKind) -> RouteError {
        self.error_at("", kind)
    }

    /// An error located at `relative` (a JSON pointer below this step's configuration).
    pub fn error_at(&self, relative: &str, kind: RouteErrorKind) -> RouteError {
        let location = self
            .route
            .source
            .as_ref()
            .and_then(|s| s.locate(&format!("{}{relative}", self.pointer)));
        RouteError::new(kind)
            .at(location)
            .in_route(Some(self.route_id))
            .in_step(Some(self.path.clone()))
    }

    /// Decodes the configuration into a typed struct (unknown keys are errors).
    pub fn decode<T: DeserializeOwned>(&self, config: &Json) -> Result<T, RouteError> {
        decode(config).map_err(|(pointer, kind)| self.error_at(&pointer, kind))
    }

    /// Decodes the step's configuration through its [`StepConfig`]: a map, `null`, or the
    /// step's scalar shorthand. Errors point at the offending key.
    pub fn config<T: StepConfig>(&self, config: &Json) -> Result<T, RouteError> {
        decode_step(config).map_err(|(pointer, kind)| self.error_at(&pointer, kind))
    }

    /// The one expression of `config`, located; `relative` is where `config` sits below
    /// this step (empty for the step's own options).
    fn expression_of<T: WithExpression>(
        &self,
        config: &T,
        relative: &str,
    ) -> Result<(String, ExpressionDefinition), RouteError> {
        match config.expression() {
            Ok((at, e)) => Ok((format!("{relative}{at}"), e)),
            Err(ExpressionSlotError::Several { second }) => Err(self.error_at(
                &format!("{relative}{second}"),
                RouteErrorKind::InvalidValue(
                    "more than one expression given; keep one language key".into(),
                ),
            )),
            Err(_) => Err(self.error_at(
                relative,
                RouteErrorKind::Missing(format!(
                    "an expression (`simple: …`, `expression: {{simple: …}}`, or another language: {})",
                    self.registry.language_names().join(", ")
                )),
            )),
        }
    }

    fn language(
        &self,
        e: &ExpressionDefinition,
        at: &str,
    ) -> Result<Arc<dyn Language>, RouteError> {
        // Camel's spelling of a language registered in snake_case (`exchangeProperty`).
        let registered = self.registry.language(&e.language).or_else(|| {
            self.registry
                .language(&camel_api::suggest::to_snake_case(&e.language))
        });
        registered.ok_or_else(|| {
            if let Some(message) = crate::model::camel_dsl::unsupported(
                crate::model::camel_dsl::Kind::Language,
                &camel_api::suggest::to_snake_case(&e.language),
            ) {
                return self.error_at(at, RouteErrorKind::InvalidValue(message));
            }
            let names = self.registry.language_names();
            self.error_at(
                at,
                RouteErrorKind::InvalidValue(format!(
                    "unknown language `{}`{} (known: {})",
                    e.language,
                    nearest(&e.language, names.iter().copied())
                        .map(|s| format!(", did you mean `{s}`?"))
                        .unwrap_or_default(),
                    names.join(", ")
                )),
            )
        })
    }

    /// Compiles `e` as an expression; errors are located at `relative`.
    pub fn expression(
        &self,
        e: &ExpressionDefinition,
        relative: &str,
    ) -> Result<BoxExpression, RouteError> {
        let language = self.language(e, relative)?;
        camel_api::compiling_route(self.route_id, || language.expression(&e.text, &e.options))
            .map_err(|x| self.error_at(relative, RouteErrorKind::Expression(x)))
    }

    /// Compiles `e` as a predicate; errors are located at `relative`.
    pub fn predicate(
        &self,
        e: &ExpressionDefinition,
        relative: &str,
    ) -> Result<BoxPredicate, RouteError> {
        let language = self.language(e, relative)?;
        camel_api::compiling_route(self.route_id, || language.predicate(&e.text, &e.options))
            .map_err(|x| self.error_at(relative, RouteErrorKind::Expression(x)))
    }

    /// Compiles the expression of a configuration made with
    /// [`expression_config!`](camel_api::expression_config) found at `relative`.
    pub fn expression_in<T: WithExpression>(
        &self,
        config: &T,
        relative: &str,
    ) -> Result<BoxExpression, RouteError> {
        let (at, e) = self.expression_of(config, relative)?;
        self.expression(&e, &at)
    }

    /// Compiles the expression of a step that yields endpoint URIs (recipient list,
    /// routing slip, dynamic router, enricher): a `simple` template is compiled as a
    /// URI template ([`StepContext::uri_template`]), so the values it splices in are
    /// encoded; a lone function or another language yields whole URIs as before.
    pub fn uri_expression_in<T: WithExpression>(
        &self,
        config: &T,
        relative: &str,
    ) -> Result<BoxExpression, RouteError> {
        let (at, e) = self.expression_of(config, relative)?;
        // `trim` was applied when the definition was read; no other option changes the text.
        let plain = e.options.keys().all(|k| k == camel_api::definition::TRIM);
        if e.language == "simple" && plain {
            return self.uri_template(&e.text, false, &at);
        }
        self.expression(&e, &at)
    }

    /// Compiles the predicate of a configuration made with
    /// [`expression_config!`](camel_api::expression_config) found at `relative`.
    pub fn predicate_in<T: WithExpression>(
        &self,
        config: &T,
        relative: &str,
    ) -> Result<BoxPredicate, RouteError> {
        let (at, e) = self.expression_of(config, relative)?;
        self.predicate(&e, &at)
    }

    /// Compiles an expression given as text in `language`, located at `relative`.
    pub fn expression_text(
        &self,
        language: &str,
        text: &str,
        relative: &str,
    ) -> Result<BoxExpression, RouteError> {
        self.expression(&ExpressionDefinition::new(language, text), relative)
    }

    /// Compiles the `simple` template of a URI resolved per exchange, located at
    /// `relative`: the values it splices in are percent-encoded
    /// ([`camel_language::simple_uri`]) unless `raw` (the step's `raw_values`) says to
    /// splice them as they are.
    pub fn uri_template(
        &self,
        text: &str,
        raw: bool,
        relative: &str,
    ) -> Result<BoxExpression, RouteError> {
        if raw {
            return self.expression_text("simple", text, relative);
        }
        camel_api::compiling_route(self.route_id, || camel_language::simple_uri(text))
            .map_err(|x| self.error_at(relative, RouteErrorKind::Expression(x)))
    }

    /// Resolves an endpoint (collecting its lifecycle, if any).
    pub fn endpoint(
        &mut self,
        def: &EndpointDefinition,
        relative: &str,
    ) -> Result<Arc<dyn Endpoint>, RouteError> {
        let endpoint = self
            .registry
            .endpoint(def, Some(self.route_id))
            .map_err(|kind| self.error_at(relative, kind))?;
        if let Some(l) = endpoint.lifecycle() {
            self.lifecycles.push(l);
        }
        Ok(endpoint)
    }

    /// A producer for the endpoint `uri` (a dead letter, say); errors are located at
    /// `relative`.
    pub fn producer(&mut self, uri: &str, relative: &str) -> Result<BoxProcessor, RouteError> {
        let endpoint = self.endpoint(&EndpointDefinition::new(uri.to_string()), relative)?;
        endpoint
            .producer()
            .map_err(|e| self.error_at(relative, RouteErrorKind::Endpoint(e)))
    }

    /// The transaction manager for `datasource` (a component's default database when
    /// `None`); errors are located at `relative`.
    pub fn transaction_manager(
        &self,
        datasource: Option<&str>,
        relative: &str,
    ) -> Result<Arc<dyn camel_api::transaction::TransactionManager>, RouteError> {
        match self
            .registry
            .transaction_manager(datasource, Some(self.route_id))
        {
            Ok(Some(manager)) => Ok(manager),
            Ok(None) => Err(self.error_at(
                relative,
                RouteErrorKind::InvalidValue(format!(
                    "no registered component manages transactions{} (register the outbox component)",
                    datasource
                        .map(|d| format!(" on `{}`", camel_api::redact_url(d)))
                        .unwrap_or_default()
                )),
            )),
            Err(e) => Err(self.error_at(relative, RouteErrorKind::Endpoint(e))),
        }
    }

    /// Registers a step's background work with the route.
    pub fn add_lifecycle(&mut self, lifecycle: Arc<dyn StepLifecycle>) {
        self.lifecycles.push(lifecycle);
    }

    /// A Rust processor registered under `name` (by the builder's `process` step or in the
    /// context's resources).
    pub fn processor(&self, name: &str) -> Option<BoxProcessor> {
        self.route
            .processors
            .get(name)
            .cloned()
            .or_else(|| self.registry.processor(name))
    }

    /// Compiles a nested step list found at `relative` (below this step) into one pipeline.
    pub fn compile_steps(
        &mut self,
        steps: &[StepDefinition],
        relative: &str,
    ) -> Result<BoxProcessor, RouteError> {
        let pointer = format!("{}{relative}", self.pointer);
        let path = format!("{}{}", self.path, pointer_to_path(relative));
        compile_list(
            self.registry,
            self.route,
            self.route_id,
            steps,
            &pointer,
            &path,
            self.depth + 1,
            self.lifecycles,
        )
    }
}

/// A JSON pointer below a step as a path suffix: `/when/0/steps` → `.when[0].steps`.
fn pointer_to_path(pointer: &str) -> String {
    let mut path = String::new();
    for part in pointer.split('/').filter(|p| !p.is_empty()) {
        if part.bytes().all(|b| b.is_ascii_digit()) {
            path.push_str(&format!("[{part}]"));
        } else {
            path.push('.');
            path.push_str(&part.replace("~1", "/").replace("~0", "~"));
        }
    }
    path
}

impl StepContext<'_> {
    /// Compiles the one step found at `relative` (below this step), e.g. a branch of a
    /// multicast.
    pub fn compile_step(
        &mut self,
        step: &StepDefinition,
        relative: &str,
    ) -> Result<BoxProcessor, RouteError> {
        compile_one(
            self.registry,
            self.route,
            self.route_id,
            step,
            &format!("{}{relative}", self.pointer),
            &format!("{}{}", self.path, pointer_to_path(relative)),
            self.depth + 1,
            self.lifecycles,
        )
    }
}

/// Compiles a list of steps whose list node is at `pointer` into one pipeline.
#[allow(clippy::too_many_arguments)]
pub(crate) fn compile_list(
    registry: &Registry,
    route: &RouteDefinition,
    route_id: &str,
    steps: &[StepDefinition],
    pointer: &str,
    path: &str,
    depth: usize,
    lifecycles: &mut Vec<Arc<dyn StepLifecycle>>,
) -> Result<BoxProcessor, RouteError> {
    let steps = &*super::steps::layer::nest_open_layers(steps);
    let mut processors = Vec::with_capacity(steps.len());
    for (i, step) in steps.iter().enumerate() {
        processors.push(compile_one(
            registry,
            route,
            route_id,
            step,
            &format!("{pointer}/{i}"),
            &format!("{path}[{i}]"),
            depth,
            lifecycles,
        )?);
    }
    Ok(camel_eip::pipeline::pipeline(processors))
}

/// Compiles one step whose list item is at `item_pointer`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn compile_one(
    registry: &Registry,
    route: &RouteDefinition,
    route_id: &str,
    step: &StepDefinition,
    item_pointer: &str,
    item_path: &str,
    depth: usize,
    lifecycles: &mut Vec<Arc<dyn StepLifecycle>>,
) -> Result<BoxProcessor, RouteError> {
    let redelivery = super::errors::NestedRedelivery::enter(depth, &step.name);
    // Camel's node options, on any step: `id` names the step (in errors, spans and the
    // admin API), `description` documents it, `disabled: true` leaves it out.
    let (config, node) = super::node_options::node_options(&step.config);
    let named = match &node.id {
        Some(id) => format!("{item_path}.{}#{id}", step.name),
        None => format!("{item_path}.{}", step.name),
    };
    let mut cx = StepContext {
        registry,
        route,
        route_id,
        pointer: format!("{item_pointer}/{}", step.name),
        path: named,
        depth,
        lifecycles,
    };
    if node.disabled {
        return Ok(BoxProcessor::identity());
    }
    let Some(compiler) = registry.step(&step.name) else {
        if let Some(message) =
            crate::model::camel_dsl::unsupported(crate::model::camel_dsl::Kind::Eip, &step.name)
        {
            // Named as the file wrote it (`transformDataType`), as the path is.
            let written = cx
                .route
                .source
                .as_ref()
                .map(|s| s.spell_path(&format!("{item_path}.{}", step.name)))
                .and_then(|p| p.rsplit('.').next().map(str::to_string))
                .filter(|w| !w.is_empty())
                .unwrap_or_else(|| step.name.clone());
            let message = message.replacen(&format!("`{}`", step.name), &format!("`{written}`"), 1);
            // A `script` in Groovy or another JVM language could not run even if the step
            // were here: the language is what the author must change, so say that.
            let message = script_language(&step.name, &config)
                .and_then(|language| {
                    crate::model::camel_dsl::unsupported(
                        crate::model::camel_dsl::Kind::Language,
                        language,
                    )
                })
                .filter(|m| m.contains("JVM"))
                .unwrap_or(message);
            return Err(cx.error(RouteErrorKind::InvalidValue(message)));
        }
        let names = registry.step_names();
        return Err(cx.error(RouteErrorKind::UnknownKey {
            key: step.name.clone(),
            suggestion: nearest(&step.name, names.iter().map(String::as_str)).map(str::to_string),
            expected: Vec::new(),
        }));
    };
    let processor = compiler.compile(&config, &mut cx)?;
    let processor = camel_eip::trace::traced(processor, route_id, &cx.path);
    let step_id = node.id.as_deref().unwrap_or(cx.path.as_str());
    // A duration histogram per step, only when step timing is on (Camel's message history).
    let processor = crate::observe::metrics::timed_step(processor, route_id, step_id);
    // A span per step, only when the installed tracer asks for step spans.
    let processor =
        crate::observe::traced::wrap_step_span(processor, route_id, step_id, &step.name);
    // The backlog tracer's hook, only in a route armed for tracing (ADR 0132).
    let processor = crate::observe::backlog::wrap_step(
        registry.tracer().hook(route_id),
        processor,
        step_id,
        &step.name,
        depth,
    );
    let path = cx.path.clone();
    let site = super::intercept::Site {
        registry,
        route,
        route_id,
        depth,
    };
    let processor = site.around_step(&step.name, &config, processor, lifecycles)?;
    Ok(match &redelivery.wrap_with {
        Some(handler) => handler.wrap_as(
            processor,
            &path,
            camel_eip::error_handler::ChannelRole::RedeliverOnly,
        ),
        None => processor,
    })
}

/// The language of a `script` step (`script: {groovy: …}` or
/// `script: {expression: {groovy: …}}`), when `name` is `script`.
fn script_language<'a>(name: &str, config: &'a Json) -> Option<&'a str> {
    if name != "script" {
        return None;
    }
    let map = config.as_object()?;
    let inner = match map.get("expression").and_then(Json::as_object) {
        Some(expression) => expression,
        None => map,
    };
    inner.keys().map(String::as_str).find(|k| *k != "id")
}
