//! A route definition as a graph of nodes and edges: what the three renderers draw.
//!
//! The graph is built from the loaded model (`RouteDefinition`, after Kamelets and route
//! templates have expanded), never from the YAML text, and only from ordered data, so
//! the same definition always gives the same graph. Each step's node carries the id the
//! backlog tracer gives the step (its `id:` or its place, `steps[1].choice.when[0].steps[0].log`),
//! which the console uses to put per-step counts on the drawing.

use camel_api::suggest::to_snake_case;
use camel_core::RouteDefinition;
use serde_json::{Map, Value as Json};

use super::label;

/// What a node stands for; each renderer gives each kind its own shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The route's source.
    From,
    /// An ordinary step (a processor, a `to`, a `log`).
    Step,
    /// Where paths part: choice, filter, multicast, split, do_try, circuit breaker.
    Fork,
    /// Where parted paths meet again.
    Join,
    /// The resequencer: the route's continuation boundary.
    Boundary,
    /// An outbox publish (`to: outbox:…`) or relay (`from: outbox:…`).
    Outbox,
    /// A batching sink (`to: sqs:…`, `pubsub:…`, `nats:…`).
    Sink,
    /// Error handling: the error handler, an `on_exception` clause, `on_completion`.
    Handler,
}

impl Kind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::From => "from",
            Kind::Step => "step",
            Kind::Fork => "fork",
            Kind::Join => "join",
            Kind::Boundary => "boundary",
            Kind::Outbox => "outbox",
            Kind::Sink => "sink",
            Kind::Handler => "handler",
        }
    }
}

/// How an edge is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// The normal flow.
    Flow,
    /// A side path taken on failure (error handler, `on_exception`, `do_catch`, fallback).
    Failure,
    /// The continuation boundary: what follows runs on the resequencer's post-driver.
    Break,
}

#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub(crate) kind: Kind,
    /// The first line: the step's name and its main argument.
    pub(crate) title: String,
    /// Settings worth seeing (a resequencer's policy, a sink's batching).
    pub(crate) detail: Vec<String>,
    /// The tracer's id of the step, for counters (`None` for joins and side nodes).
    pub(crate) step_id: Option<String>,
}

#[derive(Clone, Debug)]
pub(crate) struct Edge {
    pub(crate) from: usize,
    pub(crate) to: usize,
    pub(crate) label: Option<String>,
    pub(crate) line: Line,
}

/// One route drawn.
#[derive(Clone, Debug)]
pub(crate) struct Graph {
    pub(crate) route_id: String,
    pub(crate) nodes: Vec<Node>,
    pub(crate) edges: Vec<Edge>,
}

/// An open end of the flow: the node it leaves, the label and line of the edge to come.
type End = (usize, Option<String>, Line);

impl Graph {
    /// Draws `route`; `id` names it when the definition has no id of its own.
    pub(crate) fn of(route: &RouteDefinition, id: &str) -> Graph {
        let mut g = Graph {
            route_id: id.to_string(),
            nodes: Vec::new(),
            edges: Vec::new(),
        };
        let from = g.source_node(route);
        let ends = g.list(&route.steps, "steps", vec![(from, None, Line::Flow)]);
        // A route's flow ends where its last steps end; nothing more to draw there.
        drop(ends);
        g.error_handling(route, from);
        g
    }

    fn add(
        &mut self,
        kind: Kind,
        title: String,
        detail: Vec<String>,
        step_id: Option<String>,
    ) -> usize {
        self.nodes.push(Node {
            kind,
            title,
            detail,
            step_id,
        });
        self.nodes.len() - 1
    }

    fn connect(&mut self, ends: &[End], to: usize) {
        for (from, label, line) in ends {
            self.edges.push(Edge {
                from: *from,
                to,
                label: label.clone(),
                line: *line,
            });
        }
    }

    fn source_node(&mut self, route: &RouteDefinition) -> usize {
        let uri = label::uri_with_parameters(&route.from.uri, &route.from.parameters);
        let scheme = label::scheme(&route.from.uri);
        let (kind, title) = if scheme == "outbox" {
            (
                Kind::Outbox,
                format!("outbox relay {}", label::path_of(&route.from.uri)),
            )
        } else {
            (
                Kind::From,
                format!("from {}", label::short(&label::without_query(&uri))),
            )
        };
        let detail = label::settings(&uri);
        self.add(kind, title, detail, Some("from".into()))
    }

    /// Draws the steps of a list whose path is `path` (`steps`, `steps[2].filter.steps`),
    /// starting from `ends`; returns the ends left open after the last step.
    fn list(
        &mut self,
        steps: &[camel_api::definition::StepDefinition],
        path: &str,
        mut ends: Vec<End>,
    ) -> Vec<End> {
        let mut i = 0;
        while i < steps.len() {
            let step = &steps[i];
            let item = format!("{path}[{i}]");
            if step.name == "resequence" {
                let at = self.step(step, &item, ends);
                // Everything after runs on the post-driver: the continuation.
                let rest = &steps[i + 1..];
                let label = Some("continuation".to_string());
                if rest.is_empty() {
                    return at;
                }
                let broken = at
                    .into_iter()
                    .map(|(n, _, _)| (n, label.clone(), Line::Break))
                    .collect();
                return self.list_from(rest, path, i + 1, broken);
            }
            ends = self.step(step, &item, ends);
            i += 1;
        }
        ends
    }

    fn list_from(
        &mut self,
        steps: &[camel_api::definition::StepDefinition],
        path: &str,
        offset: usize,
        mut ends: Vec<End>,
    ) -> Vec<End> {
        for (j, step) in steps.iter().enumerate() {
            ends = self.step(step, &format!("{path}[{}]", offset + j), ends);
        }
        ends
    }

    /// Draws one step at `item` (`steps[3]`); returns its open ends.
    fn step(
        &mut self,
        step: &camel_api::definition::StepDefinition,
        item: &str,
        ends: Vec<End>,
    ) -> Vec<End> {
        let config = &step.config;
        let node_id = config.get("id").and_then(Json::as_str).map(str::to_string);
        let path = match &node_id {
            Some(id) => format!("{item}.{}#{id}", step.name),
            None => format!("{item}.{}", step.name),
        };
        // The tracer names a step by its `id:` when it has one.
        let step_id = Some(node_id.unwrap_or_else(|| path.clone()));
        if config.get("disabled").and_then(Json::as_bool) == Some(true) {
            return ends;
        }
        let (title, detail) = label::step(&step.name, config);
        let map = config.as_object();
        match step.name.as_str() {
            "choice" => {
                let fork = self.add(Kind::Fork, title, detail, step_id);
                self.connect(&ends, fork);
                let mut out = Vec::new();
                let whens = field(map, "when")
                    .and_then(Json::as_array)
                    .cloned()
                    .unwrap_or_default();
                for (w, when) in whens.iter().enumerate() {
                    let guard = label::expression(when).unwrap_or_else(|| "when".into());
                    let start = vec![(
                        fork,
                        Some(format!("when {}", label::short(&guard))),
                        Line::Flow,
                    )];
                    out.extend(self.nested(when, &format!("{path}.when[{w}].steps"), start));
                }
                match field(map, "otherwise") {
                    Some(other) => {
                        let start = vec![(fork, Some("otherwise".into()), Line::Flow)];
                        out.extend(self.nested(other, &format!("{path}.otherwise.steps"), start));
                    }
                    None => out.push((fork, Some("otherwise".into()), Line::Flow)),
                }
                self.join("end choice", out)
            }
            "filter" => {
                let fork = self.add(Kind::Fork, title, detail, step_id);
                self.connect(&ends, fork);
                let mut out = self.nested(
                    config,
                    &format!("{path}.steps"),
                    vec![(fork, Some("matches".into()), Line::Flow)],
                );
                out.push((fork, Some("filtered out".into()), Line::Flow));
                self.join("end filter", out)
            }
            "multicast" | "scatter_gather" | "load_balance" => {
                let fork = self.add(Kind::Fork, title, detail, step_id);
                self.connect(&ends, fork);
                let children = field(map, "steps")
                    .and_then(Json::as_array)
                    .cloned()
                    .unwrap_or_default();
                let mut out = Vec::new();
                for (c, child) in children.iter().enumerate() {
                    let Ok(child) = camel_api::definition::StepDefinition::from_item(child.clone())
                    else {
                        continue;
                    };
                    let start = vec![(fork, Some(format!("#{}", c + 1)), Line::Flow)];
                    out.extend(self.step(&child, &format!("{path}.steps[{c}]"), start));
                }
                let join = if step.name == "load_balance" {
                    "end load_balance"
                } else {
                    "aggregate"
                };
                self.join(join, out)
            }
            "split" => {
                let fork = self.add(Kind::Fork, title, detail, step_id);
                self.connect(&ends, fork);
                let out = self.nested(
                    config,
                    &format!("{path}.steps"),
                    vec![(fork, Some("each part".into()), Line::Flow)],
                );
                self.join("aggregate parts", out)
            }
            "do_try" => {
                let fork = self.add(Kind::Fork, title, detail, step_id);
                self.connect(&ends, fork);
                let mut out = self.nested(
                    config,
                    &format!("{path}.steps"),
                    vec![(fork, None, Line::Flow)],
                );
                let catches = field(map, "do_catch")
                    .and_then(Json::as_array)
                    .cloned()
                    .unwrap_or_default();
                for (k, catch) in catches.iter().enumerate() {
                    let names = label::exceptions(catch);
                    let start = vec![(fork, Some(format!("catch {names}")), Line::Failure)];
                    out.extend(self.nested(catch, &format!("{path}.do_catch[{k}].steps"), start));
                }
                let joined = self.join("end try", out);
                match field(map, "do_finally") {
                    Some(fin) => self.nested(
                        fin,
                        &format!("{path}.do_finally.steps"),
                        relabel(joined, "finally"),
                    ),
                    None => joined,
                }
            }
            "circuit_breaker" => {
                let fork = self.add(Kind::Fork, title, detail, step_id);
                self.connect(&ends, fork);
                let mut out = self.nested(
                    config,
                    &format!("{path}.steps"),
                    vec![(fork, Some("closed".into()), Line::Flow)],
                );
                if let Some(fallback) = field(map, "on_fallback") {
                    let start = vec![(fork, Some("fallback".into()), Line::Failure)];
                    out.extend(self.nested(fallback, &format!("{path}.on_fallback.steps"), start));
                }
                self.join("end circuit breaker", out)
            }
            "resequence" => {
                let node = self.add(Kind::Boundary, title, detail, step_id);
                self.connect(&ends, node);
                vec![(node, None, Line::Flow)]
            }
            _ => {
                let kind = endpoint_kind(&step.name, config);
                let node = self.add(kind, title, detail, step_id);
                self.connect(&ends, node);
                // A step that wraps a block (transacted, loop, …): the block, then its end.
                match field(map, "steps").and_then(Json::as_array) {
                    Some(inner) if !inner.is_empty() => {
                        let out = self.nested(
                            config,
                            &format!("{path}.steps"),
                            vec![(node, None, Line::Flow)],
                        );
                        self.join(&format!("end {}", step.name), out)
                    }
                    _ => vec![(node, None, Line::Flow)],
                }
            }
        }
    }

    /// Draws the `steps` list inside `holder` (a `when`, `otherwise`, a step's config).
    fn nested(&mut self, holder: &Json, path: &str, ends: Vec<End>) -> Vec<End> {
        let steps = steps_of(holder);
        self.list(&steps, path, ends)
    }

    fn join(&mut self, title: &str, ends: Vec<End>) -> Vec<End> {
        let node = self.add(Kind::Join, title.to_string(), Vec::new(), None);
        self.connect(&ends, node);
        vec![(node, None, Line::Flow)]
    }

    /// The error handler and `on_exception` clauses as side paths from the source.
    fn error_handling(&mut self, route: &RouteDefinition, from: usize) {
        let errors = &route.errors;
        let handler = errors
            .error_handler
            .as_ref()
            .or(errors.context_error_handler.as_ref());
        if let Some(h) = handler {
            let json = serde_json::to_value(h).unwrap_or(Json::Null);
            let (title, detail) = label::error_handler(&json);
            let node = self.add(Kind::Handler, title, detail, None);
            self.connect(&[(from, Some("on failure".into()), Line::Failure)], node);
        }
        let clauses = errors
            .on_exception
            .iter()
            .chain(&errors.context_on_exception);
        for (k, clause) in clauses.enumerate() {
            let json = serde_json::to_value(clause).unwrap_or(Json::Null);
            let (title, detail) = label::on_exception(&json);
            let node = self.add(Kind::Handler, title, detail, None);
            self.connect(&[(from, Some("on exception".into()), Line::Failure)], node);
            let steps = steps_of(&json);
            self.list(
                &steps,
                &format!("on_exception[{k}].steps"),
                vec![(node, None, Line::Flow)],
            );
        }
        let completions = errors
            .on_completion
            .iter()
            .chain(&errors.context_on_completion);
        for (k, completion) in completions.enumerate() {
            let json = serde_json::to_value(completion).unwrap_or(Json::Null);
            let node = self.add(
                Kind::Handler,
                "on_completion".into(),
                label::scalars(&json),
                None,
            );
            self.connect(&[(from, Some("when done".into()), Line::Failure)], node);
            let steps = steps_of(&json);
            self.list(
                &steps,
                &format!("on_completion[{k}].steps"),
                vec![(node, None, Line::Flow)],
            );
        }
    }
}

/// A map field by its snake_case name, whatever spelling the file used (`doCatch`).
pub(crate) fn field<'a>(map: Option<&'a Map<String, Json>>, name: &str) -> Option<&'a Json> {
    let map = map?;
    map.get(name).or_else(|| {
        map.iter()
            .find(|(k, _)| to_snake_case(k) == name)
            .map(|(_, v)| v)
    })
}

fn steps_of(holder: &Json) -> Vec<camel_api::definition::StepDefinition> {
    field(holder.as_object(), "steps")
        .and_then(Json::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|item| {
                    camel_api::definition::StepDefinition::from_item(item.clone()).ok()
                })
                .collect()
        })
        .unwrap_or_default()
}

fn relabel(ends: Vec<End>, label: &str) -> Vec<End> {
    ends.into_iter()
        .map(|(n, _, line)| (n, Some(label.to_string()), line))
        .collect()
}

/// Schemes of the batching sinks of `camel-sinks`.
const SINK_SCHEMES: &[&str] = &["sqs", "aws2-sqs", "pubsub", "google-pubsub", "nats"];

fn endpoint_kind(name: &str, config: &Json) -> Kind {
    if !matches!(
        name,
        "to" | "to_d" | "wire_tap" | "inout" | "in_only" | "in_out"
    ) {
        return Kind::Step;
    }
    let uri = match config {
        Json::String(s) => s.as_str(),
        other => field(other.as_object(), "uri")
            .and_then(Json::as_str)
            .unwrap_or(""),
    };
    let scheme = label::scheme(uri);
    if scheme == "outbox" {
        Kind::Outbox
    } else if SINK_SCHEMES.contains(&scheme.as_str()) {
        Kind::Sink
    } else {
        Kind::Step
    }
}
