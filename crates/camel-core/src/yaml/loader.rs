use std::path::Path;
use std::sync::Arc;

use camel_api::suggest::{nearest, to_snake_case};
use serde_json::{Map, Value as Json};

use super::configuration::ContextErrors;
use super::node::{self, Spanned};
use crate::error::{Location, RouteError, RouteErrorKind, RouteErrors};
use crate::model::{EndpointDefinition, RouteDefinition, SourceMap, StepDefinition};

/// Loads the routes of a YAML file.
pub fn load_file(path: impl AsRef<Path>) -> Result<Vec<RouteDefinition>, RouteErrors> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| {
        RouteError::new(RouteErrorKind::Read(Arc::new(e))).at(Some(Location {
            file: path.display().to_string().into(),
            line: 0,
            column: 0,
        }))
    })?;
    load_str(&text, &path.display().to_string())
}

/// Loads the routes in `text`; `file` names the source in error messages.
pub fn load_str(text: &str, file: &str) -> Result<Vec<RouteDefinition>, RouteErrors> {
    let file: Arc<str> = file.into();
    let doc = node::parse(text).map_err(|e| {
        RouteError::new(RouteErrorKind::Syntax(e.message)).at(Some(Location {
            file: file.clone(),
            line: e.line,
            column: e.column,
        }))
    })?;
    let Some(Spanned { value, positions }) = doc else {
        return Ok(Vec::new());
    };
    let reader = Reader {
        file,
        positions: Arc::new(positions),
    };
    reader.routes(value)
}

pub(super) struct Reader {
    file: Arc<str>,
    positions: Arc<std::collections::HashMap<String, (usize, usize)>>,
}

impl Reader {
    fn locate(&self, pointer: &str) -> Option<Location> {
        SourceMap {
            file: self.file.clone(),
            positions: self.positions.clone(),
            ..Default::default()
        }
        .locate(pointer)
    }

    pub(super) fn error(&self, kind: RouteErrorKind, pointer: &str) -> RouteError {
        RouteError::new(kind).at(self.locate(pointer))
    }

    fn unknown_key(&self, key: &str, expected: &[&str], pointer: &str) -> RouteError {
        self.error(
            RouteErrorKind::UnknownKey {
                key: key.to_string(),
                suggestion: nearest(key, expected.iter().copied()).map(str::to_string),
                expected: expected.iter().map(|s| s.to_string()).collect(),
            },
            &format!("{pointer}/{key}"),
        )
    }

    fn routes(&self, value: Json) -> Result<Vec<RouteDefinition>, RouteErrors> {
        let items = match value {
            Json::Array(items) => items,
            Json::Null => return Ok(Vec::new()),
            _ => {
                return Err(self
                    .error(
                        RouteErrorKind::InvalidValue(
                            "a route file is a list of routes (`- route: …` or `- from: …`)".into(),
                        ),
                        "",
                    )
                    .into())
            }
        };
        let mut routes = Vec::new();
        let mut errors = Vec::new();
        let mut context = ContextErrors::default();
        for (i, item) in items.into_iter().enumerate() {
            let pointer = format!("/{i}");
            match self.route_item(item, &pointer, &mut context) {
                Ok(Some(r)) => routes.push(r),
                Ok(None) => {}
                Err(e) => errors.push(e),
            }
        }
        errors.extend(context.apply(&mut routes));
        if errors.is_empty() {
            Ok(routes)
        } else {
            Err(RouteErrors(errors))
        }
    }

    fn route_item(
        &self,
        item: Json,
        pointer: &str,
        context: &mut ContextErrors,
    ) -> Result<Option<RouteDefinition>, RouteError> {
        let map = self.object(item, pointer, "a list item is `route:` or `from:`")?;
        let mut entries = map.into_iter();
        let (key, body) = match (entries.next(), entries.next()) {
            (Some(kv), None) => kv,
            _ => {
                return Err(self.error(
                    RouteErrorKind::InvalidValue(
                        "each list item holds exactly one of `route` or `from`".into(),
                    ),
                    pointer,
                ))
            }
        };
        match to_snake_case(&key).as_str() {
            "route" => self.route(body, &format!("{pointer}/route")).map(Some),
            "error_handler" => self
                .context_error_handler(body, &format!("{pointer}/{key}"), context)
                .map(|()| None),
            "on_exception" => self
                .context_on_exception(body, &format!("{pointer}/{key}"), context)
                .map(|()| None),
            "on_completion" => self
                .context_on_completion(body, &format!("{pointer}/{key}"), context)
                .map(|()| None),
            "route_configuration" => self
                .route_configuration(body, &format!("{pointer}/{key}"), context)
                .map(|()| None),
            "from" => {
                let from_pointer = format!("{pointer}/from");
                let mut route = RouteDefinition {
                    auto_startup: true,
                    ..Default::default()
                };
                let steps_pointer = self.from(body, &from_pointer, &mut route)?;
                route.source = Some(self.source_map(&from_pointer, &steps_pointer));
                Ok(Some(route))
            }
            other => Err(self.unknown_key(
                other,
                &[
                    "route",
                    "from",
                    "error_handler",
                    "on_exception",
                    "on_completion",
                    "route_configuration",
                ],
                pointer,
            )),
        }
    }

    fn source_map(&self, route_pointer: &str, steps_pointer: &str) -> SourceMap {
        SourceMap {
            file: self.file.clone(),
            positions: self.positions.clone(),
            steps_pointer: steps_pointer.to_string(),
            route_pointer: route_pointer.to_string(),
        }
    }

    fn route(&self, body: Json, pointer: &str) -> Result<RouteDefinition, RouteError> {
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
        ];
        let map = self.object(body, pointer, "`route` takes a map")?;
        let mut route = RouteDefinition {
            auto_startup: true,
            ..Default::default()
        };
        let mut from = None;
        let mut steps = None;
        for (key, value) in map {
            let at = format!("{pointer}/{key}");
            // Camel's spellings (`autoStartup`, `auto-startup`) name the same option.
            match to_snake_case(&key).as_str() {
                "id" => {
                    let id = self.string(value, &at, "id")?;
                    crate::model::check_route_id(&id)
                        .map_err(|why| self.error(RouteErrorKind::InvalidValue(why), &at))?;
                    route.id = Some(id);
                }
                "description" => {
                    route.description = Some(self.string(value, &at, "description")?)
                }
                "auto_startup" => route.auto_startup = self.boolean(value, &at, "auto_startup")?,
                "startup_order" => {
                    route.startup_order = Some(
                        value
                            .as_i64()
                            .and_then(|v| i32::try_from(v).ok())
                            .ok_or_else(|| self.wrong_type("startup_order", "a number", &at))?,
                    )
                }
                "from" => from = Some(value),
                "steps" => steps = Some(value),
                "error_handler" => {
                    route.errors.error_handler = Some(self.error_handler(value, &at)?);
                    route.errors.pointers.error_handler = Some(at);
                }
                "on_exception" => self.route_on_exception(value, &at, &mut route)?,
                "on_completion" => self.route_on_completion(value, &at, &mut route)?,
                "route_configuration_id" => {
                    route.errors.route_configuration_id =
                        Some(self.string(value, &at, "route_configuration_id")?)
                }
                _ => return Err(self.unknown_key(&key, KEYS, pointer)),
            }
        }
        let Some(from) = from else {
            return Err(self
                .error(RouteErrorKind::MissingFrom, pointer)
                .in_route(route.id.as_deref()));
        };
        let mut steps_pointer = self
            .from(from, &format!("{pointer}/from"), &mut route)
            .map_err(|e| e.in_route(route.id.as_deref()))?;
        if let Some(steps) = steps {
            if !route.steps.is_empty() {
                return Err(self
                    .error(
                        RouteErrorKind::InvalidValue(
                            "steps are given both under `from` and under `route`; keep one list"
                                .into(),
                        ),
                        &format!("{pointer}/steps"),
                    )
                    .in_route(route.id.as_deref()));
            }
            steps_pointer = format!("{pointer}/steps");
            route.steps = self
                .steps(steps, &steps_pointer)
                .map_err(|e| e.in_route(route.id.as_deref()))?;
        }
        route.source = Some(self.source_map(pointer, &steps_pointer));
        Ok(route)
    }

    /// Reads a `from` node into `route`; returns the pointer of its steps list.
    fn from(
        &self,
        body: Json,
        pointer: &str,
        route: &mut RouteDefinition,
    ) -> Result<String, RouteError> {
        const KEYS: &[&str] = &["uri", "parameters", "steps", "id"];
        let steps_pointer = format!("{pointer}/steps");
        if let Json::String(uri) = body {
            route.from = EndpointDefinition::new(uri);
            return Ok(steps_pointer);
        }
        let map = self.object(body, pointer, "`from` takes a URI or a map with `uri`")?;
        let mut uri = None;
        for (key, value) in map {
            let at = format!("{pointer}/{key}");
            match to_snake_case(&key).as_str() {
                "uri" => uri = Some(self.string(value, &at, "uri")?),
                "parameters" => {
                    route.from.parameters = self
                        .object(value, &at, "`parameters` takes a map")?
                        .into_iter()
                        .collect()
                }
                "steps" => route.steps = self.steps(value, &steps_pointer)?,
                "id" => {}
                _ => return Err(self.unknown_key(&key, KEYS, pointer)),
            }
        }
        route.from.uri =
            uri.ok_or_else(|| self.error(RouteErrorKind::Missing("uri".into()), pointer))?;
        Ok(steps_pointer)
    }

    fn steps(&self, value: Json, pointer: &str) -> Result<Vec<StepDefinition>, RouteError> {
        let Json::Array(items) = value else {
            return Err(self.wrong_type("steps", "a list of steps", pointer));
        };
        items
            .into_iter()
            .enumerate()
            .map(|(i, item)| {
                let at = format!("{pointer}/{i}");
                let mut step = StepDefinition::from_item(item)
                    .map_err(|why| self.error(RouteErrorKind::InvalidValue(why), &at))?;
                normalise_config(&mut step.config);
                Ok(step)
            })
            .collect()
    }

    fn object(
        &self,
        value: Json,
        pointer: &str,
        what: &str,
    ) -> Result<Map<String, Json>, RouteError> {
        match value {
            Json::Object(m) => Ok(m),
            Json::Null => Ok(Map::new()),
            _ => Err(self.error(RouteErrorKind::InvalidValue(what.to_string()), pointer)),
        }
    }

    fn wrong_type(&self, key: &str, expected: &str, pointer: &str) -> RouteError {
        self.error(
            RouteErrorKind::InvalidValue(format!("`{key}` must be {expected}")),
            pointer,
        )
    }

    fn string(&self, value: Json, pointer: &str, key: &str) -> Result<String, RouteError> {
        match value {
            Json::String(s) => Ok(s),
            Json::Number(n) => Ok(n.to_string()),
            _ => Err(self.wrong_type(key, "text", pointer)),
        }
    }

    fn boolean(&self, value: Json, pointer: &str, key: &str) -> Result<bool, RouteError> {
        value
            .as_bool()
            .ok_or_else(|| self.wrong_type(key, "true or false", pointer))
    }
}

/// Gives equivalent spellings of nested steps one form, so YAML and builder definitions
/// compare equal: an empty step configuration is `null`, and a nested step is a one-key
/// map under its canonical name (`steps: [stop]` becomes `[{stop: null}]`, `setHeader`
/// becomes `set_header`, as at the top level). Option keys are left as written.
pub(super) fn normalise_config(config: &mut Json) {
    match config {
        Json::Object(map) if map.is_empty() => *config = Json::Null,
        Json::Object(map) => {
            for (key, value) in map.iter_mut() {
                if key == "steps" {
                    normalise_steps(value);
                } else {
                    normalise_nested(value);
                }
            }
        }
        Json::Array(_) => normalise_nested(config),
        _ => {}
    }
}

fn normalise_nested(value: &mut Json) {
    match value {
        Json::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "steps" {
                    normalise_steps(v);
                } else {
                    normalise_nested(v);
                }
            }
        }
        Json::Array(items) => items.iter_mut().for_each(normalise_nested),
        _ => {}
    }
}

fn normalise_steps(list: &mut Json) {
    let Json::Array(items) = list else { return };
    for item in items.iter_mut() {
        // Items that are not steps are left for the step's configuration to refuse, where
        // the error is located.
        if let Ok(mut step) = StepDefinition::from_item(item.clone()) {
            normalise_config(&mut step.config);
            let mut m = Map::new();
            m.insert(step.name, step.config);
            *item = Json::Object(m);
        }
    }
}
