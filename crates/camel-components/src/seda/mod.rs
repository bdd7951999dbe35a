//! `seda:NAME` — an in-memory bounded queue between routes.
//!
//! Producers of a name put exchanges on its queue; the consumers of the name (one route's
//! `concurrent_consumers` tasks, or several routes competing) take them and run their
//! route. An InOnly producer returns as soon as its exchange is queued; an InOut producer
//! waits for the consuming route's result (Camel's `wait_for_task_to_complete`).
//!
//! The queue belongs to the [`SedaComponent`], not to a route: exchanges queued while the
//! consuming route is stopped wait for it to start again. What a queue still holds when
//! its context stops is listed in the context's shutdown report (it is memory only: a
//! process that exits loses it).
//!
//! # URI options
//!
//! | Option | Default | Meaning |
//! |---|---|---|
//! | `size` | `1000` | The queue's bound. Set by the first endpoint of a name; a later endpoint asking for a different size is an error. |
//! | `concurrent_consumers` | `1` | Consumer tasks taking from the queue for this route. |
//! | `block_when_full` | `false` | On a full queue, wait for room (`true`) or refuse at once with `CamelError::RetryAfter` (`false`). |
//! | `offer_timeout` | `0` (ms) | With `block_when_full`, how long to wait for room; `0` waits as long as it takes. |
//! | `wait_for_task_to_complete` | `IfReplyExpected` | `Always`, `Never`, or `IfReplyExpected` (wait for the result of InOut exchanges). |
//! | `timeout` | `30000` (ms) | How long a producer waits for the result; `0` waits as long as it takes. |
//!
//! ```
//! use camel_api::{BoxProcessor, Component, ConsumerContext, EndpointUri, Exchange};
//! use camel_components::{BareContext, SedaComponent};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let seda = SedaComponent::new();
//! let uri = EndpointUri::parse("seda:jobs?size=100").unwrap();
//! let endpoint = seda.endpoint(uri, &BareContext).unwrap();
//! endpoint.producer().unwrap().process(Exchange::new("job 1")).await.unwrap();
//! assert_eq!(seda.pending("jobs"), Some(1));
//!
//! let ctx = ConsumerContext::for_pipeline("worker", BoxProcessor::identity());
//! let worker = tokio::spawn(endpoint.consumer().unwrap().run(ctx.clone()));
//! ctx.stats().wait_for(1).await;
//! ctx.cancellation().cancel();
//! worker.await.unwrap().unwrap();
//! # }
//! ```

mod consumer;
mod producer;
mod queue;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use camel_api::{
    BoxProcessor, CamelError, Component, ComponentContext, Consumer, Endpoint, EndpointUri,
};

use self::queue::SedaQueue;

const OPTIONS: &[&str] = &[
    "size",
    "concurrent_consumers",
    "block_when_full",
    "offer_timeout",
    "wait_for_task_to_complete",
    "timeout",
];
const DEFAULT_SIZE: usize = 1000;
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(30_000);

/// The `seda` component: owns one bounded queue per name.
///
/// Cloning shares the queues.
#[derive(Clone, Debug, Default)]
pub struct SedaComponent {
    queues: Arc<Mutex<HashMap<String, Arc<SedaQueue>>>>,
}

impl SedaComponent {
    /// A component without queues; each is created by the first endpoint naming it.
    pub fn new() -> Self {
        Self::default()
    }

    /// Exchanges waiting on the queue `name`, or `None` when no endpoint created it.
    pub fn pending(&self, name: &str) -> Option<usize> {
        self.lock().get(name).map(|q| q.len())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<SedaQueue>>> {
        self.queues.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn queue(
        &self,
        uri: &EndpointUri,
        name: &str,
        size: Option<usize>,
    ) -> Result<Arc<SedaQueue>, CamelError> {
        let mut queues = self.lock();
        if let Some(queue) = queues.get(name) {
            return match size {
                Some(size) if size != queue.capacity() => Err(CamelError::invalid_uri(
                    uri.raw(),
                    format!(
                        "queue `{name}` already exists with size {}, not {size}",
                        queue.capacity()
                    ),
                )),
                _ => Ok(queue.clone()),
            };
        }
        let queue = Arc::new(SedaQueue::new(size.unwrap_or(DEFAULT_SIZE)));
        queues.insert(name.to_string(), queue.clone());
        Ok(queue)
    }
}

/// When a producer waits for the consuming route's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WaitForResult {
    Always,
    Never,
    IfReplyExpected,
}

impl Component for SedaComponent {
    fn scheme(&self) -> &str {
        "seda"
    }

    fn left_at_stop(&self) -> Vec<(String, usize)> {
        let mut left: Vec<_> = self
            .lock()
            .iter()
            .map(|(name, queue)| (format!("seda:{name}"), queue.len()))
            .filter(|(_, n)| *n > 0)
            .collect();
        left.sort();
        left
    }

    fn endpoint(
        &self,
        mut uri: EndpointUri,
        _ctx: &dyn ComponentContext,
    ) -> Result<Arc<dyn Endpoint>, CamelError> {
        let name = crate::endpoint_name(&uri, "seda:jobs")?;
        let p = &mut uri.parameters;
        let size = p.take::<usize>("size")?;
        let consumers = p.take::<usize>("concurrent_consumers")?.unwrap_or(1);
        let block_when_full = p.take_bool("block_when_full")?.unwrap_or(false);
        let offer_timeout = p.take_duration("offer_timeout")?.filter(|d| !d.is_zero());
        let wait = match p.take_choice(
            "wait_for_task_to_complete",
            &["always", "never", "if_reply_expected"],
        )? {
            Some("always") => WaitForResult::Always,
            Some("never") => WaitForResult::Never,
            _ => WaitForResult::IfReplyExpected,
        };
        let timeout = match p.take_duration("timeout")? {
            None => Some(DEFAULT_TIMEOUT),
            Some(d) if d.is_zero() => None,
            Some(d) => Some(d),
        };
        if size == Some(0) || consumers == 0 {
            return Err(CamelError::invalid_uri(
                uri.raw(),
                "`size` and `concurrent_consumers` must be at least 1",
            ));
        }
        let queue = self.queue(&uri, &name, size)?;
        let raw = uri.raw();
        uri.parameters.finish(OPTIONS)?;
        Ok(Arc::new(SedaEndpoint {
            uri: raw,
            queue,
            consumers,
            block_when_full,
            offer_timeout,
            wait,
            timeout,
        }))
    }
}

/// One `seda:NAME` endpoint with its options.
#[derive(Debug)]
struct SedaEndpoint {
    uri: Arc<str>,
    queue: Arc<SedaQueue>,
    consumers: usize,
    block_when_full: bool,
    /// `None`: a blocked offer waits as long as it takes.
    offer_timeout: Option<Duration>,
    wait: WaitForResult,
    /// `None`: a producer waits for the result as long as it takes.
    timeout: Option<Duration>,
}

impl Endpoint for SedaEndpoint {
    fn uri(&self) -> &str {
        &self.uri
    }

    fn producer(&self) -> Result<BoxProcessor, CamelError> {
        Ok(BoxProcessor::new(producer::SedaProducer::new(self)).named("seda"))
    }

    fn poller(&self) -> Result<Arc<dyn camel_api::Poller>, CamelError> {
        Ok(Arc::new(consumer::SedaPoller::new(
            self.uri.clone(),
            self.queue.clone(),
        )))
    }

    fn consumer(&self) -> Result<Box<dyn Consumer>, CamelError> {
        Ok(Box::new(consumer::SedaConsumer::new(
            self.uri.clone(),
            self.queue.clone(),
            self.consumers,
        )))
    }
}

#[cfg(test)]
mod tests;
