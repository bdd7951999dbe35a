//! The circuit breaker as a route step and as a tower service.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use camel_api::error_kind;
use camel_api::{BoxProcessor, CamelError, Exchange, Process, ProcessorFuture};
use tokio::time::Instant;
use tower::{Layer, Service};

use super::state::{Circuit, CircuitState, Outcome, Refused, Thresholds};
use super::{
    CIRCUIT_BREAKER_FROM_FALLBACK, CIRCUIT_BREAKER_REJECTED, CIRCUIT_BREAKER_SHORT_CIRCUITED,
    CIRCUIT_BREAKER_SUCCESSFUL_EXECUTION, CIRCUIT_BREAKER_TIMED_OUT, RESPONSE_FROM_FALLBACK,
    RESPONSE_SHORT_CIRCUITED, RESPONSE_SUCCESSFUL_EXECUTION, RESPONSE_TIMED_OUT,
};
use crate::layer::EipFuture;

/// Everything a breaker needs besides its inner service.
#[derive(Clone, Debug, Default)]
pub struct BreakerSettings {
    /// When the circuit opens and closes.
    pub thresholds: Thresholds,
    /// A deadline per call; a call past it fails with a timeout and counts as failed.
    pub timeout: Option<Duration>,
    /// Refused calls without a fallback fail with `CallNotPermittedException` instead of
    /// passing the exchange on unchanged.
    pub throw_when_open: bool,
    /// Only these error kinds count as failures (the others as successes); empty: all.
    pub record_exceptions: Vec<String>,
    /// These error kinds count as neither.
    pub ignore_exceptions: Vec<String>,
    /// The metric labels (route id, step id); `None` records no metric.
    pub metric_labels: Option<(String, String)>,
}

/// The shared part of every clone of one breaker: its circuit and its fallback.
#[derive(Debug)]
struct Shared {
    circuit: Mutex<Circuit>,
    settings: BreakerSettings,
    fallback: Option<BoxProcessor>,
    gauge: Option<metrics::Gauge>,
}

impl Shared {
    /// Runs `f` on the circuit and reports a state change on the gauge. The lock is never
    /// held across an await: `f` is synchronous.
    fn with_circuit<T>(&self, f: impl FnOnce(&mut Circuit) -> T) -> T {
        let mut circuit = self.circuit.lock().unwrap_or_else(|e| e.into_inner());
        let before = circuit.state();
        let out = f(&mut circuit);
        let after = circuit.state();
        drop(circuit);
        if before != after {
            if let Some(g) = &self.gauge {
                g.set(after.gauge_value());
            }
            if let Some((route, id)) = &self.settings.metric_labels {
                tracing::info!(route_id = %route, step = %id, from = ?before, to = ?after, "circuit breaker state changed");
            }
        }
        out
    }

    fn classify(&self, result: &Result<Exchange, CamelError>, slow: bool) -> Outcome {
        let Err(e) = result else {
            return Outcome::Success { slow };
        };
        let listed = |names: &[String]| names.iter().any(|n| error_kind::distance(e, n).is_some());
        let s = &self.settings;
        if listed(&s.ignore_exceptions) {
            Outcome::Ignored
        } else if s.record_exceptions.is_empty() || listed(&s.record_exceptions) {
            Outcome::Failure { slow }
        } else {
            Outcome::Success { slow }
        }
    }

    /// One exchange: `call` starts the protected work when the circuit admits it.
    fn handle<F>(self: Arc<Self>, ex: Exchange, call: impl FnOnce(Exchange) -> F) -> ProcessorFuture
    where
        F: Future<Output = Result<Exchange, CamelError>> + Send + 'static,
    {
        let generation = match self.with_circuit(|c| c.acquire(Instant::now())) {
            Ok(g) => g,
            Err(Refused) => return self.refused(ex),
        };
        let saved = self.fallback.is_some().then(|| ex.clone());
        let work = call(ex);
        ProcessorFuture::boxed(async move {
            let started = Instant::now();
            let (result, timed_out) = match self.settings.timeout {
                None => (work.await, false),
                Some(limit) => match tokio::time::timeout(limit, work).await {
                    Ok(r) => (r, false),
                    Err(_) => (
                        Err(CamelError::Timeout(
                            format!(
                                "the circuit breaker's steps did not finish within {} ms",
                                limit.as_millis()
                            )
                            .into(),
                        )),
                        true,
                    ),
                },
            };
            let slow = started.elapsed() >= self.settings.thresholds.slow_call_duration;
            let outcome = self.classify(&result, slow);
            self.with_circuit(|c| c.record(generation, outcome, Instant::now()));
            match (result, saved) {
                (Ok(mut ex), _) => {
                    mark(&mut ex, Marks::default().success());
                    Ok(ex)
                }
                (Err(e), Some(mut ex)) => {
                    mark(&mut ex, Marks::default().fallback().timed_out(timed_out));
                    self.run_fallback(ex, e).await
                }
                (Err(e), None) => Err(e),
            }
        })
    }

    fn refused(self: Arc<Self>, mut ex: Exchange) -> ProcessorFuture {
        let fallback = self.fallback.is_some();
        let marks = Marks::default().rejected();
        mark(&mut ex, if fallback { marks.fallback() } else { marks });
        if fallback {
            let error = CamelError::user(
                "CallNotPermittedException",
                "the circuit breaker is open and does not permit further calls",
            );
            return ProcessorFuture::boxed(async move { self.run_fallback(ex, error).await });
        }
        if self.settings.throw_when_open {
            return ProcessorFuture::ready(Err(CamelError::user(
                "CallNotPermittedException",
                "the circuit breaker is open and does not permit further calls",
            )));
        }
        ProcessorFuture::ready(Ok(ex))
    }

    async fn run_fallback(
        &self,
        mut ex: Exchange,
        error: CamelError,
    ) -> Result<Exchange, CamelError> {
        ex.properties
            .insert(error_kind::EXCEPTION_CAUGHT, error.to_string());
        ex.properties
            .insert(error_kind::EXCEPTION_KIND, error.kind_name().to_string());
        ex.set_caught_error(Some(Arc::new(error)));
        match &self.fallback {
            Some(f) => f.process(ex).await,
            None => Ok(ex),
        }
    }
}

/// How one exchange left the breaker, as the response properties say it.
#[derive(Clone, Copy, Default)]
struct Marks {
    success: bool,
    fallback: bool,
    short_circuited: bool,
    timed_out: bool,
    rejected: bool,
}

impl Marks {
    fn success(mut self) -> Self {
        self.success = true;
        self
    }

    /// The fallback gave the result: Camel counts that as short circuited too.
    fn fallback(mut self) -> Self {
        self.fallback = true;
        self.short_circuited = true;
        self
    }

    fn timed_out(mut self, yes: bool) -> Self {
        self.timed_out = yes;
        self
    }

    /// The circuit refused the call.
    fn rejected(mut self) -> Self {
        self.rejected = true;
        self.short_circuited = true;
        self
    }
}

fn mark(ex: &mut Exchange, m: Marks) {
    let p = &mut ex.properties;
    p.insert(CIRCUIT_BREAKER_SUCCESSFUL_EXECUTION, m.success);
    p.insert(CIRCUIT_BREAKER_FROM_FALLBACK, m.fallback);
    p.insert(CIRCUIT_BREAKER_SHORT_CIRCUITED, m.short_circuited);
    p.insert(CIRCUIT_BREAKER_TIMED_OUT, m.timed_out);
    p.insert(CIRCUIT_BREAKER_REJECTED, m.rejected);
    // Camel 3's names, as before: short circuited only when the circuit refused the call.
    p.insert(RESPONSE_SUCCESSFUL_EXECUTION, m.success);
    p.insert(RESPONSE_FROM_FALLBACK, m.fallback);
    p.insert(RESPONSE_SHORT_CIRCUITED, m.rejected);
    p.insert(RESPONSE_TIMED_OUT, m.timed_out);
}

/// A circuit breaker in front of `S` (the protected steps). Clones share one circuit.
#[derive(Debug, Clone)]
pub struct CircuitBreaker<S = BoxProcessor> {
    shared: Arc<Shared>,
    inner: S,
}

impl<S> CircuitBreaker<S> {
    /// A breaker protecting `inner`; `fallback` runs instead when a call fails, times out
    /// or is refused.
    pub fn new(settings: BreakerSettings, fallback: Option<BoxProcessor>, inner: S) -> Self {
        CircuitBreakerLayer::new(settings, fallback).layer(inner)
    }

    /// The circuit's current state.
    pub fn state(&self) -> CircuitState {
        self.shared.with_circuit(|c| c.state())
    }
}

impl CircuitBreaker<BoxProcessor> {
    /// The breaker as a route step.
    pub fn into_processor(self) -> BoxProcessor {
        BoxProcessor::new(self).named("circuit_breaker")
    }
}

impl Process for CircuitBreaker<BoxProcessor> {
    fn process(&self, ex: Exchange) -> ProcessorFuture {
        let inner = &self.inner;
        self.shared.clone().handle(ex, |ex| inner.process(ex))
    }
}

impl<S> Service<Exchange> for CircuitBreaker<S>
where
    S: Service<Exchange, Response = Exchange, Error = CamelError>,
    S::Future: Send + 'static,
{
    type Response = Exchange;
    type Error = CamelError;
    type Future = EipFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), CamelError>> {
        // As with `Filter`: readiness is reserved even for a call the open circuit refuses.
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, ex: Exchange) -> Self::Future {
        let inner = &mut self.inner;
        EipFuture::step(self.shared.clone().handle(ex, |ex| inner.call(ex)))
    }
}

/// Wraps a service in a [`CircuitBreaker`]. Every service this layer makes shares the one
/// circuit the layer holds.
#[derive(Debug, Clone)]
pub struct CircuitBreakerLayer {
    shared: Arc<Shared>,
}

impl CircuitBreakerLayer {
    /// A layer for one circuit.
    pub fn new(settings: BreakerSettings, fallback: Option<BoxProcessor>) -> Self {
        let gauge = settings.metric_labels.as_ref().map(|(route, id)| {
            let g =
                metrics::gauge!(super::STATE_METRIC, "routeId" => route.clone(), "nodeId" => id.clone());
            g.set(CircuitState::Closed.gauge_value());
            g
        });
        CircuitBreakerLayer {
            shared: Arc::new(Shared {
                circuit: Mutex::new(Circuit::new(settings.thresholds.clone(), Instant::now())),
                settings,
                fallback,
                gauge,
            }),
        }
    }
}

impl<S> Layer<S> for CircuitBreakerLayer {
    type Service = CircuitBreaker<S>;

    fn layer(&self, inner: S) -> CircuitBreaker<S> {
        CircuitBreaker {
            shared: self.shared.clone(),
            inner,
        }
    }
}
