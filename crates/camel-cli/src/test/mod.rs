//! `camel test FILES…`: runs `*.test.yaml` files (ADR 0127, docs/testing.md). Each case
//! gets a fresh context with the routes loaded, advised (sources replaced, endpoints
//! mocked) and started; its inputs are sent and its expectations checked. A failure is
//! printed as a diff and the exit status is 1; `--junit FILE` writes JUnit XML.

mod case;
mod check;
mod file;

pub(crate) use file::TestFile;
mod junit;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use junit::{CaseResult, FileResult};

/// Options of `camel test`.
#[derive(Debug, clap::Args)]
pub(crate) struct TestArgs {
    /// Test files (`*.test.yaml`).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Write the results as JUnit XML to this file, for CI.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

pub(crate) async fn run(args: &TestArgs) -> ExitCode {
    let mut results = Vec::new();
    for path in &args.files {
        results.push(run_file(path).await);
    }
    let cases = results.iter().flat_map(|f| &f.cases);
    let failed = cases.clone().filter(|c| c.failure.is_some()).count();
    let passed = cases.count() - failed;
    println!("{passed} passed, {failed} failed");
    if let Some(out) = &args.junit {
        if let Err(e) = std::fs::write(out, junit::render(&results)) {
            eprintln!("error: cannot write {}: {e}", out.display());
            return ExitCode::FAILURE;
        }
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// A file that cannot be read counts as one failed case named after it.
async fn run_file(path: &Path) -> FileResult {
    let name = path.display().to_string();
    let file = match file::read(path) {
        Ok(f) => f,
        Err(e) => {
            println!("ERROR {name}\n  {e}");
            return FileResult {
                file: name.clone(),
                cases: vec![CaseResult {
                    name,
                    seconds: 0.0,
                    failure: Some(e),
                    error: true,
                }],
            };
        }
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut cases = Vec::new();
    for case in &file.tests {
        let started = Instant::now();
        let outcome = if case.virtual_time {
            on_virtual_time(dir, &file, case)
        } else {
            case::run(dir, &file, case, crate::run::test_context()).await
        };
        let seconds = started.elapsed().as_secs_f64();
        let (failure, error) = match outcome {
            Ok(f) if f.0.is_empty() => {
                println!("ok    {name} :: {}", case.name);
                (None, false)
            }
            Ok(f) => {
                let report = f.0.join("\n");
                println!("FAIL  {name} :: {}\n{}", case.name, indent(&report));
                (Some(report), false)
            }
            Err(e) => {
                println!("ERROR {name} :: {}\n{}", case.name, indent(&e));
                (Some(e), true)
            }
        };
        cases.push(CaseResult {
            name: case.name.clone(),
            seconds,
            failure,
            error,
        });
    }
    FileResult { file: name, cases }
}

/// Runs a case on a runtime of its own whose clock starts paused: it advances to the next
/// timer whenever every task waits, so only the case's timers see time pass (ADR 0127).
/// A case that waits on real I/O (a database, a socket) should not use it: time jumps
/// while the I/O is pending.
fn on_virtual_time(
    dir: &Path,
    file: &file::TestFile,
    case: &file::TestCase,
) -> Result<check::Failures, String> {
    // On a thread of its own: this one belongs to the outer runtime, which can neither
    // run nor drop another.
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .start_paused(true)
                    .build()
                    .map_err(|e| format!("cannot start a runtime on virtual time: {e}"))?;
                let outcome =
                    runtime.block_on(case::run(dir, file, case, crate::run::test_context()));
                // As `main` does: a blocking task cut off by the stop must not hold the exit.
                runtime.shutdown_background();
                outcome
            })
            .join()
            .unwrap_or_else(|_| Err("the case panicked".into()))
    })
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
