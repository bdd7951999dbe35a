//! Mermaid flowcharts (`flowchart TD`), for READMEs and anything that renders Markdown.

use std::fmt::Write;

use super::graph::{Graph, Kind, Line};

/// Mermaid's entity codes for the characters that would end or confuse a quoted label.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '#' => out.push_str("#35;"),
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '&' => out.push_str("#amp;"),
            '|' => out.push_str("#124;"),
            '`' => out.push_str("#96;"),
            c => out.push(c),
        }
    }
    out
}

fn shape(kind: Kind, text: &str) -> String {
    match kind {
        Kind::From => format!("([\"{text}\"])"),
        Kind::Step => format!("[\"{text}\"]"),
        Kind::Fork => format!("{{{{\"{text}\"}}}}"),
        Kind::Join => format!("((\"{text}\"))"),
        Kind::Boundary => format!("[/\"{text}\"/]"),
        Kind::Outbox => format!("[(\"{text}\")]"),
        Kind::Sink => format!("[[\"{text}\"]]"),
        Kind::Handler => format!(">\"{text}\"]"),
    }
}

/// Colours per kind, so the boundary, the outbox and the sinks stand out.
const CLASSES: &[(&str, &str)] = &[
    ("from", "fill:#e3f2fd,stroke:#1565c0"),
    ("fork", "fill:#fff3e0,stroke:#e65100"),
    ("join", "fill:#eeeeee,stroke:#757575"),
    ("boundary", "fill:#fce4ec,stroke:#c2185b,stroke-width:3px"),
    ("outbox", "fill:#e8f5e9,stroke:#2e7d32"),
    ("sink", "fill:#ede7f6,stroke:#4527a0"),
    (
        "handler",
        "fill:#ffebee,stroke:#c62828,stroke-dasharray:4 3",
    ),
];

/// One flowchart holding every graph (a subgraph per route when there are several).
pub(crate) fn render(graphs: &[Graph]) -> String {
    let mut out = String::from("flowchart TD\n");
    let several = graphs.len() > 1;
    for (r, g) in graphs.iter().enumerate() {
        let indent = if several { "    " } else { "  " };
        if several {
            let _ = writeln!(out, "  subgraph r{r}[\"route {}\"]", escape(&g.route_id));
        }
        for (i, node) in g.nodes.iter().enumerate() {
            let mut text = escape(&node.title);
            for line in &node.detail {
                text.push_str("<br/>");
                text.push_str(&escape(line));
            }
            let _ = writeln!(out, "{indent}r{r}n{i}{}", shape(node.kind, &text));
        }
        for e in &g.edges {
            let arrow = match e.line {
                Line::Flow => "-->",
                Line::Failure => "-.->",
                Line::Break => "==>",
            };
            match &e.label {
                Some(l) => {
                    let _ = writeln!(
                        out,
                        "{indent}r{r}n{} {arrow}|\"{}\"| r{r}n{}",
                        e.from,
                        escape(l),
                        e.to
                    );
                }
                None => {
                    let _ = writeln!(out, "{indent}r{r}n{} {arrow} r{r}n{}", e.from, e.to);
                }
            }
        }
        for (name, _) in CLASSES {
            let members: Vec<String> = g
                .nodes
                .iter()
                .enumerate()
                .filter(|(_, n)| n.kind.as_str() == *name)
                .map(|(i, _)| format!("r{r}n{i}"))
                .collect();
            if !members.is_empty() {
                let _ = writeln!(out, "{indent}class {} {name}", members.join(","));
            }
        }
        if several {
            out.push_str("  end\n");
        }
    }
    for (name, style) in CLASSES {
        let _ = writeln!(out, "  classDef {name} {style}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn quotes_and_brackets_cannot_end_a_label() {
        let e = escape(r#"a"b<c>|d#e"#);
        assert!(
            !e.contains('"') && !e.contains('<') && !e.contains('|'),
            "{e}"
        );
    }
}
