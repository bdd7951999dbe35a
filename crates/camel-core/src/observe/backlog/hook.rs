//! The wrappers an armed route's pipeline and steps get: open, add to and close the
//! exchange's record.

use super::capture::{micros, with_message};
use super::*;

/// The record number `exchange` carries, if any.
fn record_of(exchange: &Exchange) -> Option<u64> {
    match exchange.property(RECORD_PROPERTY) {
        Some(Value::Int(n)) => u64::try_from(*n).ok(),
        _ => None,
    }
}

/// Wraps a route's pipeline to open and close a record per exchange, when the route is
/// armed; otherwise returns it as it is.
pub(crate) fn wrap_route(
    backlog: Option<Arc<RouteBacklog>>,
    from_uri: &str,
    pipeline: BoxProcessor,
) -> BoxProcessor {
    match backlog {
        Some(backlog) => BoxProcessor::new(RouteHook {
            inner: pipeline,
            backlog,
            uri: camel_api::redact_url(from_uri).into(),
        })
        .named("backlog-route"),
        None => pipeline,
    }
}

/// Wraps one compiled step to add its entry to the exchange's record, when the route is
/// armed; otherwise returns it as it is.
pub(crate) fn wrap_step(
    backlog: Option<Arc<RouteBacklog>>,
    step: BoxProcessor,
    id: &str,
    kind: &str,
    depth: usize,
) -> BoxProcessor {
    match backlog {
        Some(backlog) => BoxProcessor::new(StepHook {
            inner: step,
            backlog,
            id: id.into(),
            kind: kind.into(),
            depth,
        })
        .named("backlog-step"),
        None => step,
    }
}

struct RouteHook {
    inner: BoxProcessor,
    backlog: Arc<RouteBacklog>,
    uri: Arc<str>,
}

/// Closes a record when dropped: as abandoned unless `close` came first.
struct Open {
    backlog: Arc<RouteBacklog>,
    number: u64,
    /// The record number the exchange carried in (a `direct:` caller's), put back.
    outer: Option<Value>,
    closed: bool,
}

impl Open {
    fn close(mut self, result: Result<Exchange, CamelError>) -> Result<Exchange, CamelError> {
        self.closed = true;
        let (outcome, error) = match &result {
            Ok(ex) if ex.is_stopped() => (TraceOutcome::Stopped, None),
            Ok(_) => (TraceOutcome::Completed, None),
            Err(e) => (TraceOutcome::Failed, Some(e.to_string())),
        };
        self.backlog.finish(self.number, outcome, error);
        result.map(|mut ex| {
            match self.outer.take() {
                Some(v) => ex.properties.insert(RECORD_PROPERTY, v),
                None => {
                    ex.properties.remove(RECORD_PROPERTY);
                }
            }
            ex
        })
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        if !self.closed {
            self.backlog
                .finish(self.number, TraceOutcome::Abandoned, None);
        }
    }
}

impl Process for RouteHook {
    fn process(&self, mut exchange: Exchange) -> ProcessorFuture {
        if !self.backlog.on() {
            return self.inner.process(exchange);
        }
        let Some(number) = self.backlog.begin(&exchange, &self.uri) else {
            return self.inner.process(exchange);
        };
        let outer = exchange.properties.get(RECORD_PROPERTY).cloned();
        exchange
            .properties
            .insert(RECORD_PROPERTY, Value::Int(number as i64));
        let open = Open {
            backlog: self.backlog.clone(),
            number,
            outer,
            closed: false,
        };
        match self.inner.process(exchange) {
            ProcessorFuture::Ready(Some(result)) => ProcessorFuture::ready(open.close(result)),
            ProcessorFuture::Ready(None) => ProcessorFuture::Ready(None),
            ProcessorFuture::Pending(pending) => {
                ProcessorFuture::boxed(async move { open.close(pending.await) })
            }
        }
    }
}

struct StepHook {
    inner: BoxProcessor,
    backlog: Arc<RouteBacklog>,
    id: Arc<str>,
    kind: Arc<str>,
    depth: usize,
}

impl StepHook {
    /// The record to add to, when the route is traced and the exchange has one.
    #[inline]
    fn traced(&self, exchange: &Exchange) -> Option<u64> {
        if self.backlog.on() {
            record_of(exchange)
        } else {
            None
        }
    }

    fn record(
        &self,
        number: u64,
        exchange_id: String,
        began: Instant,
        outcome: Result<&Exchange, &CamelError>,
    ) {
        let ended = Instant::now();
        self.backlog.step(number, |config, started| {
            let mut step =
                TracedStep::new(self.id.clone(), self.kind.clone(), self.depth, exchange_id);
            step.at_us = micros(began.saturating_duration_since(started));
            step.duration_us = micros(ended.saturating_duration_since(began));
            match outcome {
                Ok(ex) => {
                    if ex.is_stopped() {
                        step.outcome = TraceOutcome::Stopped;
                    }
                    with_message(step, &ex.message, config)
                }
                Err(e) => {
                    step.outcome = TraceOutcome::Failed;
                    step.error = Some(e.to_string());
                    step
                }
            }
        });
    }
}

impl Process for StepHook {
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        let Some(number) = self.traced(&exchange) else {
            return self.inner.process(exchange);
        };
        let began = Instant::now();
        let exchange_id = exchange.id.to_string();
        match self.inner.process(exchange) {
            ProcessorFuture::Ready(Some(result)) => {
                self.record(number, exchange_id, began, result.as_ref());
                ProcessorFuture::ready(result)
            }
            ProcessorFuture::Ready(None) => ProcessorFuture::Ready(None),
            ProcessorFuture::Pending(pending) => {
                let hook = StepHook {
                    inner: self.inner.clone(),
                    backlog: self.backlog.clone(),
                    id: self.id.clone(),
                    kind: self.kind.clone(),
                    depth: self.depth,
                };
                ProcessorFuture::boxed(async move {
                    let result = pending.await;
                    hook.record(number, exchange_id, began, result.as_ref());
                    result
                })
            }
        }
    }

    #[inline]
    fn process_in_place(&self, exchange: &mut Exchange) -> Option<Result<(), CamelError>> {
        let Some(number) = self.traced(exchange) else {
            return self.inner.process_in_place(exchange);
        };
        let began = Instant::now();
        let result = self.inner.process_in_place(exchange)?;
        let exchange_id = exchange.id.to_string();
        match &result {
            Ok(()) => self.record(number, exchange_id, began, Ok(exchange)),
            Err(e) => self.record(number, exchange_id, began, Err(e)),
        }
        Some(result)
    }

    fn in_place_failed(&self, exchange: Exchange, error: CamelError) -> ProcessorFuture {
        self.inner.in_place_failed(exchange, error)
    }
}
