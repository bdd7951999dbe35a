//! `camel diagram FILES… [--format svg|mermaid|dot] [--route ID]`: routes drawn from the
//! loaded model — after Kamelets, Pipes and route templates have expanded — never from
//! the YAML text.
//!
//! From the source through each step: `choice`, `filter`, `multicast`, `split`,
//! `load_balance`, `do_try` and `circuit_breaker` fork and join again; the error handler,
//! `on_exception` and `on_completion` are side paths from the source; a `resequence`
//! step is the continuation boundary, drawn as a break with its policy and settings; the
//! outbox (publish and relay) and the batching sinks show their settings. The output of
//! one input is always the same bytes (golden files in `tests/diagram.rs`).
//!
//! ```text
//! camel diagram examples/hello/routes.yaml --format mermaid
//! ```
//!
//! The admin server's console draws a running route's SVG with the same code
//! (`GET /console/api/routes/{id}/diagram.svg`).

mod dot;
mod graph;
mod label;
mod mermaid;
mod svg;

use std::path::PathBuf;
use std::process::ExitCode;

use camel_core::RouteDefinition;

pub(crate) use graph::Graph;

/// The output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// An SVG picture, laid out by camel-rs itself (no external program).
    Svg,
    /// A Mermaid flowchart (renders in GitHub and GitLab Markdown).
    Mermaid,
    /// Graphviz DOT.
    Dot,
}

/// `camel diagram`.
#[derive(Debug, clap::Args)]
pub(crate) struct DiagramArgs {
    /// Route files (YAML), read as `camel run` reads them.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// What to write on stdout.
    #[arg(long, value_enum, default_value_t = Format::Svg)]
    format: Format,
    /// Draw only this route.
    #[arg(long, value_name = "ID")]
    route: Option<String>,
    #[command(flatten)]
    properties: crate::properties::PropertyArgs,
}

/// Each route's graph, in definition order; routes without an `id` are named `route1`,
/// `route2`, … in order.
pub(crate) fn graphs(routes: &[RouteDefinition]) -> Vec<Graph> {
    let mut unnamed = 0;
    routes
        .iter()
        .map(|r| {
            let id = match &r.id {
                Some(id) => id.clone(),
                None => {
                    unnamed += 1;
                    format!("route{unnamed}")
                }
            };
            Graph::of(r, &id)
        })
        .collect()
}

/// The graphs in `format`.
pub(crate) fn render(graphs: &[Graph], format: Format) -> String {
    match format {
        Format::Svg => svg::render(graphs),
        Format::Mermaid => mermaid::render(graphs),
        Format::Dot => dot::render(graphs),
    }
}

/// Loads the files (a load error stops everything), compiles the routes to check them
/// (a compile error is reported and the route still drawn: a custom Rust step unknown to
/// this binary is no reason not to draw), and writes the drawing on stdout.
pub(crate) async fn run(args: DiagramArgs) -> ExitCode {
    let (mut routes, errors) = match crate::sources::load_partial(&args.files, &args.properties) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("error: {e}");
        }
        return ExitCode::FAILURE;
    }
    let ctx = crate::run::test_context();
    if let Err(e) = ctx.validate(&routes).await {
        for e in &e.0 {
            eprintln!("warning: {e}");
        }
    }
    let mut graphs = graphs(&routes);
    if let Some(want) = &args.route {
        graphs.retain(|g| &g.route_id == want);
        if graphs.is_empty() {
            eprintln!("error: no route `{want}` in the files");
            return ExitCode::FAILURE;
        }
    }
    routes.clear();
    print!("{}", render(&graphs, args.format));
    ExitCode::SUCCESS
}
