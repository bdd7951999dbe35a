//! The sink producer: the `to:` step that hands an exchange to its destination's
//! batcher and resolves when that exchange's own entry has its answer.
//!
//! A per-entry failure is this exchange's error; retrying belongs to the route's error
//! handler or the outbox relay. So the idempotency key must not change between tries:
//! it is the `idempotency_key` expression when the endpoint sets one, else the outbox
//! message (`CamelOutboxName` and `CamelOutboxId`, set by the outbox relay, the same for
//! every attempt of a row), else the exchange id (which a redelivery of the same exchange
//! keeps).
//!
//! The ordering group is the `group_key` expression when the endpoint sets one, else the
//! `CamelOutboxGroupKey` header: a route relaying an outbox keeps each group's order at
//! the destination (an SQS FIFO `MessageGroupId`, a Pub/Sub ordering key, the NATS
//! `CamelGroupKey` header) without configuring anything.

use std::fmt;
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use camel_api::{
    BoxExpression, BoxProcessor, CamelError, Exchange, Process, ProcessorFuture, Value,
};

use crate::batcher::{
    AbandonGuard, Answer, BatchConfig, BatcherHandle, BatcherKey, BatcherRegistry, SinkError,
    Submit,
};
use crate::codec::{BatchCodec, EntryMeta, Receipt};

/// Header carrying the outbox row id; with the outbox name, the default idempotency key.
pub const OUTBOX_ID_HEADER: &str = "CamelOutboxId";
/// Header carrying the relayed outbox's name.
pub const OUTBOX_NAME_HEADER: &str = "CamelOutboxName";
/// Header carrying the outbox group key; the default ordering group.
pub const OUTBOX_GROUP_KEY_HEADER: &str = "CamelOutboxGroupKey";

/// How a producer derives an entry's group, tenant and idempotency key from an exchange.
#[derive(Clone, Debug)]
pub struct SinkOptions {
    /// Ordering group (`group_key`); a null value: no group. `None`: the
    /// `CamelOutboxGroupKey` header, if any.
    pub group_key: Option<BoxExpression>,
    /// Tenant for round-robin fairness (`tenant`); default: `default_tenant`.
    pub tenant: Option<BoxExpression>,
    /// Explicit idempotency key (`idempotency_key`); default: outbox id, else exchange id.
    pub idempotency_key: Option<BoxExpression>,
    /// The tenant when no expression is given (the route id).
    pub default_tenant: Arc<str>,
}

impl Default for SinkOptions {
    fn default() -> Self {
        SinkOptions {
            group_key: None,
            tenant: None,
            idempotency_key: None,
            default_tenant: "default".into(),
        }
    }
}

/// A batching sink producer for codec `C`. Cloning shares everything.
pub struct SinkProducer<C: BatchCodec> {
    inner: Arc<Inner<C>>,
}

struct Inner<C: BatchCodec> {
    codec: Arc<C>,
    config: BatchConfig,
    options: SinkOptions,
    registry: Arc<BatcherRegistry>,
    key: BatcherKey,
    label: Arc<str>,
    max_entry_bytes: usize,
    cached: ArcSwapOption<BatcherHandle>,
}

impl<C: BatchCodec> Clone for SinkProducer<C> {
    fn clone(&self) -> Self {
        SinkProducer {
            inner: self.inner.clone(),
        }
    }
}

impl<C: BatchCodec> fmt::Debug for SinkProducer<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SinkProducer")
            .field("sink", &self.inner.label)
            .finish()
    }
}

impl<C: BatchCodec> SinkProducer<C> {
    /// A producer sending through `codec`, using the batcher of its destination in
    /// `registry` (started by the first delivery).
    pub fn new(
        codec: C,
        config: BatchConfig,
        options: SinkOptions,
        registry: Arc<BatcherRegistry>,
    ) -> Self {
        let key = BatcherKey::of(&codec, &config);
        let label: Arc<str> = key.label(&codec.destination()).into();
        let max_entry_bytes = codec
            .limits()
            .max_entry_bytes
            .min(config.bytes_per_request(&codec.limits()));
        SinkProducer {
            inner: Arc::new(Inner {
                codec: Arc::new(codec),
                config,
                options,
                registry,
                key,
                label,
                max_entry_bytes,
                cached: ArcSwapOption::empty(),
            }),
        }
    }

    /// The label used in logs and metrics (`codec:destination#digest`).
    pub fn label(&self) -> &str {
        &self.inner.label
    }

    /// The registry key of this producer's batcher.
    pub fn key(&self) -> &BatcherKey {
        &self.inner.key
    }

    /// The codec.
    pub fn codec(&self) -> &Arc<C> {
        &self.inner.codec
    }

    /// This producer as a route step.
    pub fn into_processor(self) -> BoxProcessor {
        BoxProcessor::new(self).named("batching-sink")
    }

    /// Delivers one exchange; resolves with its entry's result.
    pub async fn deliver(&self, exchange: &Exchange) -> Result<(), CamelError> {
        self.deliver_with_receipt(exchange).await.map(drop)
    }

    /// Delivers one exchange; resolves with its entry's result and what the destination
    /// said about it (the route step sets that on the exchange as headers).
    pub async fn deliver_with_receipt(&self, exchange: &Exchange) -> Result<Receipt, CamelError> {
        let inner = &*self.inner;
        let meta = EntryMeta {
            group: self.group(exchange)?,
            idempotency_key: self.idempotency_key(exchange)?,
        };
        let mut entry = inner.codec.encode(exchange, meta)?;
        if entry.size > inner.max_entry_bytes {
            return Err(SinkError::EntryTooLarge {
                sink: inner.label.to_string(),
                size: entry.size,
                limit: inner.max_entry_bytes,
            }
            .into());
        }
        let tenant = self.tenant(exchange)?;
        // A batcher found stopping is replaced; a few rounds cover the race where the
        // replacement itself is stopping (a registry shutdown).
        for _ in 0..3 {
            let Some(handle) = self.handle() else {
                break;
            };
            match handle.submit(entry, tenant.clone()) {
                Submit::Queued(answer) => {
                    let guard = AbandonGuard::new(handle.shared.clone());
                    let answer = answer.await;
                    guard.disarm();
                    match answer {
                        Ok(Answer::Done(result)) => return result,
                        Ok(Answer::Requeue(back)) => {
                            entry = back;
                            inner.cached.store(None);
                        }
                        Err(_) => {
                            return Err(SinkError::BatcherGone {
                                sink: inner.label.to_string(),
                            }
                            .into())
                        }
                    }
                }
                Submit::Refused(e) => return Err(e.into()),
                Submit::Closed(back) => {
                    entry = back;
                    inner.cached.store(None);
                    let _ = tokio::time::timeout(
                        inner.config.replace_wait,
                        handle.shared.finished.cancelled(),
                    )
                    .await;
                }
            }
        }
        Err(SinkError::BatcherGone {
            sink: inner.label.to_string(),
        }
        .into())
    }

    /// The batcher to hand entries to; `None` once the registry is shut down.
    fn handle(&self) -> Option<Arc<BatcherHandle>> {
        let inner = &*self.inner;
        if let Some(h) = inner.cached.load_full() {
            if !h.is_closed() {
                return Some(h);
            }
        }
        let h =
            inner
                .registry
                .get_or_start(&inner.key, &inner.label, &inner.codec, &inner.config)?;
        inner.cached.store(Some(h.clone()));
        Some(h)
    }

    fn group(&self, exchange: &Exchange) -> Result<Option<Arc<str>>, CamelError> {
        match &self.inner.options.group_key {
            None => Ok(exchange
                .header(OUTBOX_GROUP_KEY_HEADER)
                .and_then(|v| text(v.clone()))),
            Some(expr) => Ok(text(expr.evaluate(exchange)?)),
        }
    }

    fn tenant(&self, exchange: &Exchange) -> Result<Arc<str>, CamelError> {
        let options = &self.inner.options;
        match &options.tenant {
            None => Ok(options.default_tenant.clone()),
            Some(expr) => Ok(
                text(expr.evaluate(exchange)?).unwrap_or_else(|| options.default_tenant.clone())
            ),
        }
    }

    fn idempotency_key(&self, exchange: &Exchange) -> Result<Arc<str>, CamelError> {
        if let Some(expr) = &self.inner.options.idempotency_key {
            if let Some(key) = text(expr.evaluate(exchange)?) {
                return Ok(key);
            }
        }
        if let Some(id) = exchange.header(OUTBOX_ID_HEADER).filter(|v| !v.is_null()) {
            // Ids count from 1 in every outbox: the name keeps two outboxes feeding one
            // destination from deduplicating each other's messages.
            return Ok(
                match exchange
                    .header(OUTBOX_NAME_HEADER)
                    .and_then(|n| text(n.clone()))
                {
                    Some(name) => format!("outbox-{name}-{id}").into(),
                    None => id.to_string().into(),
                },
            );
        }
        Ok(exchange.id.to_string().into())
    }
}

/// A value as text; null and empty text mean "none".
fn text(value: Value) -> Option<Arc<str>> {
    match value {
        Value::Null => None,
        Value::Text(s) if s.is_empty() => None,
        Value::Text(s) => Some(s),
        other => Some(other.to_string().into()),
    }
}

impl<C: BatchCodec> Process for SinkProducer<C> {
    fn process(&self, exchange: Exchange) -> ProcessorFuture {
        let this = self.clone();
        ProcessorFuture::boxed(async move {
            let mut exchange = exchange;
            this.deliver_with_receipt(&exchange)
                .await?
                .apply_to(&mut exchange);
            Ok(exchange)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryCodec;

    fn producer(options: SinkOptions) -> SinkProducer<MemoryCodec> {
        SinkProducer::new(
            MemoryCodec::new("x"),
            BatchConfig::default(),
            options,
            BatcherRegistry::new(),
        )
    }

    #[test]
    fn a_relayed_outbox_message_brings_its_group_and_a_key_naming_its_outbox() {
        let p = producer(SinkOptions::default());
        let relayed = Exchange::new("b")
            .with_header(OUTBOX_ID_HEADER, 7)
            .with_header(OUTBOX_NAME_HEADER, "orders")
            .with_header(OUTBOX_GROUP_KEY_HEADER, "order-42");
        assert_eq!(p.group(&relayed).unwrap().as_deref(), Some("order-42"));
        assert_eq!(&*p.idempotency_key(&relayed).unwrap(), "outbox-orders-7");

        let plain = Exchange::new("b");
        assert_eq!(p.group(&plain).unwrap(), None);
        assert_eq!(
            &*p.idempotency_key(&plain).unwrap(),
            plain.id.to_string().as_str()
        );
    }
}
