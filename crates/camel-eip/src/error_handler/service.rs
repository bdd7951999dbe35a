//! The channel around one step: the fast path, the redelivery loop, and what happens once
//! redeliveries are exhausted.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use async_trait::async_trait;
use camel_api::error_kind as names;
use camel_api::{
    BoxProcessor, CamelError, Exchange, Process, ProcessorFuture, ShutdownReason, StepLifecycle,
};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;
use tower::{Layer, Service, ServiceExt};

use super::{Clause, Decision, ErrorHandler, HandlerKind, LogLevel, RedeliveryPolicy};

/// A step behind the route's error handler.
#[derive(Debug, Clone)]
pub struct ErrorChannel<S = BoxProcessor> {
    handler: Arc<ErrorHandler>,
    inner: S,
    step: Arc<str>,
    role: ChannelRole,
}

/// What a channel does with a failure. A step directly in the route does everything; a
/// routing block (`filter`, `choice`, `loop`) leaves redelivery to channels around its
/// own steps, so a failure inside it is redelivered at the failing step (as in Camel) and
/// handled once, by the block's channel. A `split` (and a `multicast`) handles each part
/// on its own (ADR 0092): the part's channel handles what its steps gave up on, and a
/// failure it did not absorb goes up marked, so no channel above redelivers or handles
/// it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChannelRole {
    /// Redeliver, then hand the failure to a clause or the handler's kind.
    Whole,
    /// Redeliver only; an exhausted failure goes up unchanged, to the block's channel.
    RedeliverOnly,
    /// No redelivery (the steps inside redeliver); hand the failure to a clause or the
    /// handler's kind, unless a part's channel inside already did.
    HandleOnly,
    /// Around the steps of one part of a `split` (one branch of a `multicast`): as
    /// [`ChannelRole::HandleOnly`] for the part's exchange; a failure it lets through is
    /// marked for the exchange the part was made from (its `CamelCorrelationId`).
    Part,
    /// Around a top-level `split`/`multicast`: as [`ChannelRole::Whole`] for the block's
    /// own failures (a split's expression, its aggregation); a failure a part's channel
    /// already handled goes up as it is.
    FanOut,
}

impl<S> ErrorChannel<S> {
    /// `inner` behind `handler`; `step` names it in `CamelFailureEndpoint`.
    pub fn new(handler: Arc<ErrorHandler>, inner: S, step: &str) -> Self {
        Self::with_role(handler, inner, step, ChannelRole::Whole)
    }

    /// `inner` behind `handler` in `role`.
    pub fn with_role(handler: Arc<ErrorHandler>, inner: S, step: &str, role: ChannelRole) -> Self {
        ErrorChannel {
            handler,
            inner,
            step: step.into(),
            role,
        }
    }
}

impl Process for ErrorChannel<BoxProcessor> {
    fn process(&self, ex: Exchange) -> ProcessorFuture {
        // Kept to redeliver the step from its own input; cheap (payloads are shared).
        let saved = ex.clone();
        match self.inner.process(ex) {
            ProcessorFuture::Ready(Some(Err(e))) => {
                let this = self.clone();
                ProcessorFuture::boxed(async move { this.failed(saved, e).await })
            }
            ProcessorFuture::Pending(f) => {
                let this = self.clone();
                ProcessorFuture::boxed(async move {
                    match f.await {
                        Ok(ex) => Ok(ex),
                        Err(e) => this.failed(saved, e).await,
                    }
                })
            }
            done => done,
        }
    }

    // An in-place step (set_header, transform, …) runs without a copy of its input: on a
    // failure the pipeline hands back the exchange as the attempt left it (built-in
    // in-place steps fail before they change it) and `in_place_failed` takes over.
    fn process_in_place(&self, ex: &mut Exchange) -> Option<Result<(), CamelError>> {
        self.inner.process_in_place(ex)
    }

    fn in_place_failed(&self, ex: Exchange, e: CamelError) -> ProcessorFuture {
        let this = self.clone();
        ProcessorFuture::boxed(async move { this.failed(ex, e).await })
    }
}

impl<S> Service<Exchange> for ErrorChannel<S>
where
    S: Service<Exchange, Response = Exchange, Error = CamelError> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Exchange;
    type Error = CamelError;
    type Future = BoxFuture<'static, Result<Exchange, CamelError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), CamelError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, ex: Exchange) -> Self::Future {
        let saved = ex.clone();
        let first = self.inner.call(ex);
        let handler = self.handler.clone();
        let step = self.step.clone();
        let inner = self.inner.clone();
        let role = self.role;
        Box::pin(async move {
            match first.await {
                Ok(ex) => Ok(ex),
                Err(e) => {
                    let retry = move |ex: Exchange| {
                        let svc = inner.clone();
                        async move { svc.oneshot(ex).await }
                    };
                    on_failure(&handler, &step, role, saved, e, retry).await
                }
            }
        })
    }
}

impl ErrorChannel<BoxProcessor> {
    async fn failed(self, saved: Exchange, e: CamelError) -> Result<Exchange, CamelError> {
        let inner = self.inner.clone();
        let retry = move |ex: Exchange| inner.process(ex);
        on_failure(&self.handler, &self.step, self.role, saved, e, retry).await
    }
}

/// Redelivers `saved` through `retry` as the policy allows, then hands the last failure to
/// the clause or the handler's kind.
async fn on_failure<F, Fut>(
    handler: &ErrorHandler,
    step: &str,
    role: ChannelRole,
    saved: Exchange,
    mut error: CamelError,
    retry: F,
) -> Result<Exchange, CamelError>
where
    F: Fn(Exchange) -> Fut,
    Fut: std::future::Future<Output = Result<Exchange, CamelError>>,
{
    let mut probe = saved.clone();
    probe.set_caught_error(Some(Arc::new(error.clone())));
    let clause = handler.clause_for(&error, &probe);
    let policy = clause
        .and_then(|c| c.policy.as_ref())
        .unwrap_or(&handler.policy);
    let mut attempt: u32 = 0;
    let handles_inside = matches!(role, ChannelRole::HandleOnly | ChannelRole::Part);
    // What a redeliver-only channel inside this block gave up on, taken whatever happens
    // next so that no entry outlives its failure.
    let inside = match handles_inside {
        true => handler
            .exhausted_inside
            .lock()
            .ok()
            .and_then(|mut inside| inside.remove(&saved.id)),
        false => None,
    };
    let holds_parts = matches!(
        role,
        ChannelRole::HandleOnly | ChannelRole::Part | ChannelRole::FanOut
    );
    if holds_parts && handler.take_failed_part(&saved) {
        // A part's channel inside this block handled the failure already: it goes up as
        // it is, neither redelivered nor handled again.
        if role == ChannelRole::Part {
            handler.mark_failed_part(&saved);
        }
        return Err(error);
    }
    if handles_inside && handler.stop.is_cancelled() && matches!(error, CamelError::Stopping(_)) {
        // A redelivery inside the block was cut short by the route's stop: the exchange
        // fails, as it would at the top level (never dead-lettered).
        if role == ChannelRole::Part {
            handler.mark_failed_part(&saved);
        }
        return Err(error);
    }
    // A block's channel does not redeliver: the channels around its steps did.
    let redelivers = !handles_inside;
    loop {
        let next = attempt.saturating_add(1);
        if !redelivers || !policy.allows(next) || !retry_while(clause, &saved, &error) {
            break;
        }
        attempt = next;
        let wait = delay(policy, attempt, &error);
        let level = if attempt.is_multiple_of(policy.retry_attempted_log_interval.max(1)) {
            policy.retry_attempted_log_level
        } else {
            LogLevel::Off
        };
        log_at(level, &handler.route_id, step, &error, attempt, wait);
        tokio::select! {
            biased;
            _ = handler.stop.cancelled() => {
                return Err(CamelError::Stopping(
                    format!(
                        "route `{}` stopped while redelivery {attempt} of `{step}` was pending; last failure: {error}",
                        handler.route_id
                    )
                    .into(),
                ));
            }
            _ = tokio::time::sleep(wait) => {}
        }
        let mut again = saved.clone();
        mark_redelivery(&mut again, attempt, policy);
        match retry(again).await {
            Ok(ex) => return Ok(ex),
            Err(e) => error = e,
        }
    }
    if role == ChannelRole::RedeliverOnly {
        // A clause that continues goes on after the failing step itself, as in Camel: it
        // runs here and the block carries on with its next step.
        if let Some(clause) = clause.filter(|c| continues(c, &probe)) {
            let mut failed = saved;
            if attempt > 0 {
                mark_redelivery(&mut failed, attempt, policy);
            }
            record_failure(&mut failed, handler, step, &error);
            return continue_after(clause, failed).await;
        }
        if let Ok(mut inside) = handler.exhausted_inside.lock() {
            inside.insert(saved.id, (attempt, step.into(), saved));
        }
        return Err(error);
    }
    let part_of = (role == ChannelRole::Part).then(|| saved.clone());
    let mut step: Arc<str> = step.into();
    let mut failed = saved;
    if let Some((attempts, failing, at_step)) = inside {
        attempt = attempts;
        step = failing;
        failed = at_step;
    }
    let step = &*step;
    if attempt > 0 {
        mark_redelivery(&mut failed, attempt, policy);
    }
    record_failure(&mut failed, handler, step, &error);
    let outcome = match clause {
        Some(clause) => run_clause(clause, failed, error).await,
        None => exhausted(handler, policy, step, failed, error).await,
    };
    if let (Some(part), Err(_)) = (&part_of, &outcome) {
        handler.mark_failed_part(part);
    }
    outcome
}

fn retry_while(clause: Option<&Clause>, saved: &Exchange, error: &CamelError) -> bool {
    let Some(p) = clause.and_then(|c| c.retry_while.as_ref()) else {
        return true;
    };
    let mut probe = saved.clone();
    probe.set_caught_error(Some(Arc::new(error.clone())));
    p.matches(&probe).unwrap_or(false)
}

/// The policy's delay, or longer when the component asked to wait longer (RetryAfter).
fn delay(policy: &RedeliveryPolicy, attempt: u32, error: &CamelError) -> Duration {
    let computed = policy.delay(attempt, rand::random::<f64>(), rand::random::<bool>());
    match error {
        CamelError::RetryAfter { ms, .. } => computed.max(Duration::from_millis(*ms)),
        _ => computed,
    }
}

fn mark_redelivery(ex: &mut Exchange, attempt: u32, policy: &RedeliveryPolicy) {
    let h = &mut ex.message.headers;
    h.insert(names::REDELIVERED, true);
    h.insert(names::REDELIVERY_COUNTER, i64::from(attempt));
    h.insert(names::REDELIVERY_MAX_COUNTER, policy.maximum_redeliveries);
}

fn record_failure(ex: &mut Exchange, handler: &ErrorHandler, step: &str, error: &CamelError) {
    let p = &mut ex.properties;
    p.insert(names::EXCEPTION_CAUGHT, error.to_string());
    p.insert(names::EXCEPTION_KIND, error.kind_name().to_string());
    p.insert(names::FAILURE_ENDPOINT, step.to_string());
    p.insert(names::FAILURE_ROUTE_ID, handler.route_id.clone());
    ex.set_caught_error(Some(Arc::new(error.clone())));
}

/// The exchange `use_original_message`/`use_original_body` ask for.
fn original(mut ex: Exchange, message: bool, body: bool) -> Exchange {
    if let Some(orig) = ex.original_message().cloned() {
        if message {
            ex.message = (*orig).clone();
        } else if body {
            ex.message.body = orig.body.clone();
        }
    }
    ex
}

/// The clause's steps on the exchange its `use_original_*` options ask for.
async fn clause_steps(clause: &Clause, failed: Exchange) -> Result<Exchange, CamelError> {
    let ex = original(
        failed,
        clause.use_original_message,
        clause.use_original_body,
    );
    match &clause.steps {
        Some(steps) => steps.process(ex).await,
        None => Ok(ex),
    }
}

async fn run_clause(
    clause: &Clause,
    failed: Exchange,
    error: CamelError,
) -> Result<Exchange, CamelError> {
    let mut ex = clause_steps(clause, failed).await?;
    let handled = match &clause.handled {
        Some(d) => d.holds(&ex)?,
        None => false,
    };
    if handled {
        ex.properties.insert(names::ERROR_HANDLER_HANDLED, true);
        ex.stop();
        return Ok(ex);
    }
    let continued = match &clause.continued {
        Some(d) => d.holds(&ex)?,
        None => false,
    };
    if continued {
        ex.properties.insert(names::ERROR_HANDLER_HANDLED, false);
        ex.resume();
        return Ok(ex);
    }
    Err(error)
}

/// True when `clause` continues (and does not handle) a failure of `failed`: its
/// `continued` holds on the failed exchange, before the clause's steps run.
fn continues(clause: &Clause, failed: &Exchange) -> bool {
    let holds = |d: &Option<Decision>| d.as_ref().is_some_and(|d| d.holds(failed).unwrap_or(false));
    holds(&clause.continued) && !holds(&clause.handled)
}

/// Runs a continuing clause's steps on `failed` and hands the exchange back to go on.
async fn continue_after(clause: &Clause, failed: Exchange) -> Result<Exchange, CamelError> {
    let mut ex = clause_steps(clause, failed).await?;
    ex.properties.insert(names::ERROR_HANDLER_HANDLED, false);
    ex.resume();
    Ok(ex)
}

async fn exhausted(
    handler: &ErrorHandler,
    policy: &RedeliveryPolicy,
    step: &str,
    mut failed: Exchange,
    error: CamelError,
) -> Result<Exchange, CamelError> {
    match &handler.kind {
        HandlerKind::Default => {
            log_exhausted(policy, &handler.route_id, step, &error, None);
            Err(error)
        }
        HandlerKind::DeadLetter(dead) => {
            log_exhausted(policy, &handler.route_id, step, &error, Some(&dead.uri));
            failed.properties.insert(names::ERROR_HANDLER_HANDLED, true);
            let letter = original(failed, dead.use_original_message, dead.use_original_body);
            match dead.endpoint.process(letter.clone()).await {
                Ok(_) => {}
                Err(new) if dead.handle_new_exception => {
                    tracing::error!(route_id = %handler.route_id, dead_letter_uri = %dead.uri, error = %new, "dead letter endpoint failed; the exchange counts as handled");
                }
                Err(new) => return Err(new),
            }
            let mut done = letter;
            done.stop();
            Ok(done)
        }
    }
}

fn log_at(
    level: LogLevel,
    route_id: &str,
    step: &str,
    error: &CamelError,
    attempt: u32,
    wait: Duration,
) {
    let wait_ms = wait.as_millis() as u64;
    macro_rules! line {
        ($m:ident) => {
            tracing::$m!(route_id, step, attempt, wait_ms, error = %error, "redelivering")
        };
    }
    match level {
        LogLevel::Off => {}
        LogLevel::Trace => line!(trace),
        LogLevel::Debug => line!(debug),
        LogLevel::Info => line!(info),
        LogLevel::Warn => line!(warn),
        LogLevel::Error => line!(error),
    }
}

fn log_exhausted(
    policy: &RedeliveryPolicy,
    route_id: &str,
    step: &str,
    error: &CamelError,
    dead_letter_uri: Option<&str>,
) {
    let chain = if policy.log_stack_trace {
        names::chain(error)
    } else {
        String::new()
    };
    let dead = dead_letter_uri.unwrap_or("");
    macro_rules! line {
        ($m:ident) => {
            tracing::$m!(route_id, step, error = %error, chain = %chain, dead_letter_uri = %dead, "redeliveries exhausted")
        };
    }
    match policy.retries_exhausted_log_level {
        LogLevel::Off => {}
        LogLevel::Trace => line!(trace),
        LogLevel::Debug => line!(debug),
        LogLevel::Info => line!(info),
        LogLevel::Warn => line!(warn),
        LogLevel::Error => line!(error),
    }
}

/// Wraps a service in an [`ErrorChannel`].
#[derive(Debug, Clone)]
pub struct ErrorHandlerLayer {
    handler: Arc<ErrorHandler>,
    step: Arc<str>,
}

impl ErrorHandlerLayer {
    /// A layer putting `handler` around a step named `step`.
    pub fn new(handler: Arc<ErrorHandler>, step: &str) -> Self {
        ErrorHandlerLayer {
            handler,
            step: step.into(),
        }
    }
}

impl<S> Layer<S> for ErrorHandlerLayer {
    type Service = ErrorChannel<S>;

    fn layer(&self, inner: S) -> ErrorChannel<S> {
        ErrorChannel::with_role(self.handler.clone(), inner, &self.step, ChannelRole::Whole)
    }
}

/// The error handler's lifecycle: stopping the route cancels every pending redelivery,
/// which then fails its exchange with [`CamelError::Stopping`].
#[derive(Debug)]
pub struct StopRedeliveries {
    stop: CancellationToken,
}

impl StopRedeliveries {
    pub(super) fn new(stop: CancellationToken) -> Self {
        StopRedeliveries { stop }
    }
}

#[async_trait]
impl StepLifecycle for StopRedeliveries {
    fn name(&self) -> &str {
        super::LIFECYCLE_NAME
    }

    async fn start(&self) -> Result<(), CamelError> {
        Ok(())
    }

    async fn shutdown(&self, _reason: ShutdownReason) -> Result<(), CamelError> {
        self.stop.cancel();
        Ok(())
    }
}
