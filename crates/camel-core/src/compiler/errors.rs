//! Compiling a route's error handling (ADR 0052): its error handler (the route's or the
//! context's), its `on_exception` clauses, and the channel around each top-level step
//! (and around each step inside a top-level `filter`/`choice`/`loop`, ADR 0091, and
//! `split`, ADR 0092).

use std::sync::Arc;

use camel_api::definition::ExpressionDefinition;
use camel_api::{BoxPredicate, BoxProcessor, StepLifecycle};
use camel_eip::config::{ErrorHandlerConfig, OnException, PredicateOption, RedeliveryPolicyConfig};
use camel_eip::error_handler::{
    ChannelRole, Clause, DeadLetter, Decision, ErrorHandler, HandlerKind, LogLevel,
    RedeliveryPolicy,
};

use super::step_context::StepContext;
use crate::compiler::Registry;
use crate::error::{RouteError, RouteErrorKind};
use crate::model::{EndpointDefinition, RouteDefinition};

/// The route's compiled error handler, or `None` when it would change nothing (the default
/// handler without redelivery or clauses, or `no_error_handler`).
pub(crate) fn compile(
    registry: &Registry,
    route: &RouteDefinition,
    id: &str,
    lifecycles: &mut Vec<Arc<dyn StepLifecycle>>,
) -> Result<Option<Arc<ErrorHandler>>, RouteError> {
    let errors = &route.errors;
    let config = errors
        .error_handler
        .as_ref()
        .or(errors.context_error_handler.as_ref());
    let pointer = errors.pointers.error_handler.clone().unwrap_or_default();
    let mut cx = StepContext {
        registry,
        route,
        route_id: id,
        pointer: pointer.clone(),
        path: "error_handler".into(),
        depth: 1,
        lifecycles,
    };
    let (kind, policy) = match config {
        None => (Some(HandlerKind::Default), RedeliveryPolicy::default()),
        Some(c) => handler_kind(c, &mut cx)?,
    };
    let Some(kind) = kind else {
        return Ok(None);
    };
    let mut handler = ErrorHandler::new(id, kind, policy.clone());
    let clauses = errors
        .on_exception
        .iter()
        .map(|c| (c, false))
        .chain(errors.context_on_exception.iter().map(|c| (c, true)));
    for (i, (clause, from_context)) in clauses.enumerate() {
        cx.pointer = errors
            .pointers
            .on_exception
            .get(i)
            .cloned()
            .unwrap_or_default();
        cx.path = format!("on_exception[{i}]");
        handler = handler.with_clause(compile_clause(clause, from_context, &policy, &mut cx)?);
    }
    if !handler.is_active() {
        return Ok(None);
    }
    let handler = Arc::new(handler);
    cx.add_lifecycle(handler.lifecycle());
    Ok(Some(handler))
}

/// The handler's kind and policy; `None` for `no_error_handler`.
fn handler_kind(
    config: &ErrorHandlerConfig,
    cx: &mut StepContext<'_>,
) -> Result<(Option<HandlerKind>, RedeliveryPolicy), RouteError> {
    let given = [
        config.dead_letter_channel.is_some(),
        config.default_error_handler.is_some(),
        config.no_error_handler.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(cx.error(RouteErrorKind::InvalidValue(
            "an error handler is exactly one of `dead_letter_channel`, `default_error_handler` or `no_error_handler`".into(),
        )));
    }
    let base = RedeliveryPolicy::default();
    if let Some(d) = &config.default_error_handler {
        let at = "/default_error_handler";
        let mut policy = policy(&base, d.redelivery_policy.as_ref(), at, cx)?;
        handler_level(
            &mut policy,
            d.level.as_deref(),
            d.redelivery_policy.as_ref(),
            at,
            cx,
        )?;
        return Ok((Some(HandlerKind::Default), policy));
    }
    let Some(d) = &config.dead_letter_channel else {
        return Ok((None, base));
    };
    let at = "/dead_letter_channel";
    let mut policy = policy(&base, d.redelivery_policy.as_ref(), at, cx)?;
    handler_level(
        &mut policy,
        d.level.as_deref(),
        d.redelivery_policy.as_ref(),
        at,
        cx,
    )?;
    let uri_at = format!("{at}/dead_letter_uri");
    let endpoint = cx.endpoint(&EndpointDefinition::new(d.dead_letter_uri.clone()), &uri_at)?;
    let producer = endpoint
        .producer()
        .map_err(|e| cx.error_at(&uri_at, RouteErrorKind::Endpoint(e)))?;
    Ok((
        Some(HandlerKind::DeadLetter(DeadLetter {
            endpoint: producer,
            uri: camel_api::redact_url(&d.dead_letter_uri).into(),
            use_original_message: d.use_original_message,
            use_original_body: d.use_original_body,
            handle_new_exception: d.dead_letter_handle_new_exception,
        })),
        policy,
    ))
}

/// Camel's error handler `level`: the level of the exhausted line, unless the redelivery
/// policy names one itself.
fn handler_level(
    policy: &mut RedeliveryPolicy,
    level: Option<&str>,
    config: Option<&RedeliveryPolicyConfig>,
    at: &str,
    cx: &StepContext<'_>,
) -> Result<(), RouteError> {
    let Some(text) = level else {
        return Ok(());
    };
    let level = LogLevel::parse(text).ok_or_else(|| {
        cx.error_at(
            &format!("{at}/level"),
            RouteErrorKind::InvalidValue(format!(
                "unknown level `{text}` (TRACE, DEBUG, INFO, WARN, ERROR, OFF)"
            )),
        )
    })?;
    let named_by_policy = config
        .is_some_and(|c| c.retries_exhausted_log_level.is_some() || c.log_exhausted == Some(false));
    if !named_by_policy {
        policy.retries_exhausted_log_level = level;
    }
    Ok(())
}

fn policy(
    base: &RedeliveryPolicy,
    config: Option<&RedeliveryPolicyConfig>,
    at: &str,
    cx: &StepContext<'_>,
) -> Result<RedeliveryPolicy, RouteError> {
    match config {
        None => Ok(base.clone()),
        Some(c) => RedeliveryPolicy::from_config(base, c).map_err(|(option, why)| {
            cx.error_at(
                &format!("{at}/redelivery_policy/{option}"),
                RouteErrorKind::InvalidValue(format!("`{option}`: {why}")),
            )
        }),
    }
}

fn compile_clause(
    config: &OnException,
    from_context: bool,
    handler_policy: &RedeliveryPolicy,
    cx: &mut StepContext<'_>,
) -> Result<Clause, RouteError> {
    if config.exception.iter().all(|e| e.trim().is_empty()) {
        return Err(cx.error_at(
            "/exception",
            RouteErrorKind::InvalidValue(
                "`exception` lists at least one kind or Java class name (`java.lang.Exception` catches all)".into(),
            ),
        ));
    }
    let predicate = |e: &Option<ExpressionDefinition>, at: &str, cx: &StepContext<'_>| {
        e.as_ref().map(|e| cx.predicate(e, at)).transpose()
    };
    let decision = |d: &Option<PredicateOption>, at: &str, cx: &StepContext<'_>| {
        d.as_ref()
            .map(|d| match d {
                PredicateOption::Fixed(b) => Ok(Decision::Fixed(*b)),
                PredicateOption::Expression(e) => cx.predicate(e, at).map(Decision::When),
            })
            .transpose()
    };
    let on_when: Option<BoxPredicate> = predicate(&config.on_when, "/on_when", cx)?;
    let retry_while = predicate(&config.retry_while, "/retry_while", cx)?;
    let handled = decision(&config.handled, "/handled", cx)?;
    let continued = decision(&config.continued, "/continued", cx)?;
    let policy = match &config.redelivery_policy {
        None => None,
        Some(c) => Some(policy(handler_policy, Some(c), "", cx)?),
    };
    let steps: Option<BoxProcessor> = if config.steps.is_empty() {
        None
    } else {
        Some(cx.compile_steps(&config.steps, "/steps")?)
    };
    Ok(Clause {
        exceptions: config.exception.clone(),
        on_when,
        handled,
        continued,
        retry_while,
        policy,
        use_original_message: config.use_original_message,
        use_original_body: config.use_original_body,
        steps,
        from_context,
    })
}

/// Compiles a route's top-level steps found at `pointer`, each behind `handler`: a
/// redelivery re-runs the failing top-level step only, or, inside a `filter`/`choice`,
/// the failing nested step.
#[allow(clippy::too_many_arguments)]
pub(crate) fn compile_handled_list(
    registry: &Registry,
    route: &RouteDefinition,
    id: &str,
    steps: &[crate::model::StepDefinition],
    pointer: &str,
    path: &str,
    handler: &Arc<ErrorHandler>,
    lifecycles: &mut Vec<Arc<dyn StepLifecycle>>,
) -> Result<BoxProcessor, RouteError> {
    let steps = &*super::steps::layer::nest_open_layers(steps);
    let mut processors = Vec::with_capacity(steps.len());
    for (i, step) in steps.iter().enumerate() {
        let item_path = format!("{path}[{i}]");
        let block = redelivers_inside(&step.name).then(|| NestedRedelivery::block(handler));
        let processor = super::step_context::compile_one(
            registry,
            route,
            id,
            step,
            &format!("{pointer}/{i}"),
            &item_path,
            0,
            lifecycles,
        )?;
        let role = match block {
            Some(_) if makes_parts(&step.name) => ChannelRole::FanOut,
            Some(_) => ChannelRole::HandleOnly,
            None => ChannelRole::Whole,
        };
        drop(block);
        processors.push(handler.wrap_as(processor, &format!("{item_path}.{}", step.name), role));
    }
    Ok(camel_eip::pipeline::pipeline(processors))
}

/// Steps whose nested steps get their own redelivery (ADR 0091, 0092): re-running the
/// failing nested step is what Camel does. `filter`, `choice` and `loop` run their steps
/// on the exchange they were given (same id), in the same call; a `split` runs each part,
/// a `multicast` each branch, behind a part channel ([`around_part`]). Other blocks
/// (`doTry`, the circuit breaker, …) are redelivered whole: `doTry` is its own handler,
/// as in Camel.
fn redelivers_inside(step: &str) -> bool {
    matches!(step, "filter" | "choice" | "loop") || makes_parts(step)
}

/// Blocks that run their steps on new exchanges, one per part or branch, each behind a
/// part channel.
fn makes_parts(step: &str) -> bool {
    matches!(step, "split" | "multicast" | "scatter_gather")
}

/// The steps of one part of a `split` (or one branch of a `multicast`), behind a part
/// channel when the block is compiled with redelivery at the failing step (ADR 0092): the
/// channel handles what the part's steps gave up on, on the part's exchange. Unchanged
/// otherwise. The flag says whether a channel was put: the block must then give its
/// parts `CamelCorrelationId`.
pub(crate) fn around_part(steps: BoxProcessor, path: &str) -> (BoxProcessor, bool) {
    match NESTED_REDELIVERY.with(|n| n.borrow().clone()) {
        Some(handler) => (handler.wrap_as(steps, path, ChannelRole::Part), true),
        None => (steps, false),
    }
}

thread_local! {
    /// The handler whose redelivery channels go around the nested steps being compiled
    /// (set while a top-level `filter`/`choice`/`loop`/`split` compiles, cleared inside
    /// other blocks).
    static NESTED_REDELIVERY: std::cell::RefCell<Option<Arc<ErrorHandler>>> =
        const { std::cell::RefCell::new(None) };
}

/// Sets [`NESTED_REDELIVERY`] to a value for its lifetime, then puts the old one back.
pub(crate) struct NestedRedelivery {
    previous: Option<Arc<ErrorHandler>>,
    /// The handler to put a redelivery channel around the step being compiled with.
    pub(crate) wrap_with: Option<Arc<ErrorHandler>>,
}

impl NestedRedelivery {
    fn set(value: Option<Arc<ErrorHandler>>) -> Option<Arc<ErrorHandler>> {
        NESTED_REDELIVERY.with(|n| std::mem::replace(&mut *n.borrow_mut(), value))
    }

    /// Entered by every step compiled at `depth`: a nested step inside a redelivering
    /// block gets a redelivery channel, and its own nested steps none (unless it is a
    /// redelivering block itself, which passes the handler down instead).
    pub(crate) fn enter(depth: usize, step: &str) -> Self {
        let current = NESTED_REDELIVERY.with(|n| n.borrow().clone());
        match current {
            Some(handler) if depth > 0 && !redelivers_inside(step) => NestedRedelivery {
                previous: Self::set(None),
                wrap_with: Some(handler),
            },
            _ => NestedRedelivery {
                previous: current,
                wrap_with: None,
            },
        }
    }

    /// Compiling a top-level redelivering block behind `handler`.
    fn block(handler: &Arc<ErrorHandler>) -> Self {
        NestedRedelivery {
            previous: Self::set(Some(handler.clone())),
            wrap_with: None,
        }
    }
}

impl Drop for NestedRedelivery {
    fn drop(&mut self) {
        Self::set(self.previous.take());
    }
}

/// Wraps the route's pipeline in its `on_completion`s (the route's, then the context's).
pub(crate) fn completions(
    registry: &Registry,
    route: &RouteDefinition,
    id: &str,
    pipeline: BoxProcessor,
    lifecycles: &mut Vec<Arc<dyn StepLifecycle>>,
) -> Result<BoxProcessor, RouteError> {
    use camel_eip::on_completion::{Mode, OnCompletion, When};
    let errors = &route.errors;
    let all: Vec<_> = errors
        .on_completion
        .iter()
        .chain(errors.context_on_completion.iter())
        .collect();
    if all.is_empty() {
        return Ok(pipeline);
    }
    let mut cx = StepContext {
        registry,
        route,
        route_id: id,
        pointer: String::new(),
        path: String::new(),
        depth: 1,
        lifecycles,
    };
    let mut out = Vec::with_capacity(all.len());
    for (i, c) in all.into_iter().enumerate() {
        cx.pointer = errors
            .pointers
            .on_completion
            .get(i)
            .cloned()
            .unwrap_or_default();
        cx.path = format!("on_completion[{i}]");
        let when = match (c.on_complete_only, c.on_failure_only) {
            (true, true) => {
                return Err(cx.error(RouteErrorKind::InvalidValue(
                    "`on_complete_only` and `on_failure_only` exclude each other".into(),
                )))
            }
            (true, false) => When::Complete,
            (false, true) => When::Failure,
            (false, false) => When::Always,
        };
        let mode = match c.mode.as_deref().map(str::trim) {
            None | Some("AfterConsumer") => Mode::AfterConsumer,
            Some("BeforeConsumer") => Mode::BeforeConsumer,
            Some(other) => {
                return Err(cx.error_at(
                    "/mode",
                    RouteErrorKind::InvalidValue(format!(
                        "unknown mode `{other}` (AfterConsumer, BeforeConsumer)"
                    )),
                ))
            }
        };
        let steps = cx.compile_steps(&c.steps, "/steps")?;
        let mut completion = OnCompletion::new(steps, when, mode);
        if let Some(w) = &c.on_when {
            completion = completion.on_when(cx.predicate(w, "/on_when")?);
        }
        out.push(completion);
    }
    Ok(camel_eip::on_completion::with_completions(pipeline, out))
}
