//! Compiling Camel's interceptors (ADR 0090) into the route: `intercept` before every
//! step, `intercept_send_to_endpoint` around matching `to` steps, `intercept_from` before
//! the first step of routes whose `from` matches.
//!
//! An interceptor's own steps are compiled against the route without interceptors, so
//! they are never intercepted themselves. A route with no interceptor pays nothing: every
//! function here returns its input unchanged.

use std::sync::Arc;

use camel_api::{BoxPredicate, BoxProcessor, Exchange, StepLifecycle};
use camel_eip::config::Filter;
use serde_json::Value as Json;

use super::step_context::{compile_list, compile_one, StepContext};
use crate::compiler::Registry;
use crate::error::RouteError;
use crate::model::intercept::{split_when, uri_matches};
use crate::model::{RouteDefinition, StepDefinition};

/// The exchange property naming the endpoint an interceptor matched (Camel's
/// `Exchange.INTERCEPTED_ENDPOINT`).
pub(crate) const INTERCEPTED_ENDPOINT: &str = "CamelInterceptedEndpoint";

/// What compiling an interceptor needs from the step being compiled.
pub(crate) struct Site<'a> {
    pub(crate) registry: &'a Registry,
    pub(crate) route: &'a RouteDefinition,
    pub(crate) route_id: &'a str,
    pub(crate) depth: usize,
}

impl Site<'_> {
    /// `processor` (the compiled step `name` configured by `config`) behind the route's
    /// `intercept`s and, for a `to`, inside its matching `intercept_send_to_endpoint`s.
    pub(crate) fn around_step(
        &self,
        name: &str,
        config: &Json,
        processor: BoxProcessor,
        lifecycles: &mut Vec<Arc<dyn StepLifecycle>>,
    ) -> Result<BoxProcessor, RouteError> {
        let intercepts = &self.route.errors.intercepts;
        if intercepts.intercept.is_empty() && intercepts.intercept_send_to_endpoint.is_empty() {
            return Ok(processor);
        }
        let plain = without_intercepts(self.route);
        let mut processor = processor;
        if name == "to" {
            if let Some(uri) = to_uri(config) {
                processor = self.send_to(&plain, &uri, processor, lifecycles)?;
            }
        }
        if intercepts.intercept.is_empty() {
            return Ok(processor);
        }
        let mut chain = Vec::with_capacity(intercepts.intercept.len() + 1);
        for (i, (intercept, pointer)) in intercepts.intercept.iter().enumerate() {
            let (when, steps) = self.body(
                &plain,
                &intercept.steps,
                pointer,
                &format!("intercept[{i}]"),
                lifecycles,
            )?;
            chain.push(only_when(when, steps));
        }
        chain.push(processor);
        Ok(camel_eip::pipeline::pipeline(chain))
    }

    /// The sending to `uri` (`send`) inside every matching `intercept_send_to_endpoint`,
    /// the first declared outermost.
    fn send_to(
        &self,
        plain: &RouteDefinition,
        uri: &str,
        original: BoxProcessor,
        lifecycles: &mut Vec<Arc<dyn StepLifecycle>>,
    ) -> Result<BoxProcessor, RouteError> {
        let mut send = original;
        let all = &self.route.errors.intercepts.intercept_send_to_endpoint;
        for (i, (intercept, pointer)) in all.iter().enumerate().rev() {
            if !uri_matches(&intercept.uri, uri) {
                continue;
            }
            let path = format!("intercept_send_to_endpoint[{i}]");
            let (when, steps) = self.body(plain, &intercept.steps, pointer, &path, lifecycles)?;
            let mut matched = vec![mark(uri), steps];
            if !intercept.skip_send_to_original_endpoint.0 {
                matched.push(send.clone());
            }
            if let Some(after) = &intercept.after_uri {
                matched.push(compile_one(
                    self.registry,
                    plain,
                    self.route_id,
                    &StepDefinition::new("to", Json::String(after.clone())),
                    &format!("{pointer}/after_uri"),
                    &format!("{path}.after_uri"),
                    self.depth + 1,
                    lifecycles,
                )?);
            }
            let matched = camel_eip::pipeline::pipeline(matched);
            send = match when {
                Some(predicate) => {
                    camel_eip::choice::choice(vec![(predicate, matched)], Some(send))
                }
                None => matched,
            };
        }
        Ok(send)
    }

    /// An interceptor's steps written at `pointer`: its `when` condition (a first `when`
    /// step, Camel's shape) and the rest compiled as one pipeline.
    fn body(
        &self,
        plain: &RouteDefinition,
        steps: &[StepDefinition],
        pointer: &str,
        path: &str,
        lifecycles: &mut Vec<Arc<dyn StepLifecycle>>,
    ) -> Result<(Option<BoxPredicate>, BoxProcessor), RouteError> {
        let (condition, body) = split_when(steps);
        let when = match condition {
            None => None,
            Some(condition) => {
                let cx = StepContext {
                    registry: self.registry,
                    route: plain,
                    route_id: self.route_id,
                    pointer: format!("{pointer}/steps/0/when"),
                    path: format!("{path}.steps[0].when"),
                    depth: self.depth + 1,
                    lifecycles,
                };
                let filter: Filter = cx.decode(&condition)?;
                Some(cx.predicate_in(&filter, "")?)
            }
        };
        let steps = compile_list(
            self.registry,
            plain,
            self.route_id,
            &body,
            &format!("{pointer}/steps"),
            &format!("{path}.steps"),
            self.depth + 1,
            lifecycles,
        )?;
        Ok((when, steps))
    }
}

/// The route's `intercept_from` steps that apply to its `from` uri, compiled, or `None`
/// when none does.
pub(crate) fn from_prefix(
    registry: &Registry,
    route: &RouteDefinition,
    route_id: &str,
    lifecycles: &mut Vec<Arc<dyn StepLifecycle>>,
) -> Result<Option<BoxProcessor>, RouteError> {
    let all = &route.errors.intercepts.intercept_from;
    let from = route.from.uri.as_str();
    let applying: Vec<_> = all
        .iter()
        .enumerate()
        .filter(|(_, (d, _))| d.uri.as_deref().is_none_or(|u| uri_matches(u, from)))
        .collect();
    if applying.is_empty() {
        return Ok(None);
    }
    let plain = without_intercepts(route);
    let site = Site {
        registry,
        route: &plain,
        route_id,
        depth: 0,
    };
    let mut chain = Vec::with_capacity(applying.len());
    for (i, (intercept, pointer)) in applying {
        let path = format!("intercept_from[{i}]");
        let (when, steps) = site.body(&plain, &intercept.steps, pointer, &path, lifecycles)?;
        chain.push(camel_eip::pipeline::pipeline(vec![
            mark(from),
            only_when(when, steps),
        ]));
    }
    Ok(Some(camel_eip::pipeline::pipeline(chain)))
}

fn without_intercepts(route: &RouteDefinition) -> RouteDefinition {
    let mut plain = route.clone();
    plain.errors.intercepts = Default::default();
    plain
}

/// `steps`, run only when `when` holds (always without one).
fn only_when(when: Option<BoxPredicate>, steps: BoxProcessor) -> BoxProcessor {
    match when {
        Some(predicate) => camel_eip::choice::choice(vec![(predicate, steps)], None),
        None => steps,
    }
}

/// Sets [`INTERCEPTED_ENDPOINT`] to `uri`.
fn mark(uri: &str) -> BoxProcessor {
    let uri: Arc<str> = uri.into();
    BoxProcessor::sync_in_place(move |ex: &mut Exchange| {
        ex.properties.insert(INTERCEPTED_ENDPOINT, uri.to_string());
        Ok(())
    })
    .named("intercepted_endpoint")
}

/// The uri of a `to` step's configuration (`to: uri` or `to: {uri: …}`).
fn to_uri(config: &Json) -> Option<String> {
    match config {
        Json::String(uri) => Some(uri.clone()),
        Json::Object(map) => map.get("uri").and_then(Json::as_str).map(str::to_string),
        _ => None,
    }
}
