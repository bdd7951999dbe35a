//! The `camel` command: run, validate or test route files.

mod admin;
mod diagram;
mod discover;
mod export;
mod file_routes;
mod init;
mod inspect;
mod logging;
mod metrics;
mod otel;
mod outbox;
mod properties;
mod run;
mod schema;
mod shutdown;
mod sources;
mod test;
mod trace;

/// mimalloc: routes allocate many small, short-lived values (bodies, header names); it is
/// markedly faster than the system allocator for that pattern (see docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Run integration routes written in YAML.
#[derive(Debug, Parser)]
#[command(name = "camel", version, about)]
struct Cli {
    /// How log lines are written on stderr: `text` for people, `json` (one object per
    /// line) for log collectors. Also read from CAMEL_LOG_FORMAT.
    #[arg(
        long,
        global = true,
        value_enum,
        env = "CAMEL_LOG_FORMAT",
        default_value_t = logging::LogFormat::Text
    )]
    log_format: logging::LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the routes in the given files until Ctrl-C, SIGTERM or a --max-* limit.
    Run(Box<run::RunArgs>),
    /// Compile the routes without running them; list every error.
    Validate {
        /// Route files (YAML).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        properties: properties::PropertyArgs,
    },
    /// Inspect and repair an outbox: counts, discard, retry-dead.
    Outbox(outbox::OutboxArgs),
    /// Run `*.test.yaml` files: routes with mocked endpoints, inputs, expectations.
    Test(test::TestArgs),
    /// Print the JSON Schema of route files (or, with --test-file, of `*.test.yaml`
    /// files) for editors and CI.
    Schema(schema::SchemaArgs),
    /// Write a starter route file (timer, rest, outbox or kafka) to edit and run.
    Init(init::InitArgs),
    /// Show a running `camel run --admin-addr`: `get routes` (status, counts,
    /// durations), `get health` (readiness and each check).
    Get(inspect::GetArgs),
    /// The routes of a running `camel run --admin-addr` by load, refreshed.
    Top(inspect::TopArgs),
    /// Start, stop, suspend or resume a route of a running `camel run --admin-addr`.
    Cmd(inspect::CmdArgs),
    /// Write what runs the routes elsewhere: `--kubernetes` writes a Deployment (or a
    /// StatefulSet), its probes, ConfigMap, Secret references, Service, RBAC and a Dockerfile.
    Export(export::ExportArgs),
    /// Follow the traced exchanges of a running `camel run --admin-addr` step by step
    /// (headers, body, duration, outcome); the tracer is on with `camel run --trace`.
    Trace(trace::TraceArgs),
    /// Draw routes as SVG, Mermaid or DOT, from the loaded model (Kamelets expanded).
    Diagram(diagram::DiagramArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.log_format);
    let traces = match &cli.command {
        Command::Run(args) => {
            match otel::start(args.otel_endpoint.as_deref(), args.otel_step_spans) {
                Ok(export) => export,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(shutdown::STARTUP_ERROR);
                }
            }
        }
        // Before the runtime's threads exist: it sets environment variables.
        Command::Export(args) => {
            export::stand_in_env(args);
            None
        }
        _ => None,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(async {
        match cli.command {
            Command::Run(args) => run::run(*args).await,
            Command::Validate { files, properties } => run::validate(&files, &properties).await,
            Command::Outbox(args) => outbox::run(args).await,
            Command::Init(args) => init::run(&args),
            Command::Export(args) => export::run(args).await,
            Command::Get(args) => inspect::get(args).await,
            Command::Top(args) => inspect::top(args).await,
            Command::Cmd(args) => inspect::cmd(args).await,
            Command::Trace(args) => trace::run(args).await,
            Command::Test(args) => test::run(&args).await,
            Command::Schema(args) => schema::run(&args),
            Command::Diagram(args) => diagram::run(args).await,
        }
    });
    // Dropping the runtime would wait for every blocking task (a file read stuck on a
    // slow or hung file system): the stop has had its deadline, so what still runs was
    // cut off and reported, and must not hold the exit.
    runtime.shutdown_background();
    // After the routes stopped, so the last exchanges' spans are among those sent.
    if let Some(traces) = traces {
        traces.shutdown();
    }
    code
}
