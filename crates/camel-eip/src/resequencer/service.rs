//! The intake: the resequencer's face in the route, the last step of the main pipeline.
//!
//! It computes the exchange's key (so a bad key fails the caller), puts the exchange into
//! the bounded input channel — waiting for room, which is how backpressure reaches the
//! consumer — and answers with an acknowledgement: an empty body and the property
//! `CamelResequencerAccepted = true`. The reordered exchange continues later, on the
//! post-driver.

use std::sync::{Arc, LazyLock};

use camel_api::{Body, CamelError, Exchange, ExchangePattern, Process, ProcessorFuture};
use tokio::sync::mpsc::{self, error::TrySendError};
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
    pub(crate) allow_inout: bool,
    pub(crate) shared: Arc<Shared>,
}

/// Property names as shared strings: an acknowledgement per exchange should not allocate
/// its property name each time.
static ACCEPTED: LazyLock<Arc<str>> = LazyLock::new(|| names::ACCEPTED.into());
static INOUT_WARN: LazyLock<Arc<str>> = LazyLock::new(|| names::INOUT_WARN.into());

impl<K: Keying> Intake<K> {
    fn ack(&self, exchange: &Exchange, accepted: bool) -> Exchange {
        let mut ack = Exchange::new(Body::Empty);
        ack.id = exchange.id;
        ack.pattern = exchange.pattern;
        ack.properties.insert(ACCEPTED.clone(), accepted);
        if exchange.pattern == ExchangePattern::InOut && !self.allow_inout {
            self.shared.inout_warnings.increment(1);
            if self.shared.inout_warning_due(Instant::now()) {
                warn!(
                    route_id = %self.shared.route_id,
                    step = %self.shared.step_name,
                    "request-reply exchange reached a resequencer: the caller gets an acknowledgement, not the route's reply (set allow_inout to silence)"
                );
            }
            ack.properties.insert(INOUT_WARN.clone(), true);
        }
        ack
    }
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
        let ack = self.ack(&exchange, true);
        match self.input.try_send((exchange, key)) {
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
