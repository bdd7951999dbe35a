//! Reading a `route:` item and its `from`, each error collected rather than returned, so
//! that one run reports every mistake of a route.

use camel_api::suggest::to_snake_case;
use serde_json::Value as Json;

use super::loader::{Read, Reader};
use super::normalise::normalise_config;
use crate::error::{RouteError, RouteErrorKind};
use crate::model::{camel_dsl, EndpointDefinition, RouteDefinition, StepDefinition};

/// Route options Camel files carry that change nothing here (JVM tuning, grouping for
/// Camel's tooling): accepted, with a one-time warning naming them.
const ROUTE_OPTIONS_IGNORED: &[&str] = &[
    "group",
    "node_prefix_id",
    "stream_cache",
    "message_history",
    "log_mask",
    "trace",
    "delayer",
    "shutdown_route",
    "shutdown_running_task",
];

/// Route options of Camel that would change behaviour and are not implemented.
const ROUTE_OPTIONS_UNSUPPORTED: &[&str] = &["precondition", "input_type", "output_type"];

/// A boolean or whole number written as text (`"false"`, `"2"`) as its value; anything
/// else as it is.
fn unquoted(value: Json) -> Json {
    let Json::String(text) = &value else {
        return value;
    };
    let t = text.trim();
    if t.eq_ignore_ascii_case("true") {
        Json::Bool(true)
    } else if t.eq_ignore_ascii_case("false") {
        Json::Bool(false)
    } else if let Ok(n) = t.parse::<i64>() {
        Json::from(n)
    } else {
        value
    }
}

impl Reader {
    pub(super) fn route(&self, body: Json, pointer: &str) -> Read<RouteDefinition> {
        const KEYS: &[&str] = &[
            "id",
            "description",
            "from",
            "steps",
            "auto_startup",
            "startup_order",
            "error_handler",
            "on_exception",
            "on_completion",
            "route_configuration_id",
            "route_policy",
            "partitions",
        ];
        let map = self
            .object(body, pointer, "`route` takes a map")
            .map_err(|e| vec![e])?;
        let mut route = RouteDefinition {
            auto_startup: true,
            ..Default::default()
        };
        let mut from = None;
        let mut steps = None;
        let mut errors = Vec::new();
        let mut ignored = Vec::new();
        let mut leader = None;
        let mut partitions = None;
        for (key, value) in map {
            let at = format!("{pointer}/{key}");
            // Camel's spellings (`autoStartup`, `auto-startup`) name the same option.
            let read: Result<(), RouteError> = match to_snake_case(&key).as_str() {
                "id" => self.string(value, &at, "id").and_then(|id| {
                    crate::model::check_route_id(&id)
                        .map_err(|why| self.error(RouteErrorKind::InvalidValue(why), &at))?;
                    route.id = Some(id);
                    Ok(())
                }),
                "description" => self
                    .string(value, &at, "description")
                    .map(|d| route.description = Some(d)),
                // Camel's loader reads both quoted (`autoStartup: "false"`).
                "auto_startup" => self
                    .boolean(unquoted(value), &at, "auto_startup")
                    .map(|b| route.auto_startup = b),
                "startup_order" => unquoted(value)
                    .as_i64()
                    .and_then(|v| i32::try_from(v).ok())
                    .map(|v| route.startup_order = Some(v))
                    .ok_or_else(|| self.wrong_type("startup_order", "a number", &at)),
                "from" => {
                    from = Some(value);
                    Ok(())
                }
                "steps" => {
                    steps = Some(value);
                    Ok(())
                }
                "error_handler" => self.error_handler(value, &at).map(|handler| {
                    route.errors.error_handler = Some(handler);
                    route.errors.pointers.error_handler = Some(at.clone());
                }),
                "on_exception" => self.route_on_exception(value, &at, &mut route),
                "on_completion" => self.route_on_completion(value, &at, &mut route),
                "route_configuration_id" => self
                    .string(value, &at, "route_configuration_id")
                    .map(|id| route.errors.route_configuration_id = Some(id)),
                "route_policy" => self.leader_policy(value, &at).map(|ns| leader = Some(ns)),
                "partitions" => unquoted(value)
                    .as_u64()
                    .filter(|n| (1..=256).contains(n))
                    .map(|n| partitions = Some(n))
                    .ok_or_else(|| self.wrong_type("partitions", "a count from 1 to 256", &at)),
                k if ROUTE_OPTIONS_IGNORED.contains(&k) => {
                    ignored.push(key.clone());
                    Ok(())
                }
                k if ROUTE_OPTIONS_UNSUPPORTED.contains(&k) => Err(self.error(
                    RouteErrorKind::InvalidValue(format!(
                        "`{key}` is a Camel route option that camel-rs does not support yet"
                    )),
                    &at,
                )),
                _ => Err(self.unknown_key(&key, KEYS, pointer)),
            };
            if let Err(e) = read {
                errors.push(e);
            }
        }
        if !ignored.is_empty() {
            camel_dsl::warn_ignored("route", &ignored);
        }
        let id = route.id.clone();
        let in_route = |errors: Vec<RouteError>| -> Vec<RouteError> {
            errors
                .into_iter()
                .map(|e| e.in_route(id.as_deref()))
                .collect()
        };
        let option_errors = errors.len();
        let Some(from) = from else {
            errors.push(self.error(RouteErrorKind::MissingFrom, pointer));
            return Err(in_route(errors));
        };
        let mut steps_pointer =
            self.from(from, &format!("{pointer}/from"), &mut route, &mut errors);
        // A leader-only route reads from `master:NAMESPACE:URI` (ADR 0140): the policy and
        // Camel's master component are one mechanism.
        if let Some(n) = partitions {
            // A partitioned route (ADR 0148): `master:NAMESPACE/N:URI`, the namespace
            // from the policy or else the route id.
            match leader.take().or_else(|| route.id.clone()) {
                Some(namespace) if !route.from.uri.starts_with("master:") => {
                    route.from.uri = format!("master:{namespace}/{n}:{}", route.from.uri);
                }
                _ => errors.push(
                    self.error(
                        RouteErrorKind::InvalidValue(
                            "`partitions` needs an `id` (or `route_policy: {leader: NAMESPACE}`) \
                         to name its leases, and a plain `from` (not `master:`)"
                                .into(),
                        ),
                        &format!("{pointer}/partitions"),
                    ),
                ),
            }
        }
        if let Some(namespace) = leader {
            if !route.from.uri.starts_with("master:") {
                route.from.uri = format!("master:{namespace}:{}", route.from.uri);
            }
        }
        if let Some(steps) = steps {
            if !route.steps.is_empty() {
                errors.push(self.error(
                    RouteErrorKind::InvalidValue(
                        "steps are given both under `from` and under `route`; keep one list".into(),
                    ),
                    &format!("{pointer}/steps"),
                ));
            } else {
                steps_pointer = format!("{pointer}/steps");
                self.route_steps(steps, &steps_pointer, &mut route, &mut errors);
            }
        }
        route.source = Some(self.source_map(pointer, &steps_pointer));
        if !errors.is_empty() {
            // Only the route's own options were wrong: its source and steps are whole, so
            // `camel validate` can still compile them and report their errors too.
            if errors.len() == option_errors {
                self.keep_partial(route);
            }
            return Err(in_route(errors));
        }
        Ok(route)
    }

    /// Reads a `from` node into `route`, adding its errors to `errors`; returns the pointer
    /// of its steps list.
    pub(super) fn from(
        &self,
        body: Json,
        pointer: &str,
        route: &mut RouteDefinition,
        errors: &mut Vec<RouteError>,
    ) -> String {
        const KEYS: &[&str] = &[
            "uri",
            "parameters",
            "steps",
            "id",
            "description",
            "variable_receive",
        ];
        let steps_pointer = format!("{pointer}/steps");
        if let Json::String(uri) = body {
            route.from = EndpointDefinition::new(uri);
            self.rest_consumer(route, pointer, errors);
            return steps_pointer;
        }
        let map = match self.object(body, pointer, "`from` takes a URI or a map with `uri`") {
            Ok(m) => m,
            Err(e) => {
                errors.push(e);
                return steps_pointer;
            }
        };
        let mut uri = None;
        let mut variable_receive = None;
        for (key, value) in map {
            let at = format!("{pointer}/{key}");
            let read = match to_snake_case(&key).as_str() {
                "uri" => self.string(value, &at, "uri").map(|u| uri = Some(u)),
                "parameters" => self
                    .object(value, &at, "`parameters` takes a map")
                    .map(|p| route.from.parameters = p.into_iter().collect()),
                "steps" => {
                    self.route_steps(value, &steps_pointer, route, errors);
                    Ok(())
                }
                // Camel's node id and description of the consumer: named, not used.
                "id" | "description" => self.string(value, &at, &key).map(|_| ()),
                "variable_receive" => self
                    .string(value, &at, "variable_receive")
                    .map(|v| variable_receive = Some(v)),
                _ => Err(self.unknown_key(&key, KEYS, pointer)),
            };
            if let Err(e) = read {
                errors.push(e);
            }
        }
        match uri {
            Some(uri) => route.from.uri = uri,
            None => errors.push(self.error(RouteErrorKind::Missing("uri".into()), pointer)),
        }
        self.rest_consumer(route, pointer, errors);
        // The compiler takes it off the parameters before the endpoint sees them.
        if let Some(v) = variable_receive {
            route
                .from
                .parameters
                .insert(crate::compiler::VARIABLE_RECEIVE.into(), Json::String(v));
        }
        steps_pointer
    }

    /// Camel's REST consumer `rest:VERB:path[:template]` (`from: rest:get:hello/{name}`)
    /// is a `platform-http:` route restricted to the method, as a `rest:` item's
    /// operation is. Its query options (`consumes`, `produces`, `bindingMode`) are kept.
    fn rest_consumer(
        &self,
        route: &mut RouteDefinition,
        pointer: &str,
        errors: &mut Vec<RouteError>,
    ) {
        let Some(rest) = route.from.uri.strip_prefix("rest:") else {
            return;
        };
        let (target, query) = rest.split_once('?').unwrap_or((rest, ""));
        let mut parts = target.splitn(3, ':');
        let verb = parts.next().unwrap_or_default().to_ascii_lowercase();
        let path = parts.next().unwrap_or_default();
        let template = parts.next().unwrap_or_default();
        if !crate::rest::VERBS.contains(&verb.as_str()) || path.trim().is_empty() {
            errors.push(self.error(
                RouteErrorKind::InvalidValue(format!(
                    "`{}` is not a REST consumer URI: write `rest:VERB:path` (VERB one of {})",
                    route.from.uri,
                    crate::rest::VERBS.join(", ")
                )),
                &format!("{pointer}/uri"),
            ));
            return;
        }
        let path = crate::rest::join_paths(&[path, template]);
        let mut uri = format!("platform-http:{path}");
        if !query.is_empty() {
            uri = format!("{uri}?{query}");
        }
        route.from.uri = uri;
        route.from.parameters.insert(
            "http_method_restrict".into(),
            Json::String(verb.to_ascii_uppercase()),
        );
    }

    /// Reads a route's step list into `route`. An `on_exception` written among the steps
    /// (as Camel's Java DSL places it, and files converted from it) is the route's own
    /// clause, the same as one under `route.on_exception`.
    fn route_steps(
        &self,
        value: Json,
        pointer: &str,
        route: &mut RouteDefinition,
        errors: &mut Vec<RouteError>,
    ) {
        let mut steps = Vec::new();
        for (i, step) in self.steps(value, pointer, errors).into_iter().enumerate() {
            if step.name == "on_exception" {
                let at = format!("{pointer}/{i}/on_exception");
                if let Err(e) = self.route_on_exception(step.config, &at, route) {
                    errors.push(e);
                }
            } else {
                steps.push(step);
            }
        }
        route.steps = steps;
    }

    /// Reads a step list, adding the error of each bad item to `errors`.
    fn steps(
        &self,
        value: Json,
        pointer: &str,
        errors: &mut Vec<RouteError>,
    ) -> Vec<StepDefinition> {
        let Json::Array(items) = value else {
            errors.push(self.wrong_type("steps", "a list of steps", pointer));
            return Vec::new();
        };
        let mut steps = Vec::new();
        for (i, item) in items.into_iter().enumerate() {
            let at = format!("{pointer}/{i}");
            match StepDefinition::from_item(item) {
                Ok(mut step) => {
                    normalise_config(&mut step.config);
                    steps.push(step);
                }
                Err(why) => errors.push(self.error(RouteErrorKind::InvalidValue(why), &at)),
            }
        }
        steps
    }
}

impl Reader {
    /// `route_policy: {leader: NAMESPACE}` (or `routePolicy`): the namespace.
    fn leader_policy(&self, value: Json, at: &str) -> Result<String, RouteError> {
        let invalid = |why: String| self.error(RouteErrorKind::InvalidValue(why), at);
        let Json::Object(map) = value else {
            return Err(invalid(
                "camel-rs's route policy is `route_policy: {leader: NAMESPACE}` (the route runs \
                 only on the process leading NAMESPACE); Camel's policies by bean reference are \
                 not supported"
                    .into(),
            ));
        };
        let mut namespace = None;
        for (key, value) in map {
            match (key.as_str(), value) {
                ("leader", Json::String(ns)) => namespace = Some(ns),
                ("leader", _) => return Err(invalid("`leader` takes a namespace name".into())),
                (other, _) => {
                    return Err(invalid(format!(
                        "`{other}` is not a route policy option (known: leader)"
                    )))
                }
            }
        }
        let ns =
            namespace.ok_or_else(|| invalid("`route_policy` needs `leader: NAMESPACE`".into()))?;
        let ok = !ns.is_empty()
            && ns.len() <= 128
            && ns
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !ok {
            return Err(invalid(format!(
                "`{ns}` is not a namespace: 1 to 128 letters, digits, `-`, `_` or `.`"
            )));
        }
        Ok(ns)
    }
}
