//! The shared handle of one mock endpoint: records exchanges, holds expectations.

use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use camel_api::{Body, BoxProcessor, CamelError, Endpoint, Exchange, Value};
use tokio::sync::Notify;
use tokio::time::Instant;

use super::expectations::Expectations;
use super::MockAssertionError;

/// One `mock:NAME` endpoint. Cheap to clone; clones share everything.
#[derive(Clone, Debug)]
pub struct MockEndpoint {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    name: String,
    uri: String,
    state: Mutex<State>,
    /// Woken on every arrival and every reset, so waiting asserts re-check.
    arrived: Notify,
    log: AtomicBool,
}

#[derive(Default)]
struct State {
    received: Vec<Exchange>,
    expectations: Expectations,
    /// What the mock does with each exchange after recording it (Camel's
    /// `whenAnyExchangeReceived`): a canned reply or a failure. None hands it back as is.
    reply: Option<Reply>,
}

/// A mock's behaviour on receipt: changes the exchange or fails it.
type Reply = Arc<dyn Fn(Exchange) -> Result<Exchange, CamelError> + Send + Sync>;

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("received", &self.received.len())
            .field("expectations", &self.expectations)
            .field("reply", &self.reply.is_some())
            .finish()
    }
}

impl MockEndpoint {
    pub(super) fn new(name: &str) -> Self {
        MockEndpoint {
            inner: Arc::new(Inner {
                name: name.to_string(),
                uri: format!("mock:{name}"),
                state: Mutex::default(),
                arrived: Notify::new(),
                log: AtomicBool::new(false),
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The name (`out` for `mock:out`).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Expects exactly `count` messages.
    pub fn expected_message_count(&self, count: usize) {
        self.state().expectations.count = Some(count);
    }

    /// Expects at least `count` messages.
    pub fn expected_minimum_message_count(&self, count: usize) {
        self.state().expectations.minimum = Some(count);
    }

    /// Expects exactly these bodies, in this order (and so this many messages, unless
    /// [`expected_message_count`](Self::expected_message_count) says otherwise).
    /// Bodies compare by their bytes: text `"a"` matches bytes `b"a"`.
    pub fn expected_bodies_received<B: Into<Body>>(&self, bodies: impl IntoIterator<Item = B>) {
        self.state().expectations.bodies = Some(bodies.into_iter().map(Into::into).collect());
    }

    /// Expects every received message to carry header `name` equal to `value` (compared
    /// as values, then as text, so `7` matches `"7"`). Can be called for several headers.
    pub fn expected_header_received(&self, name: &str, value: impl Into<Value>) {
        let value = value.into();
        let headers = &mut self.state().expectations.headers;
        match headers.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value,
            None => headers.push((name.to_string(), value)),
        }
    }

    /// Runs `reply` on every exchange after it is recorded (Camel's
    /// `whenAnyExchangeReceived`): what it returns goes on down the route, and an error
    /// fails the exchange there, so a test can stand a mock in for a service that answers
    /// or one that is down. Replaces an earlier reply; [`reset`](Self::reset) clears it.
    pub fn when_any_exchange_received<F>(&self, reply: F)
    where
        F: Fn(Exchange) -> Result<Exchange, CamelError> + Send + Sync + 'static,
    {
        self.state().reply = Some(Arc::new(reply));
    }

    /// The exchanges received so far, in arrival order.
    pub fn received(&self) -> Vec<Exchange> {
        self.state().received.clone()
    }

    /// The number of exchanges received so far.
    pub fn received_count(&self) -> usize {
        self.state().received.len()
    }

    /// Forgets the received exchanges and the expectations.
    pub fn reset(&self) {
        *self.state() = State::default();
        self.inner.arrived.notify_waiters();
    }

    /// Logs (at `info`) every exchange received from now on.
    pub fn set_log(&self, log: bool) {
        self.inner.log.store(log, Ordering::Relaxed);
    }

    /// Waits until as many messages as the expectations need have arrived (or `timeout`
    /// passes), then checks every expectation. Wakes on arrivals; never polls.
    pub async fn assert_is_satisfied(&self, timeout: Duration) -> Result<(), MockAssertionError> {
        let deadline = Instant::now() + timeout;
        loop {
            let mut arrival = pin!(self.inner.arrived.notified());
            arrival.as_mut().enable();
            {
                let state = self.state();
                if state.received.len() >= state.expectations.awaited() {
                    break;
                }
            }
            if tokio::time::timeout_at(deadline, arrival).await.is_err() {
                break;
            }
        }
        let state = self.state();
        state.expectations.check(&self.inner.name, &state.received)
    }

    fn record(&self, exchange: &Exchange) -> Option<Reply> {
        if self.inner.log.load(Ordering::Relaxed) {
            tracing::info!(
                endpoint = %self.inner.uri,
                exchange_id = %exchange.id,
                body = ?exchange.message.body,
                "mock received"
            );
        }
        let reply = {
            let mut state = self.state();
            state.received.push(exchange.clone());
            state.reply.clone()
        };
        self.inner.arrived.notify_waiters();
        reply
    }
}

impl Endpoint for MockEndpoint {
    fn uri(&self) -> &str {
        &self.inner.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        let endpoint = self.clone();
        Ok(
            BoxProcessor::sync(move |exchange: Exchange| match endpoint.record(&exchange) {
                Some(reply) => reply(exchange),
                None => Ok(exchange),
            })
            .named("mock"),
        )
    }
}
