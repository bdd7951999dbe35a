//! The load balancer as a route step and as a tower layer.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};

use camel_api::{error_kind, BoxProcessor, CamelError, Exchange, Process, ProcessorFuture};
use tower::{Layer, Service};

use super::policy::{BalanceError, Chooser, FailoverPolicy, Policy};
use crate::layer::EipFuture;

/// Sends each exchange to one of its targets (or, with [`Policy::Topic`], to all).
/// Clones share the policy's state.
#[derive(Debug, Clone)]
pub struct LoadBalance {
    targets: Arc<[BoxProcessor]>,
    chooser: Arc<Chooser>,
}

impl LoadBalance {
    /// A balancer over `targets`.
    pub fn new(targets: Vec<BoxProcessor>, policy: Policy) -> Result<Self, BalanceError> {
        let chooser = Chooser::new(policy, targets.len())?;
        Ok(LoadBalance {
            targets: targets.into(),
            chooser: Arc::new(chooser),
        })
    }

    /// The balancer as a route step.
    pub fn into_processor(self) -> BoxProcessor {
        BoxProcessor::new(self).named("load_balance")
    }

    async fn topic(self, ex: Exchange) -> Result<Exchange, CamelError> {
        for target in self.targets.iter() {
            target.process(ex.clone()).await?;
        }
        Ok(ex)
    }

    async fn failover(self, ex: Exchange) -> Result<Exchange, CamelError> {
        let Policy::Failover(options) = &self.chooser.policy else {
            unreachable!("failover is only called for the failover policy")
        };
        let n = self.targets.len();
        let wraps = options.round_robin || options.sticky;
        let mut index = if options.sticky {
            self.chooser.last_good.load(Ordering::Relaxed) % n
        } else if options.round_robin {
            self.chooser.next_in_turn(n)
        } else {
            0
        };
        let mut failovers: u64 = 0;
        loop {
            let error = match self.targets[index].process(ex.clone()).await {
                Ok(out) => {
                    self.chooser.last_good.store(index, Ordering::Relaxed);
                    return Ok(out);
                }
                Err(e) => e,
            };
            if !fails_over(options, &error, failovers) {
                return Err(error);
            }
            failovers += 1;
            index += 1;
            if index == n {
                if !wraps {
                    return Err(error);
                }
                index = 0;
                // A round of targets failing at once must not hold the runtime thread
                // when failover never gives up.
                tokio::task::yield_now().await;
            }
            tracing::debug!(error = %error, target = index, failovers, "load balancer failing over");
        }
    }
}

/// Whether `error`, after `failovers` failovers, moves the exchange to the next target.
fn fails_over(options: &FailoverPolicy, error: &CamelError, failovers: u64) -> bool {
    if let Some(max) = options.maximum_failover_attempts {
        if failovers >= u64::from(max) {
            return false;
        }
    }
    options.exceptions.is_empty()
        || options
            .exceptions
            .iter()
            .any(|k| error_kind::distance(error, k).is_some())
}

impl Process for LoadBalance {
    fn process(&self, ex: Exchange) -> ProcessorFuture {
        match &self.chooser.policy {
            Policy::Topic => ProcessorFuture::boxed(self.clone().topic(ex)),
            Policy::Failover(_) => ProcessorFuture::boxed(self.clone().failover(ex)),
            _ => match self.chooser.choose(&ex, self.targets.len()) {
                Ok(i) => self.targets[i].process(ex),
                Err(e) => ProcessorFuture::ready(Err(e)),
            },
        }
    }
}

/// Balances each exchange over the targets, then calls `S` with the result.
#[derive(Debug, Clone)]
pub struct LoadBalanceService<S> {
    balance: LoadBalance,
    inner: S,
}

impl<S> Service<Exchange> for LoadBalanceService<S>
where
    S: Service<Exchange, Response = Exchange, Error = CamelError> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Exchange;
    type Error = CamelError;
    type Future = EipFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), CamelError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, ex: Exchange) -> Self::Future {
        match self.balance.process(ex) {
            // A synchronous target: the inner service is called at once, unboxed.
            ProcessorFuture::Ready(Some(Ok(ex))) => EipFuture::inner(self.inner.call(ex)),
            ProcessorFuture::Ready(Some(Err(e))) => EipFuture::ready(Err(e)),
            pending => {
                let mut ready = crate::layer::take_ready(&mut self.inner);
                EipFuture::step(ProcessorFuture::boxed(async move {
                    let ex = pending.await?;
                    ready.call(ex).await
                }))
            }
        }
    }
}

/// Wraps a service in a [`LoadBalanceService`]: the chosen target runs first, the inner
/// service gets its result. Services made by one layer share the policy's state.
#[derive(Debug, Clone)]
pub struct LoadBalanceLayer {
    balance: LoadBalance,
}

impl LoadBalanceLayer {
    /// A layer balancing over `targets`.
    pub fn new(targets: Vec<BoxProcessor>, policy: Policy) -> Result<Self, BalanceError> {
        Ok(LoadBalanceLayer {
            balance: LoadBalance::new(targets, policy)?,
        })
    }
}

impl<S> Layer<S> for LoadBalanceLayer {
    type Service = LoadBalanceService<S>;

    fn layer(&self, inner: S) -> LoadBalanceService<S> {
        LoadBalanceService {
            balance: self.balance.clone(),
            inner,
        }
    }
}
