//! The split service: one exchange in, each part through the inner service, one result
//! out.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use camel_api::{
    Body, BoxProcessor, CamelError, Exchange, ExchangeId, Process, ProcessorFuture, Value,
};
use futures::stream::{FuturesUnordered, StreamExt};
use tokio::time::Instant;
use tower::{Service, ServiceExt};

use super::parts::{Parts, SplitExpression, TextDelimiter};
use super::results::Results;
use super::{SPLIT_COMPLETE, SPLIT_INDEX, SPLIT_SIZE};
use crate::aggregation::SharedStrategy;

/// How a split cuts and runs its parts.
#[derive(Clone)]
pub struct SplitOptions {
    /// What the exchange is cut into.
    pub expression: SplitExpression,
    /// How text no tokenizer names is cut (at line ends by default).
    pub delimiter: TextDelimiter,
    /// Take parts one at a time from their source instead of listing them first.
    pub streaming: bool,
    /// Parts run at once: 1 runs them one after another.
    pub parallel_limit: usize,
    /// Start no part after one failed.
    pub stop_on_exception: bool,
    /// Combines the parts' results into the split's result.
    pub strategy: Option<SharedStrategy>,
    /// The whole split's deadline; parts not finished by then are abandoned.
    pub timeout: Option<Duration>,
    /// Give each part the property `CamelCorrelationId`, the incoming exchange's id: how
    /// a part's error channel names the split it belongs to (ADR 0092). Off unless a
    /// route's error handler handles the parts: it costs a property per part.
    pub correlate: bool,
}

impl SplitOptions {
    /// Sequential, not streaming, no strategy, no timeout.
    pub fn new(expression: SplitExpression) -> Self {
        SplitOptions {
            expression,
            delimiter: TextDelimiter::Lines,
            streaming: false,
            parallel_limit: 1,
            stop_on_exception: false,
            strategy: None,
            timeout: None,
            correlate: false,
        }
    }
}

impl std::fmt::Debug for SplitOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SplitOptions")
            .field("expression", &self.expression)
            .field("delimiter", &self.delimiter)
            .field("streaming", &self.streaming)
            .field("parallel_limit", &self.parallel_limit)
            .field("stop_on_exception", &self.stop_on_exception)
            .field("strategy", &self.strategy.is_some())
            .field("timeout", &self.timeout)
            .field("correlate", &self.correlate)
            .finish()
    }
}

impl std::fmt::Debug for Names {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Names")
    }
}

/// The property names, allocated once per step.
struct Names {
    index: Arc<str>,
    size: Arc<str>,
    complete: Arc<str>,
    correlation: Arc<str>,
}

/// Splits each exchange and sends every part to `S`.
#[derive(Clone, Debug)]
pub struct Split<S = BoxProcessor> {
    options: Arc<(SplitOptions, Names)>,
    inner: S,
}

impl<S> Split<S> {
    /// A split sending the parts to `inner`.
    pub fn new(options: SplitOptions, inner: S) -> Self {
        let names = Names {
            index: SPLIT_INDEX.into(),
            size: SPLIT_SIZE.into(),
            complete: SPLIT_COMPLETE.into(),
            correlation: camel_api::names::CORRELATION_ID.into(),
        };
        Split {
            options: Arc::new((options, names)),
            inner,
        }
    }
}

impl Split<BoxProcessor> {
    /// The split as a route step.
    pub fn into_processor(self) -> BoxProcessor {
        BoxProcessor::new(self).named("split")
    }
}

impl Process for Split<BoxProcessor> {
    fn process(&self, ex: Exchange) -> ProcessorFuture {
        ProcessorFuture::boxed(run(self.options.clone(), self.inner.clone(), ex))
    }
}

impl<S> Service<Exchange> for Split<S>
where
    S: Service<Exchange, Response = Exchange, Error = CamelError> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Exchange;
    type Error = CamelError;
    type Future = ProcessorFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), CamelError>> {
        // Each part waits for the inner service's readiness on its own clone.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, ex: Exchange) -> ProcessorFuture {
        ProcessorFuture::boxed(run(self.options.clone(), self.inner.clone(), ex))
    }
}

async fn run<S>(
    options: Arc<(SplitOptions, Names)>,
    inner: S,
    ex: Exchange,
) -> Result<Exchange, CamelError>
where
    S: Service<Exchange, Response = Exchange, Error = CamelError> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let (opts, names) = &*options;
    let mut parts = Parts::open(&opts.expression, &opts.delimiter, &ex, opts.streaming).await?;
    let mut cut = Cutter {
        size: parts.size(),
        index: 0,
        ahead: parts.next().await?,
        names,
        parent: opts.correlate.then(|| Value::from(ex.id.to_string())),
    };
    let mut results = Results::new(opts.strategy.clone());
    let deadline = opts.timeout.map(|t| Instant::now() + t);
    let work = async {
        if opts.parallel_limit <= 1 {
            sequential(&mut parts, &mut cut, &ex, inner, opts, &mut results).await
        } else {
            parallel(&mut parts, &mut cut, &ex, inner, opts, &mut results).await
        }
    };
    match deadline {
        None => work.await?,
        // The parts still running at the deadline are dropped with `work`.
        Some(at) => {
            if let Ok(r) = tokio::time::timeout_at(at, work).await {
                r?;
            }
        }
    }
    results.finish(ex)
}

/// Numbers the parts and looks one ahead, to know which is the last.
struct Cutter<'a> {
    size: Option<usize>,
    index: usize,
    ahead: Option<Body>,
    names: &'a Names,
    /// The split exchange's id, each part's `CamelCorrelationId` (with `correlate`).
    parent: Option<Value>,
}

impl Cutter<'_> {
    /// The next part as an exchange (a copy of `parent` with the part as its body).
    async fn next(
        &mut self,
        parts: &mut Parts,
        parent: &Exchange,
    ) -> Result<Option<(usize, Exchange)>, CamelError> {
        let Some(body) = self.ahead.take() else {
            return Ok(None);
        };
        self.ahead = parts.next().await?;
        let last = self.ahead.is_none();
        let index = self.index;
        self.index += 1;
        let mut part = parent.clone();
        part.id = ExchangeId::next();
        part.message.body = body;
        let props = &mut part.properties;
        props.set(&self.names.index, Value::from(index as u64));
        match self.size {
            Some(n) => props.set(&self.names.size, Value::from(n as u64)),
            None if last => props.set(&self.names.size, Value::from(index as u64 + 1)),
            None => {}
        }
        props.set(&self.names.complete, Value::Bool(last));
        if let Some(parent) = &self.parent {
            props.set(&self.names.correlation, parent.clone());
        }
        Ok(Some((index, part)))
    }
}

async fn sequential<S>(
    parts: &mut Parts,
    cut: &mut Cutter<'_>,
    parent: &Exchange,
    mut inner: S,
    opts: &SplitOptions,
    results: &mut Results,
) -> Result<(), CamelError>
where
    S: Service<Exchange, Response = Exchange, Error = CamelError>,
{
    while let Some((index, part)) = cut.next(parts, parent).await? {
        let outcome = match inner.ready().await {
            Ok(svc) => svc.call(part).await,
            Err(e) => Err(e),
        };
        results.record(index, outcome)?;
        if opts.stop_on_exception && results.failed() {
            break;
        }
    }
    Ok(())
}

async fn parallel<S>(
    parts: &mut Parts,
    cut: &mut Cutter<'_>,
    parent: &Exchange,
    inner: S,
    opts: &SplitOptions,
    results: &mut Results,
) -> Result<(), CamelError>
where
    S: Service<Exchange, Response = Exchange, Error = CamelError> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    // Parts run on this task, at most `parallel_limit` at a time: nothing is spawned, so
    // nothing outlives the split (a timeout drops them all).
    let mut running = FuturesUnordered::new();
    let mut more = true;
    loop {
        while more && running.len() < opts.parallel_limit {
            if opts.stop_on_exception && results.failed() {
                more = false;
                break;
            }
            match cut.next(parts, parent).await? {
                Some((index, part)) => {
                    let svc = inner.clone();
                    running.push(async move { (index, svc.oneshot(part).await) });
                }
                None => more = false,
            }
        }
        match running.next().await {
            Some((index, outcome)) => results.record(index, outcome)?,
            None => return Ok(()),
        }
    }
}
