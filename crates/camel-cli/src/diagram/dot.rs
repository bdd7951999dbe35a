//! Graphviz DOT, for `dot -Tpng` and the tools that read it.

use std::fmt::Write;

use super::graph::{Graph, Kind, Line};

fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn attributes(kind: Kind) -> &'static str {
    match kind {
        Kind::From => "shape=box, style=\"rounded,filled\", fillcolor=\"#e3f2fd\", color=\"#1565c0\"",
        Kind::Step => "shape=box",
        Kind::Fork => "shape=hexagon, style=filled, fillcolor=\"#fff3e0\", color=\"#e65100\"",
        Kind::Join => "shape=circle, width=0.2, fixedsize=true, style=filled, fillcolor=\"#9e9e9e\", xlabel=\"\"",
        Kind::Boundary => "shape=parallelogram, style=\"filled,bold\", fillcolor=\"#fce4ec\", color=\"#c2185b\", penwidth=2",
        Kind::Outbox => "shape=cylinder, style=filled, fillcolor=\"#e8f5e9\", color=\"#2e7d32\"",
        Kind::Sink => "shape=box, peripheries=2, style=filled, fillcolor=\"#ede7f6\", color=\"#4527a0\"",
        Kind::Handler => "shape=box, style=\"dashed,filled\", fillcolor=\"#ffebee\", color=\"#c62828\"",
    }
}

/// One digraph holding every graph, a cluster per route.
pub(crate) fn render(graphs: &[Graph]) -> String {
    let mut out = String::from(
        "digraph routes {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n  edge [fontname=\"monospace\", fontsize=9];\n",
    );
    for (r, g) in graphs.iter().enumerate() {
        let _ = writeln!(out, "  subgraph cluster_{r} {{");
        let _ = writeln!(
            out,
            "    label={};",
            quote(&format!("route {}", g.route_id))
        );
        for (i, node) in g.nodes.iter().enumerate() {
            // A join is a dot: its name goes in the tooltip.
            let text = if node.kind == Kind::Join {
                String::new()
            } else {
                let mut lines = vec![node.title.clone()];
                lines.extend(node.detail.iter().cloned());
                lines.join("\n")
            };
            let _ = writeln!(
                out,
                "    r{r}n{i} [label={}, tooltip={}, {}];",
                quote(&text),
                quote(&node.title),
                attributes(node.kind)
            );
        }
        for e in &g.edges {
            let mut attrs: Vec<String> = Vec::new();
            if let Some(l) = &e.label {
                attrs.push(format!("label={}", quote(l)));
            }
            match e.line {
                Line::Flow => {}
                Line::Failure => attrs.push("style=dashed, color=\"#c62828\"".into()),
                Line::Break => {
                    attrs.push("style=\"dashed,bold\", color=\"#c2185b\", penwidth=2".into())
                }
            }
            let attrs = if attrs.is_empty() {
                String::new()
            } else {
                format!(" [{}]", attrs.join(", "))
            };
            let _ = writeln!(out, "    r{r}n{} -> r{r}n{}{attrs};", e.from, e.to);
        }
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}
