//! Camel's `routeConfiguration` (ADR 0052): an id holding `errorHandler`, `onException`,
//! `onCompletion` and interceptors (ADR 0090), applied to the routes that name it in `routeConfigurationId`
//! (comma-separated, `*` wildcards), or to every route that names none when it has no id.
//!
//! ```yaml
//! - routeConfiguration:
//!     id: audited
//!     onException:
//!       - onException: {exception: [java.lang.Exception], handled: true, steps: [{to: log:err}]}
//!     onCompletion:
//!       - onCompletion: {steps: [{to: log:done}]}
//! - route:
//!     routeConfigurationId: audit*
//!     from: {uri: direct:a, steps: [{to: log:a}]}
//! ```

use camel_api::suggest::to_snake_case;
use serde_json::Value as Json;

use super::configuration::ContextErrors;
use super::loader::Reader;
use crate::error::{RouteError, RouteErrorKind};

impl Reader {
    /// A top-level `- routeConfiguration:` item.
    pub(super) fn route_configuration(
        &self,
        body: Json,
        pointer: &str,
        context: &mut ContextErrors,
    ) -> Result<(), RouteError> {
        const KEYS: &[&str] = &[
            "id",
            "error_handler",
            "on_exception",
            "on_completion",
            "intercept",
            "intercept_from",
            "intercept_send_to_endpoint",
            "description",
            "precondition",
        ];
        let Json::Object(map) = body else {
            return Err(self.error(
                RouteErrorKind::InvalidValue("`routeConfiguration` takes a map".into()),
                pointer,
            ));
        };
        let mut id = None;
        let mut part = ContextErrors::default();
        for (key, value) in map {
            let at = format!("{pointer}/{key}");
            match to_snake_case(&key).as_str() {
                "id" => match value {
                    Json::String(s) => id = Some(s),
                    _ => {
                        return Err(self.error(
                            RouteErrorKind::InvalidValue("`id` must be text".into()),
                            &at,
                        ))
                    }
                },
                // Documentation for tools (Kaoto writes one).
                "description" => {}
                "precondition" => {
                    return Err(self.error(
                        RouteErrorKind::InvalidValue(format!(
                            "`{key}` (a configuration included only when its predicate holds \
                             at start) is not supported yet: leave it out, or give the \
                             routes that need the configuration its id in \
                             `routeConfigurationId`"
                        )),
                        &at,
                    ))
                }
                "error_handler" => part.handler = Some((self.error_handler(value, &at)?, at)),
                "on_exception" => {
                    for (item, item_at) in self.configuration_items(value, &at, "onException") {
                        part.clauses
                            .push((self.on_exception(item, &item_at)?, item_at));
                    }
                }
                "on_completion" => {
                    for (item, item_at) in self.configuration_items(value, &at, "onCompletion") {
                        part.completions
                            .push((self.on_completion(item, &item_at)?, item_at));
                    }
                }
                snake @ ("intercept" | "intercept_from" | "intercept_send_to_endpoint") => {
                    if let Some(kind) = super::intercept::InterceptKind::of(snake) {
                        self.intercept_list(kind, value, &at, &mut part.intercepts)?;
                    }
                }
                _ => {
                    return Err(self.error(
                        RouteErrorKind::UnknownKey {
                            key: key.clone(),
                            suggestion: camel_api::suggest::nearest(&key, KEYS.iter().copied())
                                .map(str::to_string),
                            expected: KEYS.iter().map(|s| s.to_string()).collect(),
                        },
                        &at,
                    ))
                }
            }
        }
        context.configurations.push((id, part));
        Ok(())
    }

    /// The items of a list written `[{onException: {...}}, ...]` (Camel's shape) or
    /// `[{...}, ...]`, or one item; each with its pointer.
    pub(super) fn configuration_items(
        &self,
        value: Json,
        pointer: &str,
        wrapper: &str,
    ) -> Vec<(Json, String)> {
        let snake = to_snake_case(wrapper);
        let list = match value {
            Json::Array(items) => items,
            one => return vec![(one, pointer.to_string())],
        };
        list.into_iter()
            .enumerate()
            .map(|(i, item)| {
                let at = format!("{pointer}/{i}");
                match item {
                    Json::Object(mut m) if m.len() == 1 => {
                        let key = m.keys().next().cloned().unwrap_or_default();
                        if key == wrapper || key == snake {
                            let inner = m.remove(&key).unwrap_or_default();
                            (inner, format!("{at}/{key}"))
                        } else {
                            (Json::Object(m), at)
                        }
                    }
                    other => (other, at),
                }
            })
            .collect()
    }
}
