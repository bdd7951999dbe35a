//! SVG drawn by our own code: a layered layout (each node one layer below the furthest
//! of its predecessors, nodes of a layer ordered by where their predecessors are), boxes
//! sized from their text in a monospace font, curved edges with arrowheads.
//!
//! Only presentation attributes, no `style` attribute or element and no script: the
//! console inserts this SVG into a page whose Content-Security-Policy forbids inline
//! styles and scripts. Each step's group carries `data-step` (the tracer's id of the
//! step), so the console can put counts on it.

use std::fmt::Write;

use super::graph::{Graph, Kind, Line};

/// Width of one character of the 12 px monospace font, rounded up.
const CHAR_W: f64 = 7.4;
const TITLE_H: f64 = 22.0;
const DETAIL_H: f64 = 14.0;
const PAD_X: f64 = 10.0;
const GAP_X: f64 = 28.0;
/// Room between layers, for edge labels.
const GAP_Y: f64 = 46.0;
const MARGIN: f64 = 16.0;
const JOIN_R: f64 = 7.0;
/// Height of the band naming a route above its drawing.
const HEADER_H: f64 = 28.0;

pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Where each node ended up: its centre x, top y, width and height.
#[derive(Clone, Copy, Debug, Default)]
struct Place {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

fn size(g: &Graph, i: usize) -> (f64, f64) {
    let n = &g.nodes[i];
    if n.kind == Kind::Join {
        return (2.0 * JOIN_R, 2.0 * JOIN_R);
    }
    let chars = std::iter::once(&n.title)
        .chain(&n.detail)
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0);
    let w = (chars as f64 * CHAR_W + 2.0 * PAD_X).max(70.0);
    let h =
        TITLE_H + DETAIL_H * n.detail.len() as f64 + if n.detail.is_empty() { 0.0 } else { 6.0 };
    (w, h)
}

/// The layout of one graph: a place per node, then the points each edge passes through
/// (one per layer it crosses, so a long edge goes around the nodes between its ends).
struct Layout {
    places: Vec<Place>,
    routes: Vec<Vec<(f64, f64)>>,
    width: f64,
    height: f64,
}

/// Lays out one graph.
fn layout(g: &Graph) -> Layout {
    let real = g.nodes.len();
    // Edges always go from an earlier node to a later one (the builder adds a node before
    // what follows it), so one pass in index order gives each node its longest path.
    let mut layer = vec![0usize; real];
    for e in &g.edges {
        if e.to > e.from {
            layer[e.to] = layer[e.to].max(layer[e.from] + 1);
        }
    }
    // An edge that spans layers gets a virtual node in each layer it crosses.
    let mut sizes: Vec<(f64, f64)> = (0..real).map(|i| size(g, i)).collect();
    let mut chains: Vec<Vec<usize>> = Vec::with_capacity(g.edges.len());
    for e in &g.edges {
        let mut chain = vec![e.from];
        for l in layer[e.from] + 1..layer[e.to] {
            layer.push(l);
            sizes.push((10.0, 0.0));
            chain.push(layer.len() - 1);
        }
        chain.push(e.to);
        chains.push(chain);
    }
    let count = layer.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); count];
    for chain in &chains {
        for pair in chain.windows(2) {
            preds[pair[1]].push(pair[0]);
        }
    }
    let layers = layer.iter().copied().max().map_or(0, |m| m + 1);
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for (i, l) in layer.iter().enumerate() {
        rows[*l].push(i);
    }
    // Order each row by the mean position of its predecessors (index breaks ties).
    let mut order = vec![0.0f64; count];
    for row in &mut rows {
        let mut keyed: Vec<(f64, usize)> = row
            .iter()
            .map(|&i| {
                let p = &preds[i];
                let key = if p.is_empty() {
                    0.0
                } else {
                    p.iter().map(|&j| order[j]).sum::<f64>() / p.len() as f64
                };
                (key, i)
            })
            .collect();
        keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for (pos, (_, i)) in keyed.iter().enumerate() {
            order[*i] = pos as f64 - (keyed.len() as f64 - 1.0) / 2.0;
        }
        *row = keyed.into_iter().map(|(_, i)| i).collect();
    }
    let widths: Vec<f64> = rows
        .iter()
        .map(|row| {
            row.iter().map(|&i| sizes[i].0).sum::<f64>()
                + GAP_X * row.len().saturating_sub(1) as f64
        })
        .collect();
    let width = widths.iter().copied().fold(0.0, f64::max) + 2.0 * MARGIN;
    let mut places = vec![Place::default(); count];
    let mut y = MARGIN;
    for (row, row_w) in rows.iter().zip(&widths) {
        let row_h = row.iter().map(|&i| sizes[i].1).fold(0.0, f64::max);
        let mut x = (width - row_w) / 2.0;
        for &i in row {
            let (w, h) = sizes[i];
            places[i] = Place {
                x: x + w / 2.0,
                y: y + (row_h - h) / 2.0,
                w,
                h,
            };
            x += w + GAP_X;
        }
        y += row_h + GAP_Y;
    }
    let routes = chains
        .iter()
        .map(|chain| {
            let mut points = Vec::with_capacity(chain.len() + 1);
            let first = places[chain[0]];
            points.push((first.x, first.y + first.h));
            for &v in &chain[1..chain.len() - 1] {
                points.push((places[v].x, places[v].y));
            }
            let last = places[chain[chain.len() - 1]];
            points.push((last.x, last.y));
            points
        })
        .collect();
    places.truncate(real);
    Layout {
        places,
        routes,
        width,
        height: y - GAP_Y + MARGIN,
    }
}

fn colours(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::From => ("#e3f2fd", "#1565c0"),
        Kind::Step => ("#ffffff", "#546e7a"),
        Kind::Fork => ("#fff3e0", "#e65100"),
        Kind::Join => ("#9e9e9e", "#616161"),
        Kind::Boundary => ("#fce4ec", "#c2185b"),
        Kind::Outbox => ("#e8f5e9", "#2e7d32"),
        Kind::Sink => ("#ede7f6", "#4527a0"),
        Kind::Handler => ("#ffebee", "#c62828"),
    }
}

fn node(out: &mut String, g: &Graph, i: usize, p: Place) {
    let n = &g.nodes[i];
    let (fill, stroke) = colours(n.kind);
    let step = n
        .step_id
        .as_ref()
        .map(|s| format!(" data-step=\"{}\"", escape(s)))
        .unwrap_or_default();
    let _ = write!(
        out,
        "<g class=\"node {}\" data-node=\"n{i}\"{step}><title>{}</title>",
        n.kind.as_str(),
        escape(&n.title)
    );
    let left = p.x - p.w / 2.0;
    match n.kind {
        Kind::Join => {
            let _ = write!(
                out,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{JOIN_R}\" fill=\"{fill}\" stroke=\"{stroke}\"/>",
                p.x,
                p.y + JOIN_R
            );
        }
        kind => {
            let rx = match kind {
                Kind::From => 14.0,
                Kind::Outbox => 10.0,
                _ => 4.0,
            };
            let dash = match kind {
                Kind::Handler => " stroke-dasharray=\"5 3\"",
                _ => "",
            };
            let width = if kind == Kind::Boundary { 3 } else { 1 };
            let _ = write!(
                out,
                "<rect x=\"{left:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"{rx}\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"{width}\"{dash}/>",
                p.y, p.w, p.h
            );
            if kind == Kind::Sink {
                // Double side bars: a sink that gathers many sends into one batch.
                for x in [left + 5.0, left + p.w - 5.0] {
                    let _ = write!(
                        out,
                        "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"{stroke}\"/>",
                        p.y,
                        p.y + p.h
                    );
                }
            }
            let _ = write!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-weight=\"bold\">{}</text>",
                p.x,
                p.y + 15.0,
                escape(&n.title)
            );
            for (k, line) in n.detail.iter().enumerate() {
                let _ = write!(
                    out,
                    "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" fill=\"#37474f\">{}</text>",
                    p.x,
                    p.y + TITLE_H + 8.0 + DETAIL_H * k as f64,
                    escape(line)
                );
            }
        }
    }
    out.push_str("</g>\n");
}

/// Draws one graph with its top-left corner at (0, `top`).
fn graph(out: &mut String, g: &Graph, top: f64, width: f64) -> f64 {
    let Layout {
        mut places,
        mut routes,
        width: w,
        height: h,
    } = layout(g);
    let shift = (width - w) / 2.0;
    let down = top + HEADER_H;
    for p in &mut places {
        p.x += shift;
        p.y += down;
    }
    for points in &mut routes {
        for (x, y) in points.iter_mut() {
            *x += shift;
            *y += down;
        }
    }
    let _ = write!(
        out,
        "<g class=\"route\" data-route=\"{}\">\n<text x=\"{MARGIN}\" y=\"{:.1}\" font-size=\"14\" font-weight=\"bold\">route {}</text>\n",
        escape(&g.route_id),
        top + 18.0,
        escape(&g.route_id)
    );
    for (e, points) in g.edges.iter().zip(&routes) {
        let (x1, y1) = points[0];
        let (x2, y2) = points[1];
        let mid = (y1 + y2) / 2.0;
        let (stroke, extra) = match e.line {
            Line::Flow => ("#546e7a", String::new()),
            Line::Failure => ("#c62828", " stroke-dasharray=\"5 3\"".to_string()),
            Line::Break => (
                "#c2185b",
                " stroke-dasharray=\"9 5\" stroke-width=\"2.5\"".to_string(),
            ),
        };
        if e.line == Line::Break {
            // The continuation boundary, across the whole drawing.
            let _ = writeln!(
                out,
                "<line class=\"boundary\" x1=\"{MARGIN}\" y1=\"{mid:.1}\" x2=\"{:.1}\" y2=\"{mid:.1}\" stroke=\"#c2185b\" stroke-dasharray=\"2 4\"/>\
                 <text x=\"{MARGIN}\" y=\"{:.1}\" font-size=\"10\" fill=\"#c2185b\">continuation boundary: the steps below run on the resequencer's post-driver</text>",
                width - MARGIN,
                mid - 4.0
            );
        }
        let mut d = format!("M{x1:.1},{y1:.1}");
        for pair in points.windows(2) {
            let ((ax, ay), (bx, by)) = (pair[0], pair[1]);
            let m = (ay + by) / 2.0;
            let _ = write!(d, " C{ax:.1},{m:.1} {bx:.1},{m:.1} {bx:.1},{by:.1}");
        }
        let _ = write!(
            out,
            "<path class=\"edge\" d=\"{d}\" fill=\"none\" stroke=\"{stroke}\"{extra} marker-end=\"url(#arrow)\"/>"
        );
        if let Some(label) = &e.label {
            let _ = write!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"10\" fill=\"{stroke}\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">{}</text>",
                (x1 + x2) / 2.0,
                mid + 4.0,
                escape(label)
            );
        }
        out.push('\n');
    }
    for (i, p) in places.iter().enumerate() {
        node(out, g, i, *p);
    }
    out.push_str("</g>\n");
    h + HEADER_H
}

/// One SVG document with every graph, one below the other.
pub(crate) fn render(graphs: &[Graph]) -> String {
    let sizes: Vec<(f64, f64)> = graphs
        .iter()
        .map(|g| {
            let l = layout(g);
            (l.width, l.height + HEADER_H)
        })
        .collect();
    let title_w = graphs
        .iter()
        .map(|g| (g.route_id.chars().count() + 6) as f64 * 8.5 + 2.0 * MARGIN)
        .fold(0.0, f64::max);
    let width = sizes.iter().map(|s| s.0).fold(title_w, f64::max).max(200.0);
    let height: f64 = sizes.iter().map(|s| s.1).sum::<f64>().max(40.0);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"camel-diagram\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-size=\"12\">\n\
         <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#546e7a\"/></marker></defs>\n\
         <rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
    );
    let mut top = 0.0;
    for g in graphs {
        top += graph(&mut out, g, top, width);
    }
    out.push_str("</svg>\n");
    out
}
