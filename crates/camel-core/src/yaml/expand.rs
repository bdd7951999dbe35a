//! Expanding the uses of Kamelets (`kamelet:NAME` endpoints, Pipe `ref`s) and route
//! templates (`templatedRoute`) into routes, at load time.
//!
//! Each use becomes its own route, copied from the template with the use's parameters,
//! and is wired to the using route through a `direct:` name of its own:
//!
//! - `from: kamelet:timer-source?…` (a source): the copy runs the Kamelet's consumer, its
//!   `to: kamelet:sink` sends to the name, and the using route consumes the name;
//! - `to: kamelet:log-sink?…` (a sink or an action): the using route sends to the name,
//!   which the copy's `from: kamelet:source` consumes; the reply comes back as from any
//!   `direct:` call.
//!
//! So a Kamelet costs one `direct:` hop, and nothing is looked up while messages flow.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use camel_api::suggest::{nearest, to_snake_case};
use serde_json::{Map, Value as Json};

use super::loader::{Loaded, Reader};
use super::templates::{self, Library, Template, TemplateKind};
use crate::error::{RouteError, RouteErrorKind};
use crate::properties::{Budget, Properties};

/// How deep Kamelets may use Kamelets (and templates templates): past it, a use is an
/// error, which also stops a Kamelet that uses itself.
const MAX_EXPANSION_DEPTH: usize = 16;

/// The state one load shares between the files it reads and the copies it makes.
pub(super) struct Load {
    pub(super) library: Library,
    pub(super) properties: Properties,
    pub(super) budget: RefCell<Budget>,
    /// Numbers the uses, for their route ids and `direct:` names.
    next: Cell<usize>,
    depth: Cell<usize>,
}

impl Load {
    pub(super) fn new(library: Library, properties: &Properties) -> Rc<Load> {
        Rc::new(Load {
            library,
            properties: properties.clone(),
            budget: RefCell::new(Budget::default()),
            next: Cell::new(0),
            depth: Cell::new(0),
        })
    }

    fn next(&self) -> usize {
        let n = self.next.get() + 1;
        self.next.set(n);
        n
    }
}

/// One use of a Kamelet found in a route.
#[derive(Debug)]
pub(super) struct Use {
    name: String,
    route_id: Option<String>,
    /// The id `camel.kamelet.NAME.ID.PARAM` properties use: the route id given, or the
    /// role in a Pipe (`source`, `sink`, `action-N`).
    local: Option<String>,
    given: Map<String, Json>,
    /// Used by `from` (a source) rather than `to`.
    consumer: bool,
    /// Where the use is written.
    pointer: String,
    /// The `direct:` URI that joins the copy and the using route.
    direct: String,
    /// The use's number in the load, in its route id and `direct:` name.
    number: usize,
}

/// Inside a copy of a Kamelet: what `kamelet:source` and `kamelet:sink` stand for.
struct Wiring<'a> {
    name: &'a str,
    consumer: bool,
    direct: &'a str,
}

/// Local ids of Pipe endpoints, by pointer.
type Locals = std::collections::HashMap<String, String>;

/// What a walk over a document or a copy carries.
struct Walk<'w, 'e> {
    wiring: Option<&'w Wiring<'w>>,
    locals: &'w Locals,
    uses: &'w mut Vec<Use>,
    errors: &'e mut Vec<RouteError>,
}

/// Keys whose text value is an endpoint URI (snake_case).
const ENDPOINT_KEYS: &[&str] = &["to", "to_d", "wire_tap", "dead_letter_uri", "from"];

impl Reader {
    /// Replaces every Kamelet use in `value` (at `pointer`) by its `direct:` name and
    /// returns the uses, to instantiate once the document is read. A Pipe's `ref`s are
    /// first written as `kamelet:` URIs.
    pub(super) fn find_uses(&self, value: &mut Json, errors: &mut Vec<RouteError>) -> Vec<Use> {
        let mut locals = Locals::new();
        if let Json::Object(map) = value {
            let kind = map.get("kind").and_then(Json::as_str).unwrap_or_default();
            if matches!(kind, "Pipe" | "KameletBinding") {
                if let Some(Json::Object(spec)) = map.get_mut("spec") {
                    locals = self.pipe_refs(spec);
                }
            }
        }
        let mut uses = Vec::new();
        let mut walk = Walk {
            wiring: None,
            locals: &locals,
            uses: &mut uses,
            errors,
        };
        self.walk_uses(value, "", "", &mut walk);
        uses
    }

    /// `ref: {kind: Kamelet, name}` + `properties` → `uri: kamelet:NAME` + `properties`.
    /// Returns the local id of each Kamelet use made (`source`, `sink`, `action-N`, as
    /// Camel K names them in `camel.kamelet.NAME.ID.PARAM` properties), by pointer.
    fn pipe_refs(&self, spec: &mut Map<String, Json>) -> Locals {
        let mut locals = Locals::new();
        // Other references (a Knative broker, a Strimzi topic) are left for the Pipe's
        // reader, which refuses them.
        let mut one = |endpoint: &mut Json, pointer: String, local: String| {
            let Json::Object(map) = endpoint else { return };
            let name = match map.get("ref") {
                Some(r) if r.get("kind").and_then(Json::as_str) == Some("Kamelet") => {
                    match r.get("name").and_then(Json::as_str) {
                        Some(n) if !n.is_empty() => n.to_string(),
                        _ => return,
                    }
                }
                _ => return,
            };
            map.remove("ref");
            map.insert("uri".into(), Json::String(format!("kamelet:{name}")));
            locals.insert(pointer, local);
        };
        for key in ["source", "sink"] {
            if let Some(endpoint) = spec.get_mut(key) {
                one(endpoint, format!("/spec/{key}"), key.to_string());
            }
        }
        if let Some(Json::Array(steps)) = spec.get_mut("steps") {
            for (i, step) in steps.iter_mut().enumerate() {
                one(step, format!("/spec/steps/{i}"), format!("action-{i}"));
            }
        }
        locals
    }

    fn walk_uses(&self, value: &mut Json, pointer: &str, parent: &str, walk: &mut Walk<'_, '_>) {
        match value {
            Json::Object(map) => {
                kaoto_form(map);
                path_form(map);
                let uri_key = map
                    .iter()
                    .find(|(k, v)| to_snake_case(k) == "uri" && is_kamelet(v))
                    .map(|(k, _)| k.clone());
                if let Some(key) = uri_key {
                    let mut given = Map::new();
                    for params in ["parameters", "properties"] {
                        if let Some(Json::Object(p)) = map.remove(params) {
                            given.extend(p);
                        }
                    }
                    let consumer = parent == "from" || pointer == "/spec/source";
                    // A Pipe's reference is reported where the file wrote it.
                    let reference = format!("{pointer}/ref");
                    let at = if self.has_position(&reference) {
                        reference
                    } else {
                        format!("{pointer}/{key}")
                    };
                    let uri = map.get(&key).and_then(Json::as_str).unwrap_or_default();
                    let local = walk.locals.get(pointer).cloned();
                    if let Some(direct) = self.one_use(uri, given, consumer, &at, local, walk) {
                        map.insert(key, Json::String(direct));
                    }
                }
                for (k, v) in map.iter_mut() {
                    let snake = to_snake_case(k);
                    let at = format!("{pointer}/{}", super::node::escape(&snake));
                    if is_kamelet(v) && ENDPOINT_KEYS.contains(&snake.as_str()) {
                        let uri = v.as_str().unwrap_or_default().to_string();
                        if snake == "to_d" && uri.contains("${") {
                            walk.errors.push(
                                self.error(
                                    RouteErrorKind::InvalidValue(
                                        "`toD` to a Kamelet is not supported: a Kamelet is \
                                     copied when the route loads, so its name and \
                                     parameters must be known then; use `to`"
                                            .into(),
                                    ),
                                    &at,
                                ),
                            );
                            continue;
                        }
                        let consumer = snake == "from";
                        if let Some(direct) =
                            self.one_use(&uri, Map::new(), consumer, &at, None, walk)
                        {
                            *v = Json::String(direct);
                        }
                        continue;
                    }
                    self.walk_uses(v, &at, &snake, walk);
                }
            }
            Json::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    let at = format!("{pointer}/{i}");
                    self.walk_uses(item, &at, parent, walk);
                }
            }
            _ => {}
        }
    }

    /// One `kamelet:` URI: the `direct:` URI that replaces it, or `None` after an error.
    fn one_use(
        &self,
        uri: &str,
        mut given: Map<String, Json>,
        consumer: bool,
        pointer: &str,
        local: Option<String>,
        walk: &mut Walk<'_, '_>,
    ) -> Option<String> {
        let wiring = walk.wiring;
        let rest = uri.strip_prefix("kamelet:").unwrap_or(uri);
        let rest = rest.strip_prefix("//").unwrap_or(rest);
        let (path, query) = match rest.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (rest, None),
        };
        let (name, route_id) = match path.split_once('/') {
            Some((n, r)) if !r.is_empty() => (n, Some(r.to_string())),
            Some((n, _)) => (n, None),
            None => (path, None),
        };
        if let Some(query) = query {
            for option in query.split('&').filter(|o| !o.is_empty()) {
                let (k, v) = option.split_once('=').unwrap_or((option, ""));
                given.insert(
                    camel_api::percent_decode(k),
                    Json::String(camel_api::percent_decode(v)),
                );
            }
        }
        let errors = &mut *walk.errors;
        let fail = |errors: &mut Vec<RouteError>, message: String| {
            errors.push(self.error(RouteErrorKind::InvalidValue(message), pointer));
            None
        };
        match (name, wiring) {
            ("source" | "sink", None) => fail(
                errors,
                format!(
                    "`kamelet:{name}` stands for the route that uses a Kamelet, so it is \
                     written only inside a Kamelet's template"
                ),
            ),
            ("source", Some(w)) if w.consumer || !consumer => fail(
                errors,
                if w.consumer {
                    format!(
                        "Kamelet `{}` starts at `kamelet:source`, so it is a sink or an \
                         action: use it in `to`, not in `from`",
                        w.name
                    )
                } else {
                    "`kamelet:source` is where a Kamelet's messages come in: write it in \
                     `from`"
                        .into()
                },
            ),
            ("sink", Some(w)) if !w.consumer || consumer => fail(
                errors,
                if consumer {
                    "`kamelet:sink` is where a Kamelet's messages go out: write it in `to`".into()
                } else {
                    format!(
                        "Kamelet `{}` sends to `kamelet:sink`, so it is a source: use it in \
                         `from`, not in `to`",
                        w.name
                    )
                },
            ),
            ("source" | "sink", Some(w)) => Some(w.direct.to_string()),
            ("", _) => fail(
                errors,
                "`kamelet:` needs the Kamelet's name: `kamelet:NAME?param=value`".into(),
            ),
            _ => {
                let n = self.load.next();
                let direct = format!("direct:camel.kamelet.{name}.{n}");
                walk.uses.push(Use {
                    name: name.to_string(),
                    local: local.or_else(|| route_id.clone()),
                    route_id,
                    given,
                    consumer,
                    pointer: pointer.to_string(),
                    direct: direct.clone(),
                    number: n,
                });
                Some(direct)
            }
        }
    }

    /// Reads a copy of each Kamelet used: the routes, or the errors at each use.
    pub(super) fn instantiate_uses(&self, uses: Vec<Use>) -> Loaded {
        let mut routes = Vec::new();
        let mut errors = Vec::new();
        for one in uses {
            let Some(template) = self.load.library.kamelets.get(&one.name) else {
                let known = self.load.library.kamelets.keys().map(String::as_str);
                let hint = nearest(&one.name, known)
                    .map(|n| format!(" (did you mean `{n}`?)"))
                    .unwrap_or_default();
                errors.push(self.error(
                    RouteErrorKind::InvalidValue(format!(
                        "no Kamelet named `{}`{hint}: give its `.kamelet.yaml` file on the \
                         command line, put it beside the route files, or point `--kamelets` \
                         at a folder holding it",
                        one.name
                    )),
                    &one.pointer,
                ));
                continue;
            };
            let id = one
                .route_id
                .clone()
                .unwrap_or_else(|| format!("{}-{}", one.name, one.number));
            let wiring = Wiring {
                name: &one.name,
                consumer: one.consumer,
                direct: &one.direct,
            };
            let local = one.local.clone().unwrap_or_else(|| id.clone());
            let (r, e) =
                self.instance(template, one.given, id, &local, Some(&wiring), &one.pointer);
            routes.extend(r);
            errors.extend(e);
        }
        (routes, errors)
    }

    /// `templatedRoute: {routeTemplateRef, routeId, parameters: [{name, value}]}`.
    pub(super) fn templated_route(&self, body: Json, pointer: &str) -> Loaded {
        let fail = |message: String, at: &str| {
            (
                Vec::new(),
                vec![self.error(RouteErrorKind::InvalidValue(message), at)],
            )
        };
        let Json::Object(map) = body else {
            return fail(
                "`templatedRoute` takes a map with `routeTemplateRef` and `parameters`".into(),
                pointer,
            );
        };
        let mut reference = None;
        let mut route_id = None;
        let mut given = Map::new();
        let mut errors = Vec::new();
        for (key, value) in map {
            let at = format!("{pointer}/{key}");
            match to_snake_case(&key).as_str() {
                "route_template_ref" => reference = value.as_str().map(str::to_string),
                "route_id" => match value.as_str() {
                    Some(id) => match crate::model::check_route_id(id) {
                        Ok(()) => route_id = Some(id.to_string()),
                        Err(why) => errors.push(self.error(RouteErrorKind::InvalidValue(why), &at)),
                    },
                    None => errors.push(self.wrong_type(&key, "text", &at)),
                },
                "parameters" => match value {
                    Json::Array(items) => {
                        for (i, item) in items.into_iter().enumerate() {
                            let name = item.get("name").and_then(Json::as_str).map(str::to_string);
                            match (name, item.get("value")) {
                                (Some(n), Some(v)) => {
                                    given.insert(n, v.clone());
                                }
                                _ => errors.push(self.error(
                                    RouteErrorKind::InvalidValue(
                                        "a templated route parameter is `{name, value}`".into(),
                                    ),
                                    &format!("{at}/{i}"),
                                )),
                            }
                        }
                    }
                    Json::Object(m) => given.extend(m),
                    Json::Null => {}
                    _ => errors.push(self.wrong_type(&key, "a list of `{name, value}`", &at)),
                },
                "description" | "prefix_id" | "id" => {}
                "beans" => errors.push(
                    self.error(
                        RouteErrorKind::InvalidValue(
                            "`beans` of a templated route are built per instance; camel-rs does \
                         not support them yet: declare them in a top-level `beans` item"
                                .into(),
                        ),
                        &at,
                    ),
                ),
                _ => errors.push(self.unknown_key(
                    &key,
                    &["routeTemplateRef", "routeId", "parameters", "description"],
                    pointer,
                )),
            }
        }
        let Some(reference) = reference else {
            errors.push(self.error(RouteErrorKind::Missing("routeTemplateRef".into()), pointer));
            return (Vec::new(), errors);
        };
        let Some(template) = self.load.library.route_templates.get(&reference) else {
            let known = self.load.library.route_templates.keys().map(String::as_str);
            let hint = nearest(&reference, known)
                .map(|n| format!(" (did you mean `{n}`?)"))
                .unwrap_or_default();
            errors.push(self.error(
                RouteErrorKind::InvalidValue(format!(
                    "no route template with id `{reference}`{hint}"
                )),
                &format!("{pointer}/routeTemplateRef"),
            ));
            return (Vec::new(), errors);
        };
        if !errors.is_empty() {
            return (Vec::new(), errors);
        }
        let id = route_id.unwrap_or_else(|| format!("{reference}-{}", self.load.next()));
        let local = id.clone();
        self.instance(template, given, id, &local, None, pointer)
    }

    /// A copy of `template` bound with `given`, read as route `id` in the template's file.
    fn instance(
        &self,
        template: &Template,
        given: Map<String, Json>,
        id: String,
        local: &str,
        wiring: Option<&Wiring<'_>>,
        use_pointer: &str,
    ) -> Loaded {
        let mut errors: Vec<RouteError> = template
            .refused
            .iter()
            .map(|(at, why)| {
                self.for_template(template)
                    .error(RouteErrorKind::InvalidValue(why.clone()), at)
            })
            .collect();
        let depth = self.load.depth.get();
        if depth >= MAX_EXPANSION_DEPTH {
            errors.push(self.error(
                RouteErrorKind::InvalidValue(format!(
                    "{} `{}` is used {MAX_EXPANSION_DEPTH} levels deep: does it use itself?",
                    template.kind.noun(),
                    template.name
                )),
                use_pointer,
            ));
            return (Vec::new(), errors);
        }
        let mut bound = match templates::bind(template, given, local, &self.load.properties) {
            Ok(b) => b,
            Err(messages) => {
                errors.extend(messages.into_iter().map(|m| {
                    self.error(RouteErrorKind::InvalidValue(m), use_pointer)
                        .in_route(None)
                }));
                return (Vec::new(), errors);
            }
        };
        if !errors.is_empty() {
            return (Vec::new(), errors);
        }
        // A template's beans (ADR 0119): `{{name}}` of a Camel component bean is its
        // scheme; of a datasource bean, the name of this use's copy.
        let mut beans = Vec::new();
        for (at, bean) in &template.beans {
            let name = bean.get("name").and_then(Json::as_str).unwrap_or_default();
            let ty = bean.get("type").and_then(Json::as_str).unwrap_or_default();
            if let Some(scheme) = templates::component_scheme(ty) {
                bound.insert(name.to_string(), Json::String(scheme));
                continue;
            }
            let unique = format!("{name}-{id}");
            bound.insert(name.to_string(), Json::String(unique.clone()));
            beans.push((
                at.clone(),
                unique,
                ty.to_string(),
                bean.get("properties").cloned(),
            ));
        }
        let mut body = template.body.clone();
        templates::substitute(&mut body, template, &bound);
        if let Json::Object(map) = &mut body {
            map.retain(|k, _| k != "id");
            map.insert("id".into(), Json::String(id.clone()));
        }
        let reader = self.for_template(template);
        let mut unresolved = Vec::new();
        super::placeholders::resolve(
            &mut body,
            template.pointer.clone(),
            &self.load.properties,
            &mut self.load.budget.borrow_mut(),
            &mut unresolved,
        );
        let mut definitions = Vec::new();
        for (at, unique, bean_type, properties) in beans {
            let mut properties = properties.unwrap_or(Json::Object(Map::new()));
            templates::substitute(&mut properties, template, &bound);
            super::placeholders::resolve(
                &mut properties,
                format!("{at}/properties"),
                &self.load.properties,
                &mut self.load.budget.borrow_mut(),
                &mut unresolved,
            );
            definitions.push(crate::model::BeanDefinition {
                name: unique,
                bean_type,
                properties: match properties {
                    Json::Object(map) => map,
                    _ => Map::new(),
                },
                location: reader.locate(&format!("{at}/type")),
                refused: false,
            });
        }
        if !unresolved.is_empty() {
            errors.extend(unresolved.into_iter().map(|(e, at)| {
                // A parameter of the template is not an application property: say which
                // parameter of which Kamelet (or template) is not given.
                let param = match &e {
                    crate::properties::PropertyError::Missing { key } => {
                        template.params.iter().find(|p| p.name == *key)
                    }
                    _ => None,
                };
                let kind = match param {
                    Some(p) => RouteErrorKind::InvalidValue(format!(
                        "{} `{}`: the parameter `{}`{} is not given and has no default, and \
                         `{{{{{}}}}}` needs it (give it, or write `{{{{?{}}}}}` to leave the \
                         option out without it)",
                        template.kind.noun(),
                        template.name,
                        p.name,
                        p.description
                            .as_deref()
                            .map(|d| format!(" ({})", d.trim()))
                            .unwrap_or_default(),
                        p.name,
                        p.name
                    )),
                    None => RouteErrorKind::Property(e),
                };
                reader.error(kind, &at).in_route(Some(&id))
            }));
            return (Vec::new(), errors);
        }
        let uses = reader.walk_copy(&mut body, &template.pointer, wiring, &mut errors);
        if let Some(w) = wiring {
            if !w.consumer && !from_is(&body, w.direct) {
                errors.push(self.error(
                    RouteErrorKind::InvalidValue(format!(
                        "Kamelet `{}` does not start at `kamelet:source`, so it is a source: \
                         use it in `from`, not in `to`",
                        template.name
                    )),
                    use_pointer,
                ));
            }
        }
        self.load.depth.set(depth + 1);
        let mut routes = Vec::new();
        match reader.route(body, &template.pointer) {
            Ok(mut route) => {
                route.beans.extend(definitions);
                routes.push(route)
            }
            Err(e) => errors.extend(e),
        }
        let (r, e) = reader.instantiate_uses(uses);
        self.load.depth.set(depth);
        routes.extend(r);
        errors.extend(e);
        if template.kind == TemplateKind::Kamelet {
            // A Kamelet's copy is an implementation detail of the route that uses it.
            for route in &mut routes {
                route.description.get_or_insert_with(|| {
                    format!(
                        "Kamelet {} (used at {})",
                        template.name,
                        self.where_is(use_pointer)
                    )
                });
            }
        }
        (routes, errors)
    }

    fn walk_copy(
        &self,
        body: &mut Json,
        pointer: &str,
        wiring: Option<&Wiring<'_>>,
        errors: &mut Vec<RouteError>,
    ) -> Vec<Use> {
        let mut uses = Vec::new();
        let locals = Locals::new();
        let mut walk = Walk {
            wiring,
            locals: &locals,
            uses: &mut uses,
            errors,
        };
        self.walk_uses(body, pointer, "", &mut walk);
        uses
    }

    fn where_is(&self, pointer: &str) -> String {
        self.locate_pointer(pointer)
            .map(|l| l.to_string())
            .unwrap_or_else(|| pointer.to_string())
    }
}

/// The path parameter of a component's URI syntax (Camel's `timer:timerName`,
/// `http://httpUri`…), by scheme: the name `parameters` may give it under.
const PATH_PARAMETERS: &[(&str, &str)] = &[
    ("aws2-sqs", "queueNameOrArn"),
    ("bean", "beanName"),
    ("cron", "name"),
    ("direct", "name"),
    ("file", "directoryName"),
    ("file-watch", "path"),
    ("http", "httpUri"),
    ("https", "httpUri"),
    ("kafka", "topic"),
    ("log", "loggerName"),
    ("mock", "name"),
    ("nats", "topic"),
    ("once", "name"),
    ("paho", "topic"),
    ("paho-mqtt5", "topic"),
    ("platform-http", "path"),
    ("scheduler", "name"),
    ("seda", "name"),
    ("spring-rabbitmq", "exchangeName"),
    ("sql", "query"),
    ("stream", "kind"),
    ("timer", "timerName"),
    ("xslt", "resourceUri"),
];

/// Kaoto's spelling of an endpoint whose path is one parameter: `uri` is the bare scheme
/// and `parameters` holds the path under its name in Camel's URI syntax
/// (`uri: timer` with `parameters.timerName`), made the URI Camel builds from them
/// (`timer:NAME`). For `http`/`https` the path is the host and resource
/// (`localhost:8080/x`), so the URI is `http://localhost:8080/x`, as Camel's syntax
/// `http://httpUri` says, unless the value names its scheme already.
fn path_form(map: &mut Map<String, Json>) {
    let Some(key) = map.keys().find(|k| to_snake_case(k) == "uri").cloned() else {
        return;
    };
    let Some(scheme) = map.get(&key).and_then(Json::as_str).map(str::to_string) else {
        return;
    };
    let Some((_, name)) = PATH_PARAMETERS.iter().find(|(s, _)| *s == scheme) else {
        return;
    };
    let Some(Json::Object(params)) = map.get_mut("parameters") else {
        return;
    };
    let Some(path) = params.get(*name).and_then(|v| match v {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        _ => None,
    }) else {
        return;
    };
    params.remove(*name);
    let uri = if scheme.starts_with("http") {
        if path.starts_with("http://") || path.starts_with("https://") {
            path
        } else {
            format!("{scheme}://{path}")
        }
    } else {
        format!("{scheme}:{path}")
    };
    map.insert(key, Json::String(uri));
}

/// Camel's other spellings of a Kamelet use, made `uri: kamelet:NAME`: Kaoto's
/// `uri: kamelet` with `parameters.templateId` (and `routeId`), and the `kamelet` step
/// (`- kamelet: {name: "NAME?p=v", parameters: {…}}`, or `- kamelet: NAME`).
fn kaoto_form(map: &mut Map<String, Json>) {
    if let Some(key) = map
        .keys()
        .find(|k| to_snake_case(k) == "uri" && map[*k].as_str() == Some("kamelet"))
        .cloned()
    {
        let Some(Json::Object(params)) = map.get_mut("parameters") else {
            return;
        };
        let Some(name) = params
            .remove("templateId")
            .and_then(|v| v.as_str().map(str::to_string))
        else {
            return;
        };
        let route = params
            .remove("routeId")
            .and_then(|v| v.as_str().map(|r| format!("/{r}")))
            .unwrap_or_default();
        map.insert(key, Json::String(format!("kamelet:{name}{route}")));
        return;
    }
    if map.len() == 1 {
        let Some(step) = map.remove("kamelet") else {
            return;
        };
        let replacement = match step {
            Json::String(name) => Json::String(format!("kamelet:{name}")),
            Json::Object(mut m) => {
                let name = m
                    .remove("name")
                    .and_then(|v| v.as_str().map(str::to_string));
                let mut to = Map::new();
                to.insert(
                    "uri".into(),
                    Json::String(format!("kamelet:{}", name.unwrap_or_default())),
                );
                if let Some(p) = m.remove("parameters") {
                    to.insert("parameters".into(), p);
                }
                Json::Object(to)
            }
            other => {
                map.insert("kamelet".into(), other);
                return;
            }
        };
        map.insert("to".into(), replacement);
    }
}

/// Whether the route body consumes `uri`.
fn from_is(body: &Json, uri: &str) -> bool {
    let from = body.get("from");
    match from {
        Some(Json::String(s)) => s == uri,
        Some(Json::Object(m)) => m
            .iter()
            .any(|(k, v)| to_snake_case(k) == "uri" && v.as_str() == Some(uri)),
        _ => false,
    }
}

fn is_kamelet(value: &Json) -> bool {
    value.as_str().is_some_and(|s| s.starts_with("kamelet:"))
}
