//! Error handling in route files (ADR 0052): the top-level `- errorHandler:`,
//! `- onException:`, `- onCompletion:` and `- routeConfiguration:` items, which apply to
//! every route loaded with them (whichever file holds the route), and the route-level
//! `error_handler:` / `on_exception:` keys.
//!
//! ```yaml
//! - errorHandler:
//!     deadLetterChannel:
//!       deadLetterUri: file:/tmp/dead
//!       redeliveryPolicy: {maximumRedeliveries: 3, redeliveryDelay: 1000}
//! - onException:
//!     exception: [java.io.IOException]
//!     handled: {constant: true}
//!     steps: [{to: log:io}]
//! - route:
//!     from: {uri: direct:a, steps: [{to: mock:out}]}
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use camel_eip::config::{ErrorHandlerConfig, OnCompletionConfig, OnException};
use serde_json::Value as Json;

use super::loader::Reader;
use super::normalise::normalise_config;
use crate::compiler::decode::decode;
use crate::error::RouteError;
use crate::model::{Positions, RouteDefinition};

/// The context-level error handling of one route list (a document of a file), applied
/// with that of every other list of the same load once all are read ([`ContextSet`]).
#[derive(Debug, Default)]
pub(super) struct ContextErrors {
    pub(super) handler: Option<(ErrorHandlerConfig, String)>,
    pub(super) clauses: Vec<(OnException, String)>,
    pub(super) completions: Vec<(OnCompletionConfig, String)>,
    /// `- routeConfiguration:` items: an optional id and what it holds.
    pub(super) configurations: Vec<(Option<String>, ContextErrors)>,
    /// `intercept`, `intercept_from` and `intercept_send_to_endpoint` items (ADR 0090).
    pub(super) intercepts: crate::model::intercept::RouteIntercepts,
}

/// One list's context-level items and the file they were read from.
#[derive(Debug)]
pub(super) struct ContextPart {
    pub(super) source: Positions,
    pub(super) errors: ContextErrors,
}

/// The context-level items of every file and document loaded together: Camel applies
/// them to every route of the context, whichever file holds the route.
#[derive(Debug, Default)]
pub(super) struct ContextSet {
    pub(super) parts: Vec<ContextPart>,
}

impl ContextSet {
    /// Gives every route what applies to it: its route configurations (those it names,
    /// or those without an id, from any part), then every part's top-level items. A
    /// route's own error handler wins over a configuration's, which wins over the
    /// top-level one. Returns an error per route naming a configuration id that matches
    /// none, and one per top-level `errorHandler` after the first.
    ///
    /// Pointers into another part than the route's own file and document are tagged
    /// (`@3/0/error_handler`, see [`crate::model::SourceMap::elsewhere`]) so that a
    /// compile error in them is located in the file that holds them.
    pub(super) fn apply(&self, routes: &mut [RouteDefinition]) -> Vec<RouteError> {
        let mut errors_out = self.second_handlers();
        let elsewhere: Arc<HashMap<String, Positions>> = Arc::new(
            self.parts
                .iter()
                .enumerate()
                .map(|(i, p)| (i.to_string(), p.source.clone()))
                .collect(),
        );
        let configurations: Vec<(Option<&str>, &ContextErrors, usize)> = self
            .parts
            .iter()
            .enumerate()
            .flat_map(|(i, p)| {
                p.errors
                    .configurations
                    .iter()
                    .map(move |(id, c)| (id.as_deref(), c, i))
            })
            .collect();
        for route in routes {
            let chosen: Vec<(&ContextErrors, usize)> = match &route.errors.route_configuration_id {
                None => configurations
                    .iter()
                    .filter(|(id, _, _)| id.is_none())
                    .map(|(_, c, i)| (*c, *i))
                    .collect(),
                Some(ids) => {
                    let mut chosen = Vec::new();
                    for pattern in ids.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                        let before = chosen.len();
                        chosen.extend(
                            configurations
                                .iter()
                                .filter(|(id, _, _)| {
                                    id.is_some_and(|id| crate::model::intercept::glob(pattern, id))
                                })
                                .map(|(_, c, i)| (*c, *i)),
                        );
                        if chosen.len() == before {
                            errors_out.push(missing_configuration(route, pattern));
                        }
                    }
                    chosen
                }
            };
            let top = self.parts.iter().enumerate().map(|(i, p)| (&p.errors, i));
            let prefixes: Vec<String> = self
                .parts
                .iter()
                .enumerate()
                .map(|(i, p)| self.prefix(route, i, &p.source))
                .collect();
            for (part, i) in chosen.into_iter().chain(top) {
                part.give(route, &prefixes[i]);
            }
            if let Some(source) = &mut route.source {
                source.elsewhere = elsewhere.clone();
            }
        }
        errors_out
    }

    /// What goes before a pointer of part `i` given to `route`: nothing for the route's
    /// own file and document, the part's tag otherwise.
    fn prefix(&self, route: &RouteDefinition, i: usize, source: &Positions) -> String {
        let own = route
            .source
            .as_ref()
            .is_some_and(|s| Arc::ptr_eq(&s.positions, &source.positions));
        if own {
            String::new()
        } else {
            format!("@{i}")
        }
    }

    /// An error at each top-level `errorHandler` after the first: a context has one.
    fn second_handlers(&self) -> Vec<RouteError> {
        let mut first: Option<Option<crate::error::Location>> = None;
        let mut errors = Vec::new();
        for part in &self.parts {
            let Some((_, pointer)) = &part.errors.handler else {
                continue;
            };
            let here = part.source.locate(pointer);
            match &first {
                None => first = Some(here),
                Some(at) => {
                    let other = at
                        .as_ref()
                        .map_or_else(String::new, |l| format!(" (the first is at {l})"));
                    errors.push(
                        RouteError::new(crate::error::RouteErrorKind::InvalidValue(format!(
                            "the route files loaded together hold at most one top-level \
                             `errorHandler`{other}: give routes their own handler, or use \
                             a `routeConfiguration` with an id"
                        )))
                        .at(here),
                    );
                }
            }
        }
        errors
    }
}

impl ContextErrors {
    /// Gives `route` this part's handler (unless it has one), clauses, completions and
    /// interceptors, their pointers behind `prefix`.
    fn give(&self, route: &mut RouteDefinition, prefix: &str) {
        let at = |pointer: &String| format!("{prefix}{pointer}");
        let errors = &mut route.errors;
        if errors.error_handler.is_none() && errors.context_error_handler.is_none() {
            if let Some((handler, pointer)) = &self.handler {
                errors.context_error_handler = Some(handler.clone());
                errors.pointers.error_handler = Some(at(pointer));
            }
        }
        for (clause, pointer) in &self.clauses {
            errors.context_on_exception.push(clause.clone());
            errors.pointers.on_exception.push(at(pointer));
        }
        for (completion, pointer) in &self.completions {
            errors.context_on_completion.push(completion.clone());
            errors.pointers.on_completion.push(at(pointer));
        }
        let mut intercepts = self.intercepts.clone();
        for pointer in intercepts
            .intercept
            .iter_mut()
            .map(|(_, p)| p)
            .chain(intercepts.intercept_from.iter_mut().map(|(_, p)| p))
            .chain(
                intercepts
                    .intercept_send_to_endpoint
                    .iter_mut()
                    .map(|(_, p)| p),
            )
        {
            pointer.insert_str(0, prefix);
        }
        errors.intercepts.extend(&intercepts);
    }
}

fn missing_configuration(route: &RouteDefinition, pattern: &str) -> RouteError {
    let location = route
        .source
        .as_ref()
        .and_then(|s| s.locate(&format!("{}/route_configuration_id", s.route_pointer)));
    RouteError::new(crate::error::RouteErrorKind::InvalidValue(format!(
        "no `routeConfiguration` has an id matching `{pattern}`"
    )))
    .at(location)
    .in_route(route.id.as_deref())
}

impl Reader {
    /// A top-level `- errorHandler:` item.
    pub(super) fn context_error_handler(
        &self,
        body: Json,
        pointer: &str,
        context: &mut ContextErrors,
    ) -> Result<(), RouteError> {
        if context.handler.is_some() {
            return Err(self.error(
                crate::error::RouteErrorKind::InvalidValue(
                    "a file holds at most one top-level `errorHandler`".into(),
                ),
                pointer,
            ));
        }
        let handler = self.error_handler(body, pointer)?;
        context.handler = Some((handler, pointer.to_string()));
        Ok(())
    }

    /// A top-level `- onException:` item.
    pub(super) fn context_on_exception(
        &self,
        body: Json,
        pointer: &str,
        context: &mut ContextErrors,
    ) -> Result<(), RouteError> {
        let clause = self.on_exception(body, pointer)?;
        context.clauses.push((clause, pointer.to_string()));
        Ok(())
    }

    /// A top-level `- onCompletion:` item.
    pub(super) fn context_on_completion(
        &self,
        body: Json,
        pointer: &str,
        context: &mut ContextErrors,
    ) -> Result<(), RouteError> {
        let c = self.on_completion(body, pointer)?;
        context.completions.push((c, pointer.to_string()));
        Ok(())
    }

    /// One `on_completion` at `pointer`.
    pub(super) fn on_completion(
        &self,
        mut body: Json,
        pointer: &str,
    ) -> Result<OnCompletionConfig, RouteError> {
        normalise_config(&mut body);
        self.decode_at(&body, pointer)
    }

    /// A route's `on_completion:`: one or a list.
    pub(super) fn route_on_completion(
        &self,
        body: Json,
        pointer: &str,
        route: &mut RouteDefinition,
    ) -> Result<(), RouteError> {
        let items = self.configuration_items(body, pointer, "onCompletion");
        for (item, at) in items {
            let c = self.on_completion(item, &at)?;
            route.errors.on_completion.push(c);
            route.errors.pointers.on_completion.push(at);
        }
        Ok(())
    }

    /// Decodes the typed configuration at `pointer`, its errors located below it.
    pub(super) fn decode_at<T: serde::de::DeserializeOwned>(
        &self,
        body: &Json,
        pointer: &str,
    ) -> Result<T, RouteError> {
        decode(body).map_err(|(at, kind)| self.error(kind, &format!("{pointer}{at}")))
    }

    /// An error handler's configuration at `pointer`.
    pub(super) fn error_handler(
        &self,
        body: Json,
        pointer: &str,
    ) -> Result<ErrorHandlerConfig, RouteError> {
        self.decode_at(&body, pointer)
    }

    /// One `on_exception` clause at `pointer`.
    pub(super) fn on_exception(
        &self,
        mut body: Json,
        pointer: &str,
    ) -> Result<OnException, RouteError> {
        normalise_config(&mut body);
        let clause: OnException = self.decode_at(&body, pointer)?;
        if clause.exception.iter().all(|e| e.trim().is_empty()) {
            return Err(self.error(
                crate::error::RouteErrorKind::InvalidValue(
                    "`exception` lists at least one kind or Java class name (`java.lang.Exception` catches all)".into(),
                ),
                &format!("{pointer}/exception"),
            ));
        }
        Ok(clause)
    }

    /// A route's `on_exception:`: one clause or a list of them (each item a clause, or
    /// `{onException: clause}` as at the top level).
    pub(super) fn route_on_exception(
        &self,
        body: Json,
        pointer: &str,
        route: &mut RouteDefinition,
    ) -> Result<(), RouteError> {
        for (item, at) in self.configuration_items(body, pointer, "onException") {
            let clause = self.on_exception(item, &at)?;
            route.errors.on_exception.push(clause);
            route.errors.pointers.on_exception.push(at);
        }
        Ok(())
    }
}
