//! The route model both DSLs produce.
//!
//! A [`RouteDefinition`] is plain data: a source endpoint and a list of steps. Each step is
//! a name (`set_header`, `filter`, …) with its configuration as data, in the shape the YAML
//! DSL uses. Each step's typed configuration ([`StepConfig`]) is the one parser of that
//! data: the builder serialises it, the compiler decodes through it. Keeping the model as
//! data lets a step be added in one place and makes YAML and builder routes comparable.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use camel_api::definition::StepConfig;
use camel_api::suggest::{to_camel_case, to_snake_case, Spelling};
use camel_api::BoxProcessor;
use camel_eip::layer::ProcessorLayer;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::error::Location;

mod bean;
pub mod camel_dsl;
pub mod endpoint_path;
pub mod intercept;

pub use bean::{bean_name, looks_like_java_class, BeanDefinition, BeanStep};

/// An endpoint reference: a URI and parameters given beside it. Also the typed
/// configuration of the `to` step (`to: uri` or `to: {uri, parameters}`). Parameter names
/// are kept as written: the endpoint's URI parser reads Camel's camelCase names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EndpointDefinition {
    /// The URI (`timer:tick?period=1000`).
    pub uri: String,
    /// Parameters beside the URI (they win over the query string).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, Json>,
    /// Camel's node id (`- to: {id: send-order, uri: …}`): accepted, not used yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `to` only: the exchange pattern for this send (`InOnly`, `InOut`); the exchange's
    /// own pattern is restored afterwards, as in Camel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<camel_eip::config::Pattern>,
}

impl EndpointDefinition {
    /// An endpoint with no extra parameters.
    pub fn new(uri: impl Into<String>) -> Self {
        EndpointDefinition {
            uri: uri.into(),
            parameters: BTreeMap::new(),
            id: None,
            pattern: None,
        }
    }

    /// Adds a parameter beside the URI.
    ///
    /// ```
    /// use camel_core::EndpointDefinition;
    /// let e = EndpointDefinition::new("log:x").parameter("show_headers", true);
    /// assert_eq!(e.parameter_strings(), [("show_headers", "true".to_string())]);
    /// ```
    pub fn parameter(mut self, name: impl Into<String>, value: impl Into<Json>) -> Self {
        self.parameters.insert(name.into(), value.into());
        self
    }

    /// Sends with this exchange pattern (`to` only).
    pub fn pattern(mut self, pattern: camel_api::ExchangePattern) -> Self {
        self.pattern = Some(pattern.into());
        self
    }

    /// Parameters as text, the way components read them.
    pub fn parameter_strings(&self) -> Vec<(&str, String)> {
        self.parameters
            .iter()
            .map(|(k, v)| {
                let text = match v {
                    Json::String(s) => s.clone(),
                    Json::Null => String::new(),
                    other => other.to_string(),
                };
                (k.as_str(), text)
            })
            .collect()
    }
}

pub use camel_api::definition::StepDefinition;

impl StepConfig for EndpointDefinition {
    const NAME: &'static str = "to";

    fn from_scalar(text: &str) -> Option<Self> {
        Some(EndpointDefinition::new(text))
    }
}

/// `process: {ref: name}` or `process: name`: a Rust processor registered by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Process {
    /// The name the processor is registered under.
    #[serde(rename = "ref")]
    pub reference: String,
}

impl StepConfig for Process {
    const NAME: &'static str = "process";

    fn from_scalar(text: &str) -> Option<Self> {
        Some(Process {
            reference: text.into(),
        })
    }
}

/// `layer: {ref: name, steps: [...]}`: nested steps wrapped in a tower layer kept beside
/// the route (`RouteBuilder::layer`). Without `steps` it wraps the rest of its list.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LayerStep {
    /// The name the layer is kept under in [`RouteDefinition::layers`].
    #[serde(rename = "ref")]
    pub reference: String,
    /// The wrapped steps.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
}

impl StepConfig for LayerStep {
    const NAME: &'static str = "layer";
}

/// Where a route came from, to point errors at lines and columns.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    /// The file name.
    pub file: Arc<str>,
    /// JSON pointer of a node → its position (line, column).
    pub positions: Arc<HashMap<String, (usize, usize)>>,
    /// JSON pointer of the route's `steps` list.
    pub steps_pointer: String,
    /// JSON pointer of the route's own map.
    pub route_pointer: String,
    /// The other sources the route's configuration came from: context-level error
    /// handling written in another file or document of the same load (a top-level
    /// `errorHandler`, a `routeConfiguration`), by tag. A pointer into one of them
    /// starts with `@tag` (`@2/0/error_handler`); every other pointer is into this file.
    pub elsewhere: Arc<HashMap<String, Positions>>,
}

/// A file's name and the positions of its nodes (JSON pointer → line, column).
#[derive(Clone, Debug, Default)]
pub struct Positions {
    /// The file name.
    pub file: Arc<str>,
    /// JSON pointer of a node → its position (line, column).
    pub positions: Arc<HashMap<String, (usize, usize)>>,
}

impl SourceMap {
    /// The location of the node at `pointer`, or of its nearest ancestor that has one.
    /// Positions are indexed by snake_case keys, so a pointer spelled with a step's
    /// canonical name (`set_header`) finds a key written `setHeader`.
    pub fn locate(&self, pointer: &str) -> Option<Location> {
        if let Some(tagged) = pointer.strip_prefix('@') {
            let (tag, inner) = tagged.split_at(tagged.find('/').unwrap_or(tagged.len()));
            return self.elsewhere.get(tag)?.locate(inner);
        }
        locate_in(&self.file, &self.positions, pointer)
    }
}

impl SourceMap {
    /// `path` (`steps[0].choice.when[1].steps[2].set_body#id`, or one starting at
    /// `from`) with each key in the spelling the file wrote it in (`setBody`): messages
    /// echo the file's names, not the canonical ones.
    pub fn spell_path(&self, path: &str) -> String {
        let (mut pointer, rest) = if let Some(rest) = path.strip_prefix("steps") {
            (self.steps_pointer.clone(), rest)
        } else if let Some(rest) = path.strip_prefix("from") {
            (format!("{}/from", self.route_pointer), rest)
        } else {
            return path.to_string();
        };
        let mut out = String::from(&path[..path.len() - rest.len()]);
        // Each segment: `.name`, `[index]` or `#node-id` (the rest of the path).
        let mut rest = rest;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('[') {
                let Some(end) = after.find(']') else { break };
                pointer.push('/');
                pointer.push_str(&after[..end]);
                out.push_str(&rest[..end + 2]);
                rest = &after[end + 1..];
            } else if let Some(after) = rest.strip_prefix('.') {
                let end = after.find(['.', '[', '#']).unwrap_or(after.len());
                let name = &after[..end];
                out.push('.');
                out.push_str(&spelled(&self.positions, &pointer, name));
                pointer.push('/');
                pointer.push_str(&to_snake_case(name));
                rest = &after[end..];
            } else if let Some(after) = rest.strip_prefix('#') {
                let end = after.find(['.', '[']).unwrap_or(after.len());
                out.push_str(&rest[..end + 1]);
                rest = &after[end..];
            } else {
                break;
            }
        }
        out.push_str(rest);
        out
    }

    /// The spelling of the file's keys: camelCase when more of them are written so than
    /// in snake_case (Camel's files), snake_case otherwise.
    pub fn spelling(&self) -> Spelling {
        file_spelling(&self.positions)
    }
}

/// How `name` (snake_case, a key of the map at the snake_case `parent` pointer) was
/// written: camelCase, kebab-case or as it is.
fn spelled(positions: &HashMap<String, (usize, usize)>, parent: &str, name: &str) -> String {
    let snake = to_snake_case(name);
    for written in [to_camel_case(&snake), snake.replace('_', "-")] {
        if written != snake && positions.contains_key(&format!("{parent}/{written}")) {
            return written;
        }
    }
    name.to_string()
}

/// Whether a file's keys are mostly camelCase or snake_case (see [`SourceMap::spelling`]).
pub(crate) fn file_spelling(positions: &HashMap<String, (usize, usize)>) -> Spelling {
    let last = |p: &str| p.rsplit('/').next().unwrap_or_default().to_string();
    let camel = positions
        .keys()
        .filter(|p| Spelling::of(&last(p)) == Some(Spelling::Camel))
        .count();
    // A snake_case pointer of a key written in camelCase has its written twin too.
    let snake_written = positions
        .keys()
        .filter(|p| Spelling::of(&last(p)) == Some(Spelling::Snake))
        .count()
        .saturating_sub(camel);
    if snake_written > camel {
        Spelling::Snake
    } else {
        Spelling::Camel
    }
}

impl Positions {
    /// The location of the node at `pointer`, or of its nearest ancestor that has one.
    pub fn locate(&self, pointer: &str) -> Option<Location> {
        locate_in(&self.file, &self.positions, pointer)
    }
}

/// The location of the node at `pointer` in `positions`, or of its nearest ancestor.
fn locate_in(
    file: &Arc<str>,
    positions: &HashMap<String, (usize, usize)>,
    pointer: &str,
) -> Option<Location> {
    let normal = pointer
        .split('/')
        .map(to_snake_case)
        .collect::<Vec<_>>()
        .join("/");
    let mut p = normal.as_str();
    loop {
        if let Some(&(line, column)) = positions.get(p) {
            return Some(Location {
                file: file.clone(),
                line,
                column,
            });
        }
        match p.rfind('/') {
            Some(i) => p = &p[..i],
            None => return None,
        }
    }
}

/// The longest route id accepted, in bytes. Ids appear in every log line, metric label and
/// admin URL; a bound keeps those readable and small.
pub const MAX_ROUTE_ID_BYTES: usize = 256;

/// Checks a route id: not empty, at most [`MAX_ROUTE_ID_BYTES`], and free of control
/// characters (a newline or NUL in an id forges or cuts log lines), line separators and
/// bidirectional formatting characters (they make a log line read differently from what
/// it holds). The message names the character by code point and never echoes the id.
pub fn check_route_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("a route id is not empty".into());
    }
    if id.len() > MAX_ROUTE_ID_BYTES {
        return Err(format!(
            "a route id is at most {MAX_ROUTE_ID_BYTES} bytes (this one has {})",
            id.len()
        ));
    }
    let bidi = |c: char| matches!(c, '\u{200E}' | '\u{200F}' | '\u{061C}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
    match id.char_indices().find(|&(_, c)| {
        c.is_control() || bidi(c) || matches!(c, '\u{2028}' | '\u{2029}')
    }) {
        Some((at, c)) => Err(format!(
            "a route id cannot hold U+{:04X} (control, line-separator or bidirectional character at byte {at})",
            c as u32
        )),
        None => Ok(()),
    }
}

/// A route: where exchanges come from and the steps they go through.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct RouteDefinition {
    /// The route id; one is generated when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// A free-text description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The source.
    pub from: EndpointDefinition,
    /// The steps, in order.
    #[serde(default)]
    pub steps: Vec<StepDefinition>,
    /// Start with the context (default true).
    #[serde(default = "yes")]
    pub auto_startup: bool,
    /// Routes start in ascending order of this number, then in definition order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_order: Option<i32>,
    /// Where the route was written, when it came from a file.
    #[serde(skip)]
    pub source: Option<SourceMap>,
    /// Rust processors referenced by `process` steps of builder routes.
    #[serde(skip)]
    pub processors: HashMap<String, BoxProcessor>,
    /// Rust tower layers referenced by `layer` steps of builder routes.
    #[serde(skip)]
    pub layers: HashMap<String, ProcessorLayer>,
    /// The top-level `beans:` of the file the route came from, built (from bean types
    /// registered in Rust) when the route is added.
    #[serde(skip)]
    pub beans: Vec<BeanDefinition>,
    /// Error handling of the route (ADR 0052).
    #[serde(flatten)]
    pub errors: RouteErrorHandling,
}

/// A route's error handling (ADR 0052): its own error handler and `on_exception` clauses,
/// and those given for the whole context (a file's top-level `- errorHandler:` and
/// `- onException:` items), which the route's own win over.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RouteErrorHandling {
    /// The `route_configuration`s this route takes (comma-separated ids, `*` wildcards);
    /// without it, those that have no id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route_configuration_id: Option<String>,
    /// The route's error handler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_handler: Option<camel_eip::config::ErrorHandlerConfig>,
    /// The route's `on_exception` clauses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on_exception: Vec<camel_eip::config::OnException>,
    /// The route's `on_completion`s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on_completion: Vec<camel_eip::config::OnCompletionConfig>,
    /// The context's `on_completion`s, run after the route's own.
    #[serde(skip)]
    pub context_on_completion: Vec<camel_eip::config::OnCompletionConfig>,
    /// The context's error handler, used when the route has none.
    #[serde(skip)]
    pub context_error_handler: Option<camel_eip::config::ErrorHandlerConfig>,
    /// The context's `on_exception` clauses, tried after the route's own.
    #[serde(skip)]
    pub context_on_exception: Vec<camel_eip::config::OnException>,
    /// The interceptors that apply to the route (from its file's top level and its
    /// route configurations; ADR 0090).
    #[serde(skip)]
    pub intercepts: intercept::RouteIntercepts,
    /// Where each of the above was written (JSON pointers into the file), for errors:
    /// the handler's, then one per clause, route's first.
    #[serde(skip)]
    pub pointers: ErrorPointers,
}

/// JSON pointers of a route's error handling configuration in its file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ErrorPointers {
    /// The error handler in use (the route's or the context's).
    pub error_handler: Option<String>,
    /// Each `on_exception` clause: the route's, then the context's.
    pub on_exception: Vec<String>,
    /// Each `on_completion`: the route's, then the context's.
    pub on_completion: Vec<String>,
}

fn yes() -> bool {
    true
}

impl RouteDefinition {
    /// A route from `uri` with no steps.
    pub fn from(uri: impl Into<String>) -> Self {
        RouteDefinition {
            from: EndpointDefinition::new(uri),
            auto_startup: true,
            ..Default::default()
        }
    }

    /// The location of the route in its file.
    pub fn location(&self) -> Option<Location> {
        self.source
            .as_ref()
            .and_then(|s| s.locate(&s.route_pointer))
    }
}

impl PartialEq for RouteDefinition {
    /// Routes are equal when they describe the same behaviour: source maps and the identity
    /// of Rust closures are not compared (only the names they are registered under).
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.from == other.from
            && self.steps == other.steps
            && self.auto_startup == other.auto_startup
            && self.startup_order == other.startup_order
            && self.description == other.description
            && self.errors.error_handler == other.errors.error_handler
            && self.errors.route_configuration_id == other.errors.route_configuration_id
            && self.errors.on_exception == other.errors.on_exception
            && self.errors.context_error_handler == other.errors.context_error_handler
            && self.errors.context_on_exception == other.errors.context_on_exception
            && self.errors.on_completion == other.errors.on_completion
            && self.errors.context_on_completion == other.errors.context_on_completion
            && self.errors.intercepts == other.errors.intercepts
    }
}

impl fmt::Debug for RouteDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RouteDefinition")
            .field("id", &self.id)
            .field("from", &self.from)
            .field("steps", &self.steps)
            .field("auto_startup", &self.auto_startup)
            .field("startup_order", &self.startup_order)
            .finish_non_exhaustive()
    }
}
