//! The intake: the resequencer's face in the route, the last step of the main pipeline.
//!
//! It computes the exchange's key (so a bad key fails the caller), puts the exchange into
//! the bounded input channel — waiting for room, which is how backpressure reaches the
//! consumer — and answers with an acknowledgement: an empty body and the property
//! `CamelResequencerAccepted = true`. The reordered exchange continues later, on the
//! post-driver.
//!
//! Under `reject_old` the acknowledgement waits for the actor's verdict: only the actor
//! knows the watermark, so only it can say whether a number is old. A stale number is
//! then always a `RejectedOld` error to its caller, never an acknowledgement followed by a
//! silent drop. This costs a round-trip to the actor per call, and only under
//! `reject_old`.

use std::sync::{Arc, LazyLock};

use camel_api::{
    Body, CamelError, Exchange, ExchangeId, ExchangePattern, Process, ProcessorFuture,
};
use tokio::sync::mpsc::{self, error::TrySendError};
use tokio::sync::oneshot;
use tokio::time::Instant;
use tracing::warn;

use super::actor::Input;
use super::error::ResequenceError;
use super::key::Keying;
use super::names;
use super::policy::DropReason;
use super::shared::{Shared, Stat};

/// The [`Process`] behind the resequencer's `BoxProcessor`.
pub(crate) struct Intake<K: Keying> {
    pub(crate) keying: K,
    pub(crate) input: mpsc::Sender<Input<K::Key>>,
    /// Callers wait for the actor to accept (or refuse) the exchange before they are
    /// acknowledged; otherwise entering the channel is acceptance.
    pub(crate) await_verdict: bool,
    pub(crate) allow_inout: bool,
    pub(crate) shared: Arc<Shared>,
}

/// Property names as shared strings: an acknowledgement per exchange should not allocate
/// its property name each time.
static ACCEPTED: LazyLock<Arc<str>> = LazyLock::new(|| names::ACCEPTED.into());
static INOUT_WARN: LazyLock<Arc<str>> = LazyLock::new(|| names::INOUT_WARN.into());

impl<K: Keying> Intake<K> {
    fn ack(&self, exchange: &Exchange, accepted: bool) -> Exchange {
        let to = (exchange.id, exchange.pattern);
        acknowledge(to, accepted, self.allow_inout, &self.shared)
    }

    /// Sends the exchange with a verdict channel and answers with the acknowledgement once
    /// the actor accepted it, or with the actor's refusal (a refused request-reply
    /// exchange is not counted as an InOut warning: it was not accepted).
    fn after_verdict(&self, exchange: Exchange, key: K::Key) -> ProcessorFuture {
        let to = (exchange.id, exchange.pattern);
        let allow_inout = self.allow_inout;
        let shared = self.shared.clone();
        let (verdict, answer) = oneshot::channel();
        let input = Input {
            exchange,
            key,
            verdict: Some(verdict),
        };
        // Short-lived, as above: dropped before the verdict is awaited.
        let sender = self.input.clone();
        ProcessorFuture::boxed(async move {
            sender.send(input).await.map_err(|_| stopped())?;
            drop(sender);
            match answer.await {
                Ok(Ok(())) => {
                    shared.count(Stat::Accepted, 1);
                    Ok(acknowledge(to, true, allow_inout, &shared))
                }
                Ok(Err(refusal)) => Err(refusal.into()),
                // The actor answers as soon as it takes an exchange; gone without an
                // answer, it never took this one.
                Err(_) => Err(stopped()),
            }
        })
    }
}

/// The acknowledgement for the exchange `to` (id and pattern): built from these alone so
/// it can also be built after the exchange moved into the channel.
fn acknowledge(
    (id, pattern): (ExchangeId, ExchangePattern),
    accepted: bool,
    allow_inout: bool,
    shared: &Shared,
) -> Exchange {
    let mut ack = Exchange::new(Body::Empty);
    ack.id = id;
    ack.pattern = pattern;
    ack.properties.insert(ACCEPTED.clone(), accepted);
    if pattern == ExchangePattern::InOut && !allow_inout {
        shared.inout_warnings.increment(1);
        if shared.inout_warning_due(Instant::now()) {
            warn!(
                route_id = %shared.route_id,
                step = %shared.step_name,
                "request-reply exchange reached a resequencer: the caller gets an acknowledgement, not the route's reply (set allow_inout to silence)"
            );
        }
        ack.properties.insert(INOUT_WARN.clone(), true);
    }
    ack
}

impl<K: Keying> Process for Intake<K> {
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        let key = match self.keying.key(&exchange) {
            Ok(Some(key)) => key,
            Ok(None) => {
                self.shared.dropped(DropReason::Invalid);
                return ProcessorFuture::ready(Ok(self.ack(&exchange, false)));
            }
            Err(e) => return ProcessorFuture::ready(Err(e)),
        };
        if self.await_verdict {
            return self.after_verdict(exchange, key);
        }
        let ack = self.ack(&exchange, true);
        let input = Input {
            exchange,
            key,
            verdict: None,
        };
        match self.input.try_send(input) {
            Ok(()) => {
                self.shared.count(Stat::Accepted, 1);
                ProcessorFuture::ready(Ok(ack))
            }
            Err(TrySendError::Closed(_)) => ProcessorFuture::ready(Err(stopped())),
            Err(TrySendError::Full(item)) => {
                // A short-lived clone: the actor closes the channel from its side, so this
                // sender cannot keep it open past a shutdown.
                let input = self.input.clone();
                let shared = self.shared.clone();
                ProcessorFuture::boxed(async move {
                    input.send(item).await.map_err(|_| stopped())?;
                    shared.count(Stat::Accepted, 1);
                    Ok(ack)
                })
            }
        }
    }
}

fn stopped() -> CamelError {
    ResequenceError::Stopped.into()
}
