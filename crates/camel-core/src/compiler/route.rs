//! Compiling a whole route: the source endpoint, the steps, and the continuation boundary
//! at a top-level `resequence`.

use std::sync::Arc;

use camel_api::StepLifecycle;
use serde_json::Value as Json;

use super::decode::decode;
use super::step_context::{compile_list, StepContext};
use super::{CompiledRoute, PipelineAssembly};
use crate::compiler::Registry;
use crate::error::Location;
use crate::error::{RouteError, RouteErrorKind};
use crate::model::{EndpointDefinition, RouteDefinition, StepDefinition};

/// Compiles `route` (whose id is already assigned) against the context's registries.
pub fn compile_route(
    registry: &Registry,
    route: &RouteDefinition,
) -> Result<CompiledRoute, RouteError> {
    compile_route_reporting_all(registry, route).map_err(|mut errors| errors.swap_remove(0))
}

/// Like [`compile_route`], but on failure returns every error it can find: the source's
/// and each failing top-level step's (a nested list still reports its first), so that
/// `camel validate` shows a file's mistakes in one run. Never an empty list.
pub fn compile_route_reporting_all(
    registry: &Registry,
    route: &RouteDefinition,
) -> Result<CompiledRoute, Vec<RouteError>> {
    compile_every_error(registry, route).map_err(|errors| {
        let Some(source) = &route.source else {
            return errors;
        };
        // Names as the file spells them (`setHeaders`, not `set_headers`).
        let spelling = source.spelling();
        errors
            .into_iter()
            .map(|mut e| {
                e.step = e.step.map(|p| source.spell_path(&p));
                e.kind = e.kind.spelt(spelling);
                e
            })
            .collect()
    })
}

fn compile_every_error(
    registry: &Registry,
    route: &RouteDefinition,
) -> Result<CompiledRoute, Vec<RouteError>> {
    match compile_first_error(registry, route) {
        Ok(c) => Ok(c),
        Err(first) => {
            // A rule that only the whole list shows (a resequencer's continuation) is not
            // found step by step: the first error is kept whatever the search finds.
            let shown = first.to_string();
            let mut errors = every_error(registry, route);
            if !errors.iter().any(|e| e.to_string() == shown) {
                errors.insert(0, first);
            }
            Err(errors)
        }
    }
}

/// The parameter of `from` that carries Camel's `variableReceive` (Camel 4.4): the YAML
/// reader puts the option there, a builder may too. It is taken off before the endpoint
/// is made: the received body goes into the variable, the message goes on without it.
pub const VARIABLE_RECEIVE: &str = "variableReceive";

/// `from` without [`VARIABLE_RECEIVE`], and the variable it names.
fn receive_variable(
    from: &EndpointDefinition,
) -> (std::borrow::Cow<'_, EndpointDefinition>, Option<Json>) {
    if !from.parameters.contains_key(VARIABLE_RECEIVE) {
        return (std::borrow::Cow::Borrowed(from), None);
    }
    let mut from = from.clone();
    let name = from.parameters.remove(VARIABLE_RECEIVE);
    (std::borrow::Cow::Owned(from), name)
}

/// The step that moves the received body into the variable `name` (a JSON string).
fn receive_step(
    name: &Json,
    locate: impl Fn(&str) -> Option<Location>,
    id: &str,
) -> Result<camel_api::BoxProcessor, RouteError> {
    let parsed = match name {
        Json::String(n) => {
            camel_api::variables::Variable::parse(n).map_err(|e| format!("`{n}`: {e}"))
        }
        other => Err(format!(
            "`variable_receive` takes a variable name, not `{other}`"
        )),
    };
    parsed
        .map(camel_eip::variable::receive_into)
        .map_err(|why| {
            RouteError::new(RouteErrorKind::InvalidValue(why))
                .at(locate("/from/variable_receive"))
                .in_route(Some(id))
                .in_step(Some("from".into()))
        })
}

/// The errors of the source and of each top-level step, compiled on their own.
fn every_error(registry: &Registry, route: &RouteDefinition) -> Vec<RouteError> {
    let id = route.id.clone().unwrap_or_default();
    let mut errors = Vec::new();
    let (from, receive) = receive_variable(&route.from);
    if let Some(name) = &receive {
        let locate = |suffix: &str| {
            route
                .source
                .as_ref()
                .and_then(|s| s.locate(&format!("{}{suffix}", s.route_pointer)))
        };
        if let Err(e) = receive_step(name, locate, &id) {
            errors.push(e);
        }
    }
    if let Err(kind) = registry.endpoint(&from, Some(&id)) {
        let location = route
            .source
            .as_ref()
            .and_then(|s| s.locate(&format!("{}/from/uri", s.route_pointer)));
        errors.push(
            RouteError::new(kind)
                .at(location)
                .in_route(Some(&id))
                .in_step(Some("from".into())),
        );
    }
    let steps_pointer = route
        .source
        .as_ref()
        .map(|s| s.steps_pointer.clone())
        .unwrap_or_default();
    if let Err(e) = check_split_rules(route, &id, &steps_pointer) {
        errors.push(e);
    }
    let mut lifecycles = Vec::new();
    for (i, step) in route.steps.iter().enumerate() {
        // A top-level resequencer compiles only with its continuation (its errors are the
        // first error's); alone it would be refused as nested.
        if step.name == "resequence" {
            continue;
        }
        let pointer = format!("{steps_pointer}/{i}");
        let path = format!("steps[{i}]");
        if let Err(e) = super::step_context::compile_one(
            registry,
            route,
            &id,
            step,
            &pointer,
            &path,
            0,
            &mut lifecycles,
        ) {
            errors.push(e);
            // A nested list reports its first error when compiled whole: each of its
            // steps is compiled on its own too, so the others are found in the same run.
            let mut nested = Nested {
                registry,
                route,
                id: &id,
                lifecycles: &mut lifecycles,
                errors: &mut errors,
            };
            nested.step(step, &pointer, &path, 1);
        }
    }
    errors
}

/// The errors inside the nested step lists of a step that failed.
struct Nested<'a> {
    registry: &'a Registry,
    route: &'a RouteDefinition,
    id: &'a str,
    lifecycles: &'a mut Vec<Arc<dyn StepLifecycle>>,
    errors: &'a mut Vec<RouteError>,
}

impl Nested<'_> {
    /// Past this depth the whole step's first error stands for what is below.
    const MAX_DEPTH: usize = 32;

    fn step(&mut self, step: &StepDefinition, pointer: &str, path: &str, depth: usize) {
        if depth > Self::MAX_DEPTH {
            return;
        }
        self.walk(
            &step.config,
            &format!("{pointer}/{}", step.name),
            &format!("{path}.{}", step.name),
            depth,
        );
    }

    fn walk(&mut self, value: &Json, pointer: &str, path: &str, depth: usize) {
        match value {
            Json::Object(map) => {
                for (key, v) in map {
                    match (key.as_str(), v) {
                        ("steps", Json::Array(items)) => {
                            for (j, item) in items.iter().enumerate() {
                                let p = format!("{pointer}/steps/{j}");
                                let pa = format!("{path}.steps[{j}]");
                                self.one(item, &p, &pa, depth);
                            }
                        }
                        _ => self.walk(
                            v,
                            &format!("{pointer}/{key}"),
                            &format!("{path}.{key}"),
                            depth,
                        ),
                    }
                }
            }
            Json::Array(items) => {
                for (j, item) in items.iter().enumerate() {
                    self.walk(
                        item,
                        &format!("{pointer}/{j}"),
                        &format!("{path}[{j}]"),
                        depth,
                    );
                }
            }
            _ => {}
        }
    }

    fn one(&mut self, item: &Json, pointer: &str, path: &str, depth: usize) {
        let Ok(step) = StepDefinition::from_item(item.clone()) else {
            return;
        };
        if let Err(e) = super::step_context::compile_one(
            self.registry,
            self.route,
            self.id,
            &step,
            pointer,
            path,
            depth,
            self.lifecycles,
        ) {
            let shown = e.to_string();
            if !self.errors.iter().any(|known| known.to_string() == shown) {
                self.errors.push(e);
            }
            self.step(&step, pointer, path, depth + 1);
        }
    }
}

fn compile_first_error(
    registry: &Registry,
    route: &RouteDefinition,
) -> Result<CompiledRoute, RouteError> {
    let id = route.id.clone().unwrap_or_default();
    let source_map = route.source.as_ref();
    let route_location =
        |suffix: &str| source_map.and_then(|s| s.locate(&format!("{}{suffix}", s.route_pointer)));
    if route.from.uri.trim().is_empty() {
        return Err(RouteError::new(RouteErrorKind::MissingFrom)
            .at(route_location(""))
            .in_route(Some(&id)));
    }
    let (from, receive) = receive_variable(&route.from);
    let receive = match &receive {
        Some(name) => Some(receive_step(name, route_location, &id)?),
        None => None,
    };
    let source = registry.endpoint(&from, Some(&id)).map_err(|kind| {
        RouteError::new(kind)
            .at(route_location("/from/uri"))
            .in_route(Some(&id))
            .in_step(Some("from".into()))
    })?;
    let steps_pointer = source_map
        .map(|s| s.steps_pointer.clone())
        .unwrap_or_default();
    check_split_rules(route, &id, &steps_pointer)?;

    let mut lifecycles: Vec<Arc<dyn StepLifecycle>> = Vec::new();
    if let Some(lifecycle) = source.lifecycle() {
        lifecycles.push(lifecycle);
    }
    let handler = super::errors::compile(registry, route, &id, &mut lifecycles)?;
    let top_level = |steps: &[StepDefinition],
                     lifecycles: &mut Vec<Arc<dyn StepLifecycle>>|
     -> Result<camel_api::BoxProcessor, RouteError> {
        match &handler {
            Some(h) => super::errors::compile_handled_list(
                registry,
                route,
                &id,
                steps,
                &steps_pointer,
                "steps",
                h,
                lifecycles,
            ),
            None => compile_list(
                registry,
                route,
                &id,
                steps,
                &steps_pointer,
                "steps",
                0,
                lifecycles,
            ),
        }
    };
    let boundary = route.steps.iter().position(|s| s.name == "resequence");
    let mut pipeline = match boundary {
        None => top_level(&route.steps, &mut lifecycles)?,
        Some(at) => {
            let pre = &route.steps[..at];
            let mut processors = Vec::new();
            if !pre.is_empty() {
                processors.push(top_level(pre, &mut lifecycles)?);
            }
            processors.push(compile_boundary(
                registry,
                route,
                &id,
                at,
                &steps_pointer,
                &mut lifecycles,
            )?);
            camel_eip::pipeline::pipeline(processors)
        }
    };
    if let Some(prefix) = super::intercept::from_prefix(registry, route, &id, &mut lifecycles)? {
        // Behind the route's error handler like any step (redelivered as one block).
        let prefix = match &handler {
            Some(h) => h.wrap(prefix, "intercept_from"),
            None => prefix,
        };
        pipeline = camel_eip::pipeline::pipeline(vec![prefix, pipeline]);
    }
    if let Some(receive) = receive {
        // What the consumer handed over, before anything else (intercepts included).
        pipeline = camel_eip::pipeline::pipeline(vec![receive, pipeline]);
    }
    if handler.as_ref().is_some_and(|h| h.keeps_original()) {
        pipeline = camel_eip::error_handler::keep_original(pipeline);
    }
    let mut pipeline = super::errors::completions(registry, route, &id, pipeline, &mut lifecycles)?;
    if completes_at_end(route) {
        pipeline = camel_eip::unit_of_work::scoped(pipeline);
    }
    let unordered_destinations = super::order::unordered_destinations(registry, route, &*source);
    Ok(CompiledRoute {
        id,
        unordered_destinations,
        source,
        assembly: PipelineAssembly {
            pipeline,
            lifecycles,
        },
    })
}

/// True when `route` has, at any depth, an idempotent consumer that completes when the
/// exchange is done (`completion_eager` false, Camel's default): the route then opens a
/// unit of work per exchange (`camel_eip::unit_of_work`). Other routes pay nothing for it.
fn completes_at_end(route: &RouteDefinition) -> bool {
    fn deferred(config: &Json) -> bool {
        let eager = ["completion_eager", "completionEager"]
            .iter()
            .any(|k| config.get(k).and_then(Json::as_bool) == Some(true));
        !eager
    }
    fn scan(value: &Json) -> bool {
        match value {
            Json::Object(m) => m.iter().any(|(k, v)| {
                (matches!(k.as_str(), "idempotent_consumer" | "idempotentConsumer") && deferred(v))
                    || scan(v)
            }),
            Json::Array(items) => items.iter().any(scan),
            _ => false,
        }
    }
    route
        .steps
        .iter()
        .any(|s| (s.name == "idempotent_consumer" && deferred(&s.config)) || scan(&s.config))
}

/// Compiles the top-level `resequence` at index `at`: the steps after it (its nested
/// `steps`, then the rest of the route) become the continuation its post-driver calls.
fn compile_boundary(
    registry: &Registry,
    route: &RouteDefinition,
    id: &str,
    at: usize,
    steps_pointer: &str,
    lifecycles: &mut Vec<Arc<dyn StepLifecycle>>,
) -> Result<camel_api::BoxProcessor, RouteError> {
    let step = &route.steps[at];
    let item_pointer = format!("{steps_pointer}/{at}");
    let pointer = format!("{item_pointer}/resequence");
    let path = format!("steps[{at}].resequence");
    let mut config = step.config.clone();
    let nested = match &mut config {
        Json::Object(m) => m.remove("steps"),
        _ => None,
    };
    let mut continuation_lifecycles = Vec::new();
    let mut parts = Vec::new();
    if let Some(nested) = nested.filter(|n| !n.is_null()) {
        let list: Vec<StepDefinition> = decode(&nested).map_err(|(p, kind)| {
            RouteError::new(kind)
                .at(route
                    .source
                    .as_ref()
                    .and_then(|s| s.locate(&format!("{pointer}/steps{p}"))))
                .in_route(Some(id))
        })?;
        parts.push(compile_list(
            registry,
            route,
            id,
            &list,
            &format!("{pointer}/steps"),
            &format!("{path}.steps"),
            0,
            &mut continuation_lifecycles,
        )?);
    }
    let rest: Vec<StepDefinition> = route.steps[at + 1..].to_vec();
    if !rest.is_empty() {
        // Steps after the boundary keep their own indices for error locations.
        let mut post = Vec::new();
        for (offset, s) in rest.iter().enumerate() {
            let i = at + 1 + offset;
            post.push(super::step_context::compile_one(
                registry,
                route,
                id,
                s,
                &format!("{steps_pointer}/{i}"),
                &format!("steps[{i}]"),
                0,
                &mut continuation_lifecycles,
            )?);
        }
        parts.push(camel_eip::pipeline::pipeline(post));
    }
    let continuation = camel_eip::pipeline::pipeline(parts);
    let mut cx = StepContext {
        registry,
        route,
        route_id: id,
        pointer,
        path,
        depth: 0,
        lifecycles,
    };
    if let Some(l) = continuation_lifecycles.first() {
        return Err(cx.error(RouteErrorKind::Rejected {
            rule: "resequence",
            message: format!(
                "a step with background work (`{}`) after a resequencer is not supported yet",
                l.name()
            ),
        }));
    }
    super::steps::resequence::compile_top_level(&config, continuation, &mut cx)
}

/// The continuation-boundary rules: N3 (one top-level resequence at most) and N2 (no
/// top-level aggregate that needs its own split beside a resequence). N4 (no nested
/// resequence) is enforced by the `resequence` step compiler itself.
fn check_split_rules(
    route: &RouteDefinition,
    id: &str,
    steps_pointer: &str,
) -> Result<(), RouteError> {
    let locate = |i: usize, name: &str| {
        route
            .source
            .as_ref()
            .and_then(|s| s.locate(&format!("{steps_pointer}/{i}/{name}")))
    };
    let resequences: Vec<usize> = route
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s.name == "resequence")
        .map(|(i, _)| i)
        .collect();
    if let [_, second, ..] = resequences.as_slice() {
        return Err(RouteError::new(RouteErrorKind::Rejected {
            rule: "N3",
            message: "a route may have at most one top-level `resequence`; split the route with `direct:` endpoints".into(),
        })
        .at(locate(*second, "resequence"))
        .in_route(Some(id))
        .in_step(Some(format!("steps[{second}].resequence"))));
    }
    if resequences.is_empty() {
        return Ok(());
    }
    // Every top-level aggregate is tested, not just the first one found.
    for (i, step) in route.steps.iter().enumerate() {
        if step.name == "aggregate" && aggregate_needs_split(&step.config) {
            return Err(RouteError::new(RouteErrorKind::Rejected {
                rule: "N2",
                message: "a top-level `aggregate` with a completion timeout or force_completion_on_stop cannot share a route with a top-level `resequence`; put one of them in its own route".into(),
            })
            .at(locate(i, "aggregate"))
            .in_route(Some(id))
            .in_step(Some(format!("steps[{i}].aggregate"))));
        }
    }
    Ok(())
}

/// True when an aggregate completes on its own timer or on stop, which gives it a split of
/// its own.
pub(crate) fn aggregate_needs_split(config: &Json) -> bool {
    // Read in any spelling (`completionTimeout`, `completion-timeout`): the aggregate's
    // own configuration is not known here.
    let Json::Object(map) = config else {
        return false;
    };
    map.iter().any(|(k, v)| {
        matches!(
            camel_api::suggest::to_snake_case(k).as_str(),
            "completion_timeout" | "completion_interval" | "force_completion_on_stop"
        ) && !v.is_null()
            && v != &Json::Bool(false)
    })
}
