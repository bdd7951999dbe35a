//! Kamelets and route templates: routes written once with `{{name}}` parameters and
//! instantiated, at load time, once per use.
//!
//! Both are collected from every file of a load before any route is read, so a use may
//! come before its definition, or sit in another file. A use binds the parameters (given,
//! then `camel.kamelet.NAME.PARAM` properties for a Kamelet, then the definition's
//! default), checks them against the definition (required, type), substitutes them into a
//! copy of the template, and the copy is then read like any route of the template's file:
//! its errors point into that file. Application placeholders left in the copy are resolved
//! after the parameters, so a parameter is never reported as a missing property.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use camel_api::suggest::to_snake_case;
use serde_json::{Map, Value as Json};

use super::placeholders::Known;
use crate::error::{Location, RouteError, RouteErrorKind};
use crate::model::SourceMap;

/// What kind of template: how a use names it and how errors speak of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TemplateKind {
    /// `kind: Kamelet`, used as `kamelet:NAME`.
    Kamelet,
    /// A `routeTemplate` item, used by `templatedRoute`.
    RouteTemplate,
}

impl TemplateKind {
    pub(crate) fn noun(self) -> &'static str {
        match self {
            TemplateKind::Kamelet => "Kamelet",
            TemplateKind::RouteTemplate => "route template",
        }
    }
}

/// The declared type of a parameter (a Kamelet's JSON schema `type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParamType {
    Text,
    Integer,
    Number,
    Boolean,
    /// Undeclared, `object`, `array`: taken as given.
    Any,
}

impl ParamType {
    fn of(name: Option<&str>) -> ParamType {
        match name {
            Some("string") => ParamType::Text,
            Some("integer") => ParamType::Integer,
            Some("number") => ParamType::Number,
            Some("boolean") => ParamType::Boolean,
            _ => ParamType::Any,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ParamType::Text => "text",
            ParamType::Integer => "an integer",
            ParamType::Number => "a number",
            ParamType::Boolean => "true or false",
            ParamType::Any => "any value",
        }
    }

    /// The value in the declared type, or `None` when it does not convert. A text that
    /// reads as the type converts, as Camel converts it.
    fn convert(self, value: &Json) -> Option<Json> {
        let text = match value {
            Json::String(s) => Some(s.trim()),
            _ => None,
        };
        match self {
            ParamType::Text => Some(match value {
                Json::String(_) => value.clone(),
                Json::Null => Json::String(String::new()),
                other => Json::String(other.to_string()),
            }),
            ParamType::Any => Some(value.clone()),
            ParamType::Integer => match value {
                Json::Number(n) if n.is_i64() || n.is_u64() => Some(value.clone()),
                _ => text.and_then(|t| t.parse::<i64>().ok()).map(Json::from),
            },
            ParamType::Number => match value {
                Json::Number(_) => Some(value.clone()),
                _ => text
                    .and_then(|t| t.parse::<f64>().ok())
                    .and_then(serde_json::Number::from_f64)
                    .map(Json::Number),
            },
            ParamType::Boolean => match (value, text) {
                (Json::Bool(_), _) => Some(value.clone()),
                (_, Some("true")) => Some(Json::Bool(true)),
                (_, Some("false")) => Some(Json::Bool(false)),
                _ => None,
            },
        }
    }
}

/// One declared parameter.
#[derive(Clone, Debug)]
pub(crate) struct Param {
    pub(crate) name: String,
    pub(crate) default: Option<Json>,
    pub(crate) required: bool,
    pub(crate) ty: ParamType,
    pub(crate) description: Option<String>,
}

/// A template: its parameters and the route body to copy, with where it was written.
#[derive(Clone, Debug)]
pub(crate) struct Template {
    pub(crate) kind: TemplateKind,
    pub(crate) name: String,
    pub(crate) params: Vec<Param>,
    /// The route body (a map holding `from`), parameters not yet substituted.
    pub(crate) body: Json,
    /// The file and positions of the template's text, and the pointer of `body`.
    pub(crate) file: Arc<str>,
    pub(crate) positions: Arc<HashMap<String, (usize, usize)>>,
    pub(crate) pointer: String,
    /// Where `camel.kamelet.*` and error messages may point a user: the definition.
    pub(crate) location: Option<Location>,
    /// Keys of the template that camel-rs cannot honour (Kamelet `beans` of Java
    /// classes …): each an error when the template is used.
    pub(crate) refused: Vec<(String, String)>,
    /// A Kamelet template's `beans` that camel-rs builds (JDBC `DataSource`s, Camel
    /// components), each with its pointer: bound per use (ADR 0119).
    pub(crate) beans: Vec<(String, Json)>,
}

/// The scheme a Camel component class stands for (`org.apache.camel.component.sql.
/// SqlComponent` is `sql`), or `None` for any other class.
pub(crate) fn component_scheme(bean_type: &str) -> Option<String> {
    let t = bean_type.trim();
    let class = t.strip_prefix("#class:").unwrap_or(t).trim();
    let rest = class.strip_prefix("org.apache.camel.component.")?;
    let (package, simple) = rest.rsplit_once('.')?;
    if !simple.ends_with("Component") {
        return None;
    }
    let scheme = package.split('.').next()?;
    Some(match scheme {
        "aws2" | "aws" => return None,
        s => s.to_string(),
    })
}

/// The beans of a Kamelet template when camel-rs can build each of them, or why not.
fn kept_beans(beans: Json, pointer: &str) -> Result<Vec<(String, Json)>, String> {
    let Json::Array(items) = beans else {
        return Err("a Kamelet template's `beans` is a list of `{name, type, properties}`".into());
    };
    let mut kept = Vec::new();
    for (i, bean) in items.into_iter().enumerate() {
        let name = bean.get("name").and_then(Json::as_str).unwrap_or_default();
        let ty = bean.get("type").and_then(Json::as_str).unwrap_or_default();
        let empty = Map::new();
        let props = bean
            .get("properties")
            .and_then(Json::as_object)
            .unwrap_or(&empty);
        let supported = component_scheme(ty).is_some()
            || crate::datasource_bean::datasource_url(ty, props).is_some();
        if name.is_empty() || !supported {
            return Err(format!(
                "the bean `{name}` of this Kamelet's template is a Java object (`{ty}`) built \
                 per use; camel-rs builds a template's JDBC `DataSource` beans and Camel \
                 component beans, not others yet"
            ));
        }
        kept.push((format!("{pointer}/{i}"), bean));
    }
    Ok(kept)
}

/// The templates of one load: Kamelets by name, route templates by id.
#[derive(Default)]
pub(crate) struct Library {
    pub(crate) kamelets: HashMap<String, Template>,
    pub(crate) route_templates: HashMap<String, Template>,
}

/// A template definition read from a document, or every error of it.
pub(crate) type Defined = Result<Template, Vec<RouteError>>;

/// Reading template definitions from parsed documents.
pub(crate) struct DefinitionReader<'a> {
    pub(crate) file: &'a Arc<str>,
    pub(crate) positions: &'a Arc<HashMap<String, (usize, usize)>>,
}

impl DefinitionReader<'_> {
    fn locate(&self, pointer: &str) -> Option<Location> {
        SourceMap {
            file: self.file.clone(),
            positions: self.positions.clone(),
            ..Default::default()
        }
        .locate(pointer)
    }

    fn error(&self, message: String, pointer: &str) -> RouteError {
        RouteError::new(RouteErrorKind::InvalidValue(message)).at(self.locate(pointer))
    }

    /// A `kind: Kamelet` document (`apiVersion: camel.apache.org/v1`, `v1alpha1`).
    pub(crate) fn kamelet(&self, doc: &Map<String, Json>) -> Defined {
        let mut errors = Vec::new();
        let name = doc
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Json::as_str)
            .map(str::to_string);
        if name.is_none() {
            errors.push(self.error(
                "a Kamelet needs `metadata.name`: the name routes use in `kamelet:NAME`".into(),
                "/metadata",
            ));
        }
        let spec = doc.get("spec").and_then(Json::as_object);
        let definition = spec
            .and_then(|s| s.get("definition"))
            .and_then(Json::as_object);
        let required: HashSet<&str> = definition
            .and_then(|d| d.get("required"))
            .and_then(Json::as_array)
            .map(|r| r.iter().filter_map(Json::as_str).collect())
            .unwrap_or_default();
        let mut params = Vec::new();
        if let Some(properties) = definition
            .and_then(|d| d.get("properties"))
            .and_then(Json::as_object)
        {
            for (pname, declared) in properties {
                let declared = declared.as_object();
                let field = |k: &str| declared.and_then(|d| d.get(k));
                params.push(Param {
                    name: pname.clone(),
                    default: field("default").cloned(),
                    required: required.contains(pname.as_str()),
                    ty: ParamType::of(field("type").and_then(Json::as_str)),
                    description: field("description")
                        .or_else(|| field("title"))
                        .and_then(Json::as_str)
                        .map(str::to_string),
                });
            }
        }
        // `spec.template` (Camel 4), or `spec.flow` as older Kamelets write it.
        let (key, template) = match spec.and_then(|s| {
            s.get("template")
                .map(|t| ("template", t))
                .or_else(|| s.get("flow").map(|t| ("flow", t)))
        }) {
            Some((k, Json::Object(t))) => (k, t.clone()),
            _ => {
                errors.push(self.error(
                    "a Kamelet needs `spec.template`: the route (`from: …`) it stands for".into(),
                    "/spec",
                ));
                ("template", Map::new())
            }
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        let pointer = format!("/spec/{key}");
        let (body, refused) = route_body(template, &pointer, self)?;
        Ok(Template {
            kind: TemplateKind::Kamelet,
            name: name.unwrap_or_default(),
            params,
            body,
            file: self.file.clone(),
            positions: self.positions.clone(),
            location: self.locate("/metadata/name"),
            pointer: body_pointer(&pointer, &refused),
            refused: refused.refused,
            beans: refused.beans,
        })
    }

    /// A `routeTemplate` item at `pointer`: `{id, parameters: [{name, defaultValue,
    /// description, required}], route: {…}}` or with `from:` in place of `route:`.
    pub(crate) fn route_template(&self, value: &Json, pointer: &str) -> Defined {
        let Some(map) = value.as_object() else {
            return Err(vec![self.error(
                "`routeTemplate` takes a map with `id`, `parameters` and `route` (or `from`)"
                    .into(),
                pointer,
            )]);
        };
        let mut errors = Vec::new();
        let mut id = None;
        let mut params = Vec::new();
        let mut body = Map::new();
        let mut body_at = pointer.to_string();
        for (key, v) in map {
            let at = format!("{pointer}/{key}");
            match to_snake_case(key).as_str() {
                "id" => match v.as_str() {
                    Some(s) if !s.is_empty() => id = Some(s.to_string()),
                    _ => errors.push(self.error("`id` of a route template is a text".into(), &at)),
                },
                "description" => {}
                "parameters" => match v {
                    Json::Array(items) => {
                        for (i, item) in items.iter().enumerate() {
                            match self.template_parameter(item, &format!("{at}/{i}")) {
                                Ok(p) => params.push(p),
                                Err(e) => errors.push(e),
                            }
                        }
                    }
                    Json::Null => {}
                    _ => errors.push(
                        self.error(
                            "`parameters` of a route template is a list of `{name, defaultValue, \
                         description}`"
                                .into(),
                            &at,
                        ),
                    ),
                },
                "route" => match v {
                    Json::Object(r) => {
                        body = r.clone();
                        body_at = at;
                    }
                    _ => errors.push(self.error("`route` takes a map with `from`".into(), &at)),
                },
                "from" => {
                    body.insert(key.clone(), v.clone());
                }
                "beans" | "template_bean" => errors.push(self.error(
                    format!(
                        "`{key}` of a route template builds beans for each instance; camel-rs \
                         does not support it yet: declare the beans in a top-level `beans` item"
                    ),
                    &at,
                )),
                _ => errors.push(
                    RouteError::new(RouteErrorKind::UnknownKey {
                        key: key.clone(),
                        suggestion: camel_api::suggest::nearest(
                            key,
                            ["id", "description", "parameters", "route", "from"],
                        )
                        .map(str::to_string),
                        expected: ["id", "description", "parameters", "route", "from"]
                            .iter()
                            .map(|s| s.to_string())
                            .collect(),
                    })
                    .at(self.locate(&at)),
                ),
            }
        }
        if id.is_none() {
            errors.push(self.error(
                "a route template needs an `id`: the name `templatedRoute` refers to".into(),
                pointer,
            ));
        }
        if body.is_empty() {
            errors.push(self.error(
                "a route template needs a `route` (or `from`): the route it stands for".into(),
                pointer,
            ));
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Template {
            kind: TemplateKind::RouteTemplate,
            name: id.unwrap_or_default(),
            params,
            body: Json::Object(body),
            file: self.file.clone(),
            positions: self.positions.clone(),
            location: self.locate(pointer),
            pointer: body_at,
            refused: Vec::new(),
            beans: Vec::new(),
        })
    }

    fn template_parameter(&self, item: &Json, pointer: &str) -> Result<Param, RouteError> {
        let Some(map) = item.as_object() else {
            return Err(self.error(
                "a template parameter is `{name, defaultValue, description, required}`".into(),
                pointer,
            ));
        };
        let mut param = Param {
            name: String::new(),
            default: None,
            required: true,
            ty: ParamType::Any,
            description: None,
        };
        let mut required = None;
        for (key, v) in map {
            let at = format!("{pointer}/{key}");
            match to_snake_case(key).as_str() {
                "name" => param.name = v.as_str().unwrap_or_default().to_string(),
                "default_value" => param.default = Some(v.clone()),
                "description" => param.description = v.as_str().map(str::to_string),
                "required" => match v {
                    Json::Bool(b) => required = Some(*b),
                    Json::String(s) if s == "true" || s == "false" => required = Some(s == "true"),
                    _ => return Err(self.error("`required` is true or false".into(), &at)),
                },
                _ => {
                    return Err(RouteError::new(RouteErrorKind::UnknownKey {
                        key: key.clone(),
                        suggestion: camel_api::suggest::nearest(
                            key,
                            ["name", "defaultValue", "description", "required"],
                        )
                        .map(str::to_string),
                        expected: ["name", "defaultValue", "description", "required"]
                            .iter()
                            .map(|s| s.to_string())
                            .collect(),
                    })
                    .at(self.locate(&at)))
                }
            }
        }
        if param.name.is_empty() {
            return Err(self.error("a template parameter needs a `name`".into(), pointer));
        }
        // Camel: required unless a default is given or `required: false` says so.
        param.required = required.unwrap_or(param.default.is_none());
        Ok(param)
    }
}

/// What `route_body` set aside.
struct Refused {
    refused: Vec<(String, String)>,
    /// The template held `route:` around `from`.
    nested: bool,
    /// The `beans` camel-rs builds.
    beans: Vec<(String, Json)>,
}

/// The pointer of the route body inside a Kamelet's template.
fn body_pointer(pointer: &str, refused: &Refused) -> String {
    if refused.nested {
        format!("{pointer}/route")
    } else {
        pointer.to_string()
    }
}

/// A Kamelet's `spec.template` as a route body: `{from: …}` or `{route: {from: …}}`,
/// its `beans` set aside (refused when the Kamelet is used).
fn route_body(
    mut template: Map<String, Json>,
    pointer: &str,
    reader: &DefinitionReader<'_>,
) -> Result<(Json, Refused), Vec<RouteError>> {
    let mut refused = Vec::new();
    let mut beans = Vec::new();
    if let Some(list) = template.remove("beans") {
        let at = format!("{pointer}/beans");
        match kept_beans(list, &at) {
            Ok(kept) => beans = kept,
            Err(why) => refused.push((at, why)),
        }
    }
    if template.remove("parameters").is_some() {
        refused.push((
            format!("{pointer}/parameters"),
            "`parameters` in a Kamelet template is not supported yet".to_string(),
        ));
    }
    if let Some(Json::Object(route)) = template.remove("route") {
        return Ok((
            Json::Object(route),
            Refused {
                refused,
                nested: true,
                beans,
            },
        ));
    }
    if !template.contains_key("from") {
        return Err(vec![reader.error(
            "a Kamelet's `spec.template` holds one route: `from: {uri: …, steps: […]}`".into(),
            pointer,
        )]);
    }
    Ok((
        Json::Object(template),
        Refused {
            refused,
            nested: false,
            beans,
        },
    ))
}

/// The parameters of one use, bound: every declared one that has a value, plus the
/// undeclared ones given.
pub(crate) type Bound = HashMap<String, Json>;

/// Why a use could not bind its parameters: each message is located at the use.
pub(crate) fn bind(
    template: &Template,
    given: Map<String, Json>,
    route_id: &str,
    properties: &crate::properties::Properties,
) -> Result<Bound, Vec<String>> {
    let mut bound = Bound::new();
    let mut errors = Vec::new();
    let mut given = given;
    for param in &template.params {
        // A given name matches in Camel's spellings (`contentType`, `content-type`).
        let key = given
            .keys()
            .find(|k| **k == param.name)
            .or_else(|| {
                given
                    .keys()
                    .find(|k| to_snake_case(k) == to_snake_case(&param.name))
            })
            .cloned();
        let value = key
            .and_then(|k| given.remove(&k))
            .or_else(|| {
                (template.kind == TemplateKind::Kamelet)
                    .then(|| {
                        properties
                            .get(&format!(
                                "camel.kamelet.{}.{route_id}.{}",
                                template.name, param.name
                            ))
                            .or_else(|| {
                                properties
                                    .get(&format!("camel.kamelet.{}.{}", template.name, param.name))
                            })
                            .map(|v| Json::String(v.to_string()))
                    })
                    .flatten()
            })
            .or_else(|| param.default.clone());
        match value {
            Some(v) => match param.ty.convert(&v) {
                Some(typed) => {
                    bound.insert(param.name.clone(), typed);
                }
                None => errors.push(format!(
                    "parameter `{}` of {} `{}` is {}; `{}` is not",
                    param.name,
                    template.kind.noun(),
                    template.name,
                    param.ty.name(),
                    text_of(&v)
                )),
            },
            None if param.required => errors.push(format!(
                "{} `{}` needs the parameter `{}`{}",
                template.kind.noun(),
                template.name,
                param.name,
                param
                    .description
                    .as_deref()
                    .map(|d| format!(" ({})", d.trim()))
                    .unwrap_or_default()
            )),
            None => {}
        }
    }
    // Parameters the definition does not declare are still bound, as Camel binds them.
    bound.extend(given);
    if errors.is_empty() {
        Ok(bound)
    } else {
        Err(errors)
    }
}

fn text_of(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Replaces the parameters in every string of `value`: `{{name}}`, `{{?name}}` (nothing
/// when unbound; the key or URI option holding it alone is dropped) and `{{name:default}}`.
/// A placeholder that names no parameter of the template is left for the application
/// properties. A string that is one parameter alone takes the parameter's type.
pub(crate) fn substitute(value: &mut Json, template: &Template, bound: &Bound) {
    let declared: HashSet<&str> = template.params.iter().map(|p| p.name.as_str()).collect();
    let names = Names {
        declared: &declared,
        bound,
    };
    names.walk(value, "");
}

/// Whether the options of a map under `key` are an endpoint's, which an unset optional
/// placeholder leaves out (elsewhere it is an empty text, as Camel resolves it).
pub(crate) fn holds_endpoint_options(key: &str) -> bool {
    matches!(key, "parameters" | "properties")
}

struct Names<'a> {
    declared: &'a HashSet<&'a str>,
    bound: &'a Bound,
}

/// What a string became.
enum Replaced {
    Keep,
    Value(Json),
    /// An optional placeholder alone with nothing bound: drop the key.
    Drop,
}

impl Names<'_> {
    fn walk(&self, value: &mut Json, key: &str) {
        if let Json::String(text) = value {
            // Simple's `${properties:…}` and `${propertiesExist:…}` read the template's
            // parameters first, as Camel's template-local properties.
            let lookup = |name: &str| match self.bound.get(name) {
                Some(Json::Null) => Known::Unset,
                Some(Json::String(s)) => Known::Set(s.clone()),
                Some(other) => Known::Set(other.to_string()),
                None if self.declared.contains(name) => Known::Unset,
                None => Known::Unknown,
            };
            if let Some(done) = super::placeholders::simple_properties(text, &lookup) {
                *text = done;
            }
        }
        match value {
            Json::String(text) if text.contains("{{") => match self.replace(text) {
                Replaced::Keep => {}
                Replaced::Value(v) => *value = v,
                Replaced::Drop => *value = Json::String(String::new()),
            },
            Json::Array(items) => items.iter_mut().for_each(|i| self.walk(i, key)),
            Json::Object(map) => {
                let options = holds_endpoint_options(key);
                let mut drop = Vec::new();
                for (k, v) in map.iter_mut() {
                    if let Json::String(text) = v {
                        if options && matches!(self.replace_probe(text), Replaced::Drop) {
                            drop.push(k.clone());
                            continue;
                        }
                    }
                    self.walk(v, k);
                }
                for k in drop {
                    map.remove(&k);
                }
            }
            _ => {}
        }
    }

    /// Whether the string is an unbound optional parameter alone.
    fn replace_probe(&self, text: &str) -> Replaced {
        match lone(text) {
            Some(inner) => match inner.strip_prefix('?') {
                Some(name) if self.is_param(name) && !self.bound.contains_key(name.trim()) => {
                    Replaced::Drop
                }
                _ => Replaced::Keep,
            },
            None => Replaced::Keep,
        }
    }

    fn is_param(&self, name: &str) -> bool {
        let name = name.trim();
        self.declared.contains(name) || self.bound.contains_key(name)
    }

    fn replace(&self, text: &str) -> Replaced {
        if let Some(inner) = lone(text) {
            let (optional, rest) = match inner.strip_prefix('?') {
                Some(r) => (true, r),
                None => (false, inner),
            };
            let (name, default) = split_default(rest);
            if let Some(v) = self.bound.get(name) {
                return Replaced::Value(v.clone());
            }
            if self.is_param(name) {
                return match (default, optional) {
                    (Some(d), _) => Replaced::Value(Json::String(d.to_string())),
                    (None, true) => Replaced::Drop,
                    // Unbound and required: `bind` has said so already.
                    (None, false) => Replaced::Keep,
                };
            }
            return Replaced::Keep;
        }
        let text = drop_unset_options(text, |v| matches!(self.replace_probe(v), Replaced::Drop));
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        let mut changed = false;
        while let Some(start) = rest.find("{{") {
            let Some(len) = rest[start + 2..].find("}}") else {
                break;
            };
            let inner = &rest[start + 2..start + 2 + len];
            let (optional, name_part) = match inner.strip_prefix('?') {
                Some(r) => (true, r),
                None => (false, inner),
            };
            let (name, default) = split_default(name_part);
            let replacement = match self.bound.get(name) {
                Some(v) => Some(text_of(v)),
                None if self.is_param(name) => match (default, optional) {
                    (Some(d), _) => Some(d.to_string()),
                    (None, true) => Some(String::new()),
                    (None, false) => None,
                },
                None => None,
            };
            out.push_str(&rest[..start]);
            match replacement {
                Some(r) => {
                    out.push_str(&r);
                    changed = true;
                }
                None => out.push_str(&rest[start..start + 4 + len]),
            }
            rest = &rest[start + 4 + len..];
        }
        out.push_str(rest);
        if changed || out != text {
            Replaced::Value(Json::String(out))
        } else {
            Replaced::Keep
        }
    }
}

/// The inside of a string that is one placeholder alone.
fn lone(text: &str) -> Option<&str> {
    let inner = text.strip_prefix("{{")?.strip_suffix("}}")?;
    (!inner.contains("{{") && !inner.contains("}}")).then_some(inner.trim())
}

fn split_default(text: &str) -> (&str, Option<&str>) {
    match text.split_once(':') {
        Some((k, d)) => (k.trim(), Some(d)),
        None => (text.trim(), None),
    }
}

/// `text` without the `name=VALUE` options of its URI query whose value `unset` says is
/// an optional placeholder with nothing behind it: Camel drops such an option rather than
/// pass it empty. Shared by template parameters and application properties.
pub(crate) fn drop_unset_options(text: &str, unset: impl Fn(&str) -> bool) -> String {
    let Some((base, query)) = text.split_once('?') else {
        return text.to_string();
    };
    if !query.contains("{{?") {
        return text.to_string();
    }
    let kept: Vec<&str> = query
        .split('&')
        .filter(|option| !unset(option.split_once('=').map(|(_, v)| v).unwrap_or("")))
        .collect();
    if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    }
}

/// The `key={{?name}}` options of a URI that name an unset optional property are dropped
/// too (application placeholders, outside any template).
pub(crate) fn is_optional_placeholder(text: &str) -> Option<&str> {
    lone(text)?.strip_prefix('?').map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn template(params: &[(&str, Option<Json>, bool, ParamType)]) -> Template {
        Template {
            kind: TemplateKind::Kamelet,
            name: "t".into(),
            params: params
                .iter()
                .map(|(n, d, r, t)| Param {
                    name: n.to_string(),
                    default: d.clone(),
                    required: *r,
                    ty: *t,
                    description: Some(format!("the {n}")),
                })
                .collect(),
            body: Json::Null,
            file: "t.yaml".into(),
            positions: Default::default(),
            pointer: String::new(),
            location: None,
            refused: Vec::new(),
            beans: Vec::new(),
        }
    }

    #[test]
    fn binding_defaults_types_and_missing_parameters() {
        let t = template(&[
            ("period", Some(json!(1000)), false, ParamType::Integer),
            ("message", None, true, ParamType::Text),
            ("count", None, false, ParamType::Integer),
        ]);
        let props = crate::properties::Properties::new();
        let given = json!({"message": "hi", "period": "250"});
        let bound = bind(&t, given.as_object().unwrap().clone(), "r", &props).unwrap();
        assert_eq!(bound["period"], json!(250));
        assert_eq!(bound["message"], json!("hi"));
        assert!(!bound.contains_key("count"));

        let errors = bind(&t, Map::new(), "r", &props).unwrap_err();
        assert_eq!(
            errors,
            ["Kamelet `t` needs the parameter `message` (the message)"]
        );
        let bad = json!({"message": "x", "period": "soon"});
        let errors = bind(&t, bad.as_object().unwrap().clone(), "r", &props).unwrap_err();
        assert_eq!(
            errors,
            ["parameter `period` of Kamelet `t` is an integer; `soon` is not"]
        );
    }

    #[test]
    fn kamelet_properties_bind_before_defaults() {
        let t = template(&[("period", Some(json!(1000)), false, ParamType::Integer)]);
        let mut props = crate::properties::Properties::new();
        props.set("camel.kamelet.t.period", "5");
        let bound = bind(&t, Map::new(), "r", &props).unwrap();
        assert_eq!(bound["period"], json!(5));
        props.set("camel.kamelet.t.r.period", "7");
        let bound = bind(&t, Map::new(), "r", &props).unwrap();
        assert_eq!(bound["period"], json!(7));
    }

    #[test]
    fn substitution_types_lone_values_and_drops_unbound_optionals() {
        let t = template(&[
            ("period", None, false, ParamType::Integer),
            ("count", None, false, ParamType::Integer),
            ("name", None, false, ParamType::Text),
        ]);
        let mut bound = Bound::new();
        bound.insert("period".into(), json!(250));
        bound.insert("name".into(), json!("tick"));
        let mut body = json!({
            "uri": "timer:{{name}}?period={{period}}&repeatCount={{?count}}",
            "parameters": {"period": "{{period}}", "repeatCount": "{{?count}}"},
            "log": "{{name}} every {{period}} ms, {{app.key}} {{?count}}",
            "other": "{{name:x}}",
            "constant": "{{?count}}"
        });
        substitute(&mut body, &t, &bound);
        assert_eq!(
            body,
            json!({
                "uri": "timer:tick?period=250",
                "parameters": {"period": 250},
                "log": "tick every 250 ms, {{app.key}} ",
                "other": "tick",
                "constant": ""
            })
        );
    }
}
