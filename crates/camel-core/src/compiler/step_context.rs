use std::sync::Arc;

use camel_api::suggest::nearest;
use camel_api::{BoxExpression, BoxPredicate, BoxProcessor, Endpoint, StepLifecycle};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value as Json};

use super::decode::decode;
use super::expression::{take_expression, ExpressionSpec, SpecError};
use crate::context::Registry;
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

    /// The configuration as a map (`null` counts as empty).
    pub fn object(&self, config: &Json) -> Result<Map<String, Json>, RouteError> {
        match config {
            Json::Object(m) => Ok(m.clone()),
            Json::Null => Ok(Map::new()),
            _ => Err(self.error(RouteErrorKind::InvalidValue(
                "this step takes a map of options".into(),
            ))),
        }
    }

    fn spec(&self, map: &mut Map<String, Json>) -> Result<ExpressionSpec, RouteError> {
        let languages = self.registry.languages.names();
        take_expression(map, &languages).map_err(|e| match e {
            // A key close to a language name (`simpl:`) is a misspelt expression: name it
            // where it is written rather than report the expression as missing.
            SpecError::Missing => match map.keys().find_map(|k| {
                camel_api::suggest::nearest(k, languages.iter().copied()).map(|s| (k, s))
            }) {
                Some((key, suggestion)) => self.error_at(
                    &format!("/{key}"),
                    RouteErrorKind::UnknownKey {
                        key: key.clone(),
                        suggestion: Some(suggestion.to_string()),
                        expected: Vec::new(),
                    },
                ),
                None => self.error(RouteErrorKind::Missing(format!(
                    "an expression (`simple: …`, `expression: {{simple: …}}`, or another language: {})",
                    languages.join(", ")
                ))),
            },
            SpecError::Invalid { pointer, message } => {
                self.error_at(&pointer, RouteErrorKind::InvalidValue(message))
            }
        })
    }

    fn language(&self, spec: &ExpressionSpec) -> Result<Arc<dyn camel_api::Language>, RouteError> {
        self.registry.languages.get(&spec.language).ok_or_else(|| {
            self.error_at(
                &spec.pointer,
                RouteErrorKind::InvalidValue(format!("unknown language `{}`", spec.language)),
            )
        })
    }

    /// Takes the expression out of `map` (any of the accepted spellings) and compiles it.
    pub fn take_expression(
        &self,
        map: &mut Map<String, Json>,
    ) -> Result<BoxExpression, RouteError> {
        let spec = self.spec(map)?;
        self.language(&spec)?
            .expression(&spec.text, &spec.options)
            .map_err(|e| self.error_at(&spec.pointer, RouteErrorKind::Expression(e)))
    }

    /// Takes the predicate out of `map` and compiles it.
    pub fn take_predicate(&self, map: &mut Map<String, Json>) -> Result<BoxPredicate, RouteError> {
        let spec = self.spec(map)?;
        self.language(&spec)?
            .predicate(&spec.text, &spec.options)
            .map_err(|e| self.error_at(&spec.pointer, RouteErrorKind::Expression(e)))
    }

    /// Compiles an expression given as text in `language`, located at `relative`.
    pub fn expression_text(
        &self,
        language: &str,
        text: &str,
        relative: &str,
    ) -> Result<BoxExpression, RouteError> {
        let spec = ExpressionSpec {
            language: language.to_string(),
            text: text.to_string(),
            options: Map::new(),
            pointer: relative.to_string(),
        };
        self.language(&spec)?
            .expression(text, &spec.options)
            .map_err(|e| self.error_at(relative, RouteErrorKind::Expression(e)))
    }

    /// Fails when `map` still has keys, naming the first and the nearest of `known`.
    pub fn no_more_keys(&self, map: &Map<String, Json>, known: &[&str]) -> Result<(), RouteError> {
        match map.keys().next() {
            None => Ok(()),
            Some(key) => Err(self.error_at(
                &format!("/{key}"),
                RouteErrorKind::UnknownKey {
                    key: key.clone(),
                    suggestion: nearest(key, known.iter().copied()).map(str::to_string),
                    expected: known.iter().map(|s| s.to_string()).collect(),
                },
            )),
        }
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
        steps: &Json,
        relative: &str,
    ) -> Result<BoxProcessor, RouteError> {
        let list = step_list(steps)
            .map_err(|(at, kind)| self.error_at(&format!("{relative}{at}"), kind))?;
        let pointer = format!("{}{relative}", self.pointer);
        let path = format!("{}{}", self.path, pointer_to_path(relative));
        compile_list(
            self.registry,
            self.route,
            self.route_id,
            &list,
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
        item: &Json,
        relative: &str,
    ) -> Result<BoxProcessor, RouteError> {
        let mut list = step_list(&Json::Array(vec![item.clone()]))
            .map_err(|(_, kind)| self.error_at(relative, kind))?;
        let Some(step) = list.pop() else {
            return Err(self.error_at(relative, RouteErrorKind::InvalidValue("empty step".into())));
        };
        compile_one(
            self.registry,
            self.route,
            self.route_id,
            &step,
            &format!("{}{relative}", self.pointer),
            &format!("{}{}", self.path, pointer_to_path(relative)),
            self.depth + 1,
            self.lifecycles,
        )
    }
}

/// Reads a JSON list of steps.
pub(crate) fn step_list(steps: &Json) -> Result<Vec<StepDefinition>, (String, RouteErrorKind)> {
    let items = match steps {
        Json::Array(items) => items,
        Json::Null => return Ok(Vec::new()),
        _ => {
            return Err((
                String::new(),
                RouteErrorKind::InvalidValue("`steps` takes a list of steps".into()),
            ))
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Json::String(name) => Ok(StepDefinition::new(name.clone(), Json::Null)),
            Json::Object(m) if m.len() == 1 => {
                let (name, config) = m
                    .iter()
                    .next()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .ok_or_else(|| {
                        (
                            format!("/{i}"),
                            RouteErrorKind::InvalidValue("empty step".into()),
                        )
                    })?;
                Ok(StepDefinition::new(name, config))
            }
            _ => Err((
                format!("/{i}"),
                RouteErrorKind::InvalidValue(
                    "a step is a map with exactly one key, the step name".into(),
                ),
            )),
        })
        .collect()
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
    let mut cx = StepContext {
        registry,
        route,
        route_id,
        pointer: format!("{item_pointer}/{}", step.name),
        path: format!("{item_path}.{}", step.name),
        depth,
        lifecycles,
    };
    let Some(compiler) = registry.steps.get(&step.name) else {
        let names = registry.steps.names();
        return Err(cx.error(RouteErrorKind::UnknownKey {
            key: step.name.clone(),
            suggestion: nearest(&step.name, names.iter().copied()).map(str::to_string),
            expected: Vec::new(),
        }));
    };
    let processor = compiler.compile(&step.config, &mut cx)?;
    Ok(camel_eip::trace::traced(processor, route_id, &cx.path))
}
