//! `direct:NAME` — a synchronous call into another route.
//!
//! A producer sending to `direct:orders` runs the pipeline of the route that consumes
//! `direct:orders` **in the caller's own task** and returns that route's final exchange.
//! There is no queue and no worker in between, so 64 concurrent callers run 64 pipelines
//! concurrently; nothing serialises them (a peer's `direct` consumer handled one exchange
//! at a time, so callers queued behind each other).
//!
//! Each [`DirectComponent`] owns a registry of names → the attached consumer's
//! [`ConsumerContext`]. A consumer registers when it starts running and unregisters when
//! it is cancelled (or dropped). A producer looks its name's slot up once, when the
//! endpoint is built, and on every call reads the slot with one atomic load: no lock, and
//! nothing held across an `.await`.
//!
//! # URI options
//!
//! | Option | Default | Meaning |
//! |---|---|---|
//! | `block` | `true` | With no consumer attached, wait up to `timeout` for one (a stopping context ends the wait at once: no route starts during a stop). |
//! | `timeout` | `30000` (ms) | How long a blocked producer waits for a consumer. |
//! | `fail_if_no_consumers` | `true` | With no consumer (after waiting), fail with `CamelError::NoConsumer`; when `false`, log a warning and return the exchange unchanged. |
//!
//! A name takes one consumer at a time: a second route consuming the same name fails to
//! start while the first one runs.
//!
//! ```
//! use camel_api::{BoxProcessor, Body, Component, ConsumerContext, EndpointUri, Exchange};
//! use camel_components::{BareContext, DirectComponent};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let direct = DirectComponent::new();
//! let endpoint = direct.endpoint(EndpointUri::parse("direct:greet").unwrap(), &BareContext).unwrap();
//! let pipeline = BoxProcessor::sync(|mut ex: Exchange| {
//!     ex.message.body = Body::from("hello");
//!     Ok(ex)
//! });
//! let ctx = ConsumerContext::for_pipeline("greeter", pipeline);
//! tokio::spawn(endpoint.consumer().unwrap().run(ctx.clone()));
//!
//! let out = endpoint.producer().unwrap().process(Exchange::default()).await.unwrap();
//! assert_eq!(out.message.body.as_text().as_deref(), Some("hello"));
//! ctx.cancellation().cancel();
//! # }
//! ```

use std::collections::HashMap;
use std::fmt;
use std::pin::pin;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use async_trait::async_trait;
use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Consumer, ConsumerContext,
    ContextChange, Endpoint, EndpointUri, Exchange, Process, ProcessorFuture,
};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

const OPTIONS: &[&str] = &["block", "timeout", "fail_if_no_consumers"];
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(30_000);

/// The `direct` component: synchronous calls between routes of one context.
///
/// Cloning shares the registry, so every clone sees the same consumers.
#[derive(Clone, Debug, Default)]
pub struct DirectComponent {
    registry: Arc<Registry>,
}

impl DirectComponent {
    /// A component with an empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// True while a consumer is attached to `direct:name`.
    pub fn has_consumer(&self, name: &str) -> bool {
        self.registry.slot(name).consumer.load().is_some()
    }
}

impl Component for DirectComponent {
    fn scheme(&self) -> &str {
        "direct"
    }

    fn context_changed(&self, change: ContextChange) {
        let mut stopping = self
            .registry
            .stopping
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match change {
            ContextChange::Stopping => stopping.cancel(),
            // A fresh token: the cancelled one stays cancelled for the waits it ended.
            ContextChange::Starting if stopping.is_cancelled() => {
                *stopping = CancellationToken::new();
            }
            _ => {}
        }
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let name = crate::endpoint_name(&uri, "direct:orders")?;
        let block = uri.parameters.take_bool("block")?.unwrap_or(true);
        let timeout = uri
            .parameters
            .take_duration("timeout")?
            .unwrap_or(DEFAULT_TIMEOUT);
        let fail_if_no_consumers = uri
            .parameters
            .take_bool("fail_if_no_consumers")?
            .unwrap_or(true);
        let raw = uri.raw();
        uri.parameters.finish(OPTIONS)?;
        Ok(Arc::new(DirectEndpoint {
            uri: raw,
            address: format!("direct:{name}").into(),
            slot: self.registry.slot(&name),
            registry: self.registry.clone(),
            wait: block.then_some(timeout),
            fail_if_no_consumers,
        }))
    }
}

/// Name → slot. Slots are created on first use and kept: a context names few endpoints,
/// and a producer holds its slot for its whole life.
#[derive(Debug, Default)]
struct Registry {
    slots: RwLock<HashMap<String, Arc<Slot>>>,
    /// Cancelled while the context stops: blocked producers give up, since no consumer
    /// can attach before the stop ends.
    stopping: Mutex<CancellationToken>,
}

impl Registry {
    fn stopping(&self) -> CancellationToken {
        self.stopping
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn slot(&self, name: &str) -> Arc<Slot> {
        let read = self.slots.read().unwrap_or_else(PoisonError::into_inner);
        if let Some(slot) = read.get(name) {
            return slot.clone();
        }
        drop(read);
        let mut write = self.slots.write().unwrap_or_else(PoisonError::into_inner);
        write.entry(name.to_string()).or_default().clone()
    }
}

/// The consumer attached to one name, if any.
#[derive(Debug, Default)]
struct Slot {
    /// Read lock-free by every producer call.
    consumer: ArcSwapOption<ConsumerContext>,
    /// Wakes producers blocked waiting for a consumer.
    attached: Notify,
    /// Serialises attach/detach (rare) so the "one consumer" check cannot race.
    registration: Mutex<()>,
}

impl Slot {
    fn attach(&self, uri: &str, ctx: &Arc<ConsumerContext>) -> Result<(), CamelError> {
        let _lock = self
            .registration
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(current) = self.consumer.load_full() {
            // A cancelled consumer is on its way out (a restart raced with its
            // shutdown); the new one takes over.
            if !current.is_cancelled() {
                return Err(CamelError::invalid_uri(
                    uri,
                    format!(
                        "route `{}` already consumes this endpoint; a direct endpoint takes one consumer",
                        current.route_id()
                    ),
                ));
            }
        }
        self.consumer.store(Some(ctx.clone()));
        self.attached.notify_waiters();
        Ok(())
    }

    fn detach(&self, ctx: &Arc<ConsumerContext>) {
        let _lock = self
            .registration
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if self
            .consumer
            .load()
            .as_ref()
            .is_some_and(|current| Arc::ptr_eq(current, ctx))
        {
            self.consumer.store(None);
        }
    }

    /// The consumer, once one attaches within `limit` and before `stopping` fires.
    async fn wait_for_consumer(
        &self,
        limit: Duration,
        stopping: CancellationToken,
    ) -> Option<Arc<ConsumerContext>> {
        let wait = async {
            loop {
                let mut notified = pin!(self.attached.notified());
                notified.as_mut().enable();
                if let Some(ctx) = self.consumer.load_full() {
                    return ctx;
                }
                notified.await;
            }
        };
        tokio::select! {
            biased;
            consumer = tokio::time::timeout(limit, wait) => consumer.ok(),
            () = stopping.cancelled() => self.consumer.load_full(),
        }
    }
}

/// One `direct:NAME` endpoint with its options.
#[derive(Debug)]
struct DirectEndpoint {
    uri: Arc<str>,
    /// `direct:NAME`, without options: what messages name.
    address: Arc<str>,
    slot: Arc<Slot>,
    registry: Arc<Registry>,
    /// `Some(timeout)` when producers block waiting for a consumer.
    wait: Option<Duration>,
    fail_if_no_consumers: bool,
}

impl Endpoint for DirectEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Ok(BoxProcessor::new(DirectProducer {
            uri: self.address.clone(),
            slot: self.slot.clone(),
            registry: self.registry.clone(),
            wait: self.wait,
            fail_if_no_consumers: self.fail_if_no_consumers,
        })
        .named("direct"))
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        Ok(Box::new(DirectConsumer {
            uri: self.uri.clone(),
            slot: self.slot.clone(),
        }))
    }
}

struct DirectProducer {
    uri: Arc<str>,
    slot: Arc<Slot>,
    registry: Arc<Registry>,
    wait: Option<Duration>,
    fail_if_no_consumers: bool,
}

impl Process for DirectProducer {
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        if let Some(consumer) = &*self.slot.consumer.load() {
            return consumer.process_nested(exchange);
        }
        let slot = self.slot.clone();
        let uri = self.uri.clone();
        let wait = self.wait.map(|limit| (limit, self.registry.stopping()));
        let fail = self.fail_if_no_consumers;
        ProcessorFuture::boxed(async move {
            let consumer = match wait {
                Some((limit, stopping)) => slot.wait_for_consumer(limit, stopping).await,
                None => None,
            };
            match consumer {
                Some(consumer) => consumer.send_nested(exchange).await,
                None if fail => Err(CamelError::NoConsumer { uri }),
                None => {
                    tracing::warn!(uri = %uri, exchange_id = %exchange.id, "no consumer attached; exchange passed through");
                    Ok(exchange)
                }
            }
        })
    }
}

/// Attaches the route to its name until cancelled.
struct DirectConsumer {
    uri: Arc<str>,
    slot: Arc<Slot>,
}

impl fmt::Debug for DirectConsumer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DirectConsumer")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

/// Detaches on drop, so an aborted consumer task frees its name too.
struct Attachment<'a> {
    slot: &'a Slot,
    ctx: Arc<ConsumerContext>,
}

impl Drop for Attachment<'_> {
    fn drop(&mut self) {
        self.slot.detach(&self.ctx);
    }
}

#[async_trait]
impl Consumer for DirectConsumer {
    async fn run(self: Box<Self>, ctx: ConsumerContext) -> Result<(), CamelError> {
        let shared = Arc::new(ctx.clone());
        self.slot.attach(&self.uri, &shared)?;
        let _attachment = Attachment {
            slot: &self.slot,
            ctx: shared,
        };
        tracing::debug!(uri = %self.uri, route_id = ctx.route_id(), "direct consumer attached");
        ctx.cancelled().await;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
