//! How `camel run` ends: the signals it listens to, one deadline for every phase of the
//! stop, and the exit status that tells a supervisor whether anything was lost.
//!
//! The statuses (ADR 0040, README "Running"):
//!
//! | Status | Meaning |
//! |---|---|
//! | 0 | Stopped, and every exchange of the run completed. |
//! | 1 | A startup or configuration error (a bad file, a port taken, a route that failed to start). |
//! | 2 | A usage error (unknown flag, missing file argument). |
//! | 3 | Stopped, but exchanges failed, were cut off at the deadline, were left on a queue, or were acknowledged and then lost by a step that could not drain in time (a resequencer). |
//! | 130, 143 | A second Ctrl-C (SIGINT) or SIGTERM ended the stop at once (128 + the signal). |

use std::future::Future;
use std::process::ExitCode;
use std::time::Duration;

use camel_core::{CamelContext, ShutdownReport};
use camel_sinks::batcher::BatcherStats;
use tokio::time::Instant;

/// A startup or configuration error.
pub(crate) const STARTUP_ERROR: u8 = 1;
/// The run stopped but did not complete every exchange it took in.
pub(crate) const INCOMPLETE: u8 = 3;

/// The signal that asked for a stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Signal {
    /// Ctrl-C.
    Interrupt,
    /// SIGTERM (a supervisor, `kill`).
    Terminate,
}

impl Signal {
    /// The shell's convention for a process ended by a signal: 128 + its number.
    pub(crate) fn exit_code(self) -> ExitCode {
        match self {
            Signal::Interrupt => ExitCode::from(130),
            Signal::Terminate => ExitCode::from(143),
        }
    }
}

/// Ctrl-C and SIGTERM, listened for from the moment this is made: made before the routes
/// start, a signal during startup still means a graceful stop, not the default exit.
pub(crate) struct ShutdownSignals {
    #[cfg(unix)]
    handlers: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl ShutdownSignals {
    pub(crate) fn install() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let handlers = signal(SignalKind::interrupt())
                .and_then(|int| Ok((int, signal(SignalKind::terminate())?)))
                .ok();
            ShutdownSignals { handlers }
        }
        #[cfg(not(unix))]
        ShutdownSignals {}
    }

    /// The next signal.
    pub(crate) async fn recv(&mut self) -> Signal {
        #[cfg(unix)]
        if let Some((int, term)) = &mut self.handlers {
            return tokio::select! {
                _ = int.recv() => Signal::Interrupt,
                _ = term.recv() => Signal::Terminate,
            };
        }
        let _ = tokio::signal::ctrl_c().await;
        Signal::Interrupt
    }
}

/// The stop under way: one deadline shared by all its phases (admin API, route changes,
/// routes, batchers), so `--shutdown-timeout` bounds the whole stop, not each phase.
pub(crate) struct Stopping<'a> {
    pub(crate) deadline: Instant,
    signals: &'a mut ShutdownSignals,
}

impl<'a> Stopping<'a> {
    pub(crate) fn new(deadline: Instant, signals: &'a mut ShutdownSignals) -> Self {
        Stopping { deadline, signals }
    }

    /// Runs `phase` to its end, or `Err` with the signal when a second one arrives first:
    /// the caller then exits at once. `phase` must bound itself by [`Self::deadline`].
    pub(crate) async fn or_signal<F: Future>(&mut self, phase: F) -> Result<F::Output, Signal> {
        tokio::select! {
            out = phase => Ok(out),
            signal = self.signals.recv() => Err(signal),
        }
    }

    /// Like [`Self::or_signal`] for a phase that does not watch the deadline itself:
    /// `Ok(None)` when the deadline passed first.
    pub(crate) async fn within<F: Future>(
        &mut self,
        phase: F,
    ) -> Result<Option<F::Output>, Signal> {
        let deadline = self.deadline;
        self.or_signal(async move { tokio::time::timeout_at(deadline, phase).await.ok() })
            .await
    }
}

/// Prints the second signal's notice and gives its exit status.
pub(crate) fn forced(signal: Signal) -> ExitCode {
    eprintln!("second signal: exiting without waiting for the stop to finish");
    signal.exit_code()
}

/// What the stop left undone, printed as warnings; the exit status follows from it.
pub(crate) struct Outcome<'a> {
    pub(crate) report: &'a ShutdownReport,
    pub(crate) failed: u64,
    /// Batchers still sending at the deadline (their destination did not answer).
    pub(crate) batchers: &'a [BatcherStats],
}

impl Outcome<'_> {
    /// Warns about everything lost and returns 0 when nothing was, 3 otherwise.
    pub(crate) fn exit_code(&self) -> ExitCode {
        for (route, n) in &self.report.cut_off {
            eprintln!("warning: route `{route}` stopped with {n} exchange(s) still in flight");
        }
        for (queue, n) in &self.report.left_queued {
            eprintln!(
                "warning: `{queue}` still held {n} exchange(s) at the stop; they are dropped"
            );
        }
        for (route, n) in &self.report.lost {
            eprintln!(
                "warning: route `{route}` lost {n} acknowledged exchange(s) that could not be delivered before the shutdown deadline"
            );
        }
        for b in self.batchers {
            eprintln!(
                "warning: sink `{}` was cut off at the shutdown deadline with {} entry(ies) queued and {} request(s) in flight",
                b.sink, b.queued, b.requests_in_flight
            );
        }
        for e in &self.report.errors {
            eprintln!("warning: {e}");
        }
        if self.failed > 0 {
            eprintln!("warning: {} exchange(s) failed during the run", self.failed);
        }
        let lost = self.failed > 0
            || !self.report.cut_off.is_empty()
            || !self.report.left_queued.is_empty()
            || !self.report.lost.is_empty()
            || !self.batchers.is_empty();
        if lost {
            ExitCode::from(INCOMPLETE)
        } else {
            ExitCode::SUCCESS
        }
    }
}

/// The stop, phase by phase, each bounded by the one deadline and a second signal.
pub(crate) async fn stop(
    ctx: &CamelContext,
    admin_server: Option<tokio::task::JoinHandle<()>>,
    admin_stop: &tokio_util::sync::CancellationToken,
    admin_changes: &tokio_util::task::TaskTracker,
    stopping: &mut Stopping<'_>,
) -> Result<ExitCode, Signal> {
    // The admin API ends first (open requests are answered), so nothing it is asked
    // afterwards can restart a route the context is stopping.
    admin_stop.cancel();
    if let Some(server) = admin_server {
        // At most 5 s of the deadline: a client holding a connection open must not use it all.
        stopping
            .within(tokio::time::timeout(Duration::from_secs(5), server))
            .await?;
    }
    admin_changes.close();
    if stopping.within(admin_changes.wait()).await?.is_none() {
        eprintln!("warning: a route change from the admin API was still running at the stop");
    }
    let deadline = stopping.deadline;
    let report = stopping.or_signal(ctx.stop_by(deadline)).await?;
    // Batchers outlive routes (one per destination, shared); flush what they still hold,
    // as far as the deadline allows.
    let batchers = stopping
        .or_signal(camel_sinks::batcher::BatcherRegistry::global().shutdown_by(deadline))
        .await?;
    tracing::info!(
        routes = report.routes_stopped,
        completed = ctx.stats().completed(),
        failed = ctx.stats().failed(),
        elapsed_ms = report.elapsed.as_millis() as u64,
        "stopped"
    );
    let outcome = Outcome {
        report: &report,
        failed: ctx.stats().failed(),
        batchers: &batchers,
    };
    Ok(outcome.exit_code())
}
