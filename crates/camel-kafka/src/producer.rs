//! `to: kafka:TOPIC`: one record per exchange; the exchange completes when the broker
//! has acknowledged the record (`request_required_acks`), with its partition and offset
//! in `kafka.RECORD_META`, or fails with the delivery error.

use std::sync::Arc;
use std::time::Duration;

use camel_api::{BoxProcessor, CamelError, Exchange, Value};
use rdkafka::producer::{FutureProducer, FutureRecord};
use tokio::sync::OnceCell;

use crate::config::ProducerSettings;
use crate::convert::{record_headers, value_bytes};
use crate::headers;

/// How long a record may wait for room in librdkafka's queue before the exchange fails.
const QUEUE_TIMEOUT: Duration = Duration::from_secs(30);

struct Producer {
    settings: ProducerSettings,
    /// Made at the first send: librdkafka starts reaching the brokers as soon as a
    /// client exists, and a compiled route must not (`camel validate` compiles every
    /// route and must open no connection; a route that never sends needs no broker).
    client: OnceCell<FutureProducer>,
}

impl std::fmt::Debug for Producer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer")
            .field("topic", &self.settings.common.topic)
            .finish_non_exhaustive()
    }
}

/// The producer processor for an endpoint.
pub(crate) fn processor(settings: ProducerSettings) -> Result<BoxProcessor, CamelError> {
    let producer = Arc::new(Producer {
        settings,
        client: OnceCell::new(),
    });
    Ok(BoxProcessor::from_fn(move |exchange: Exchange| {
        let producer = producer.clone();
        async move { producer.send(exchange).await }
    })
    .named("kafka"))
}

impl Producer {
    /// The client, made on first use; an error fails this exchange and the next send
    /// tries again.
    async fn client(&self) -> Result<&FutureProducer, CamelError> {
        self.client
            .get_or_try_init(|| async {
                self.settings.client_config().create().map_err(|e| {
                    CamelError::external(
                        format!(
                            "creating the producer of `kafka:{}`",
                            self.settings.common.topic
                        ),
                        e,
                    )
                })
            })
            .await
    }

    /// The record key: the `kafka.KEY` header, else the `key` expression, else the
    /// outbox group key (so a relay route keeps each group on one partition, in order).
    fn key(&self, exchange: &Exchange) -> Result<Option<bytes::Bytes>, CamelError> {
        if let Some(v) = exchange.header(headers::KEY) {
            return Ok(value_bytes(v));
        }
        if let Some(expr) = &self.settings.key {
            return Ok(value_bytes(&expr.evaluate(exchange)?));
        }
        Ok(exchange
            .header(headers::OUTBOX_GROUP_KEY)
            .and_then(value_bytes))
    }

    fn partition(&self, exchange: &Exchange) -> Result<Option<i32>, CamelError> {
        match exchange.header(headers::PARTITION_KEY) {
            None => Ok(self.settings.partition),
            Some(v) => v
                .as_i64()
                .and_then(|p| i32::try_from(p).ok())
                .filter(|p| *p >= 0)
                .map(Some)
                .ok_or_else(|| {
                    CamelError::processor(format!(
                        "header `{}` = {v:?} is not a partition number",
                        headers::PARTITION_KEY
                    ))
                }),
        }
    }

    async fn send(&self, mut exchange: Exchange) -> Result<Exchange, CamelError> {
        let topic = match exchange.header(headers::OVERRIDE_TOPIC) {
            Some(v) => v.as_utf8_text().map(str::to_string).ok_or_else(|| {
                CamelError::processor(format!("header `{}` is not text", headers::OVERRIDE_TOPIC))
            })?,
            None => self.settings.common.topic.clone(),
        };
        let key = self.key(&exchange)?;
        let partition = self.partition(&exchange)?;
        let payload = match &exchange.message.body {
            camel_api::Body::Empty => None,
            body => Some(body.to_bytes()),
        };
        let mut record = FutureRecord::<[u8], [u8]>::to(&topic)
            .headers(record_headers(&exchange, &self.settings.headers));
        if let Some(key) = key.as_deref() {
            record = record.key(key);
        }
        if let Some(payload) = payload.as_deref() {
            record = record.payload(payload);
        }
        if let Some(p) = partition {
            record = record.partition(p);
        }
        let delivery = self
            .client()
            .await?
            .send(record, QUEUE_TIMEOUT)
            .await
            .map_err(|(e, _)| CamelError::external(format!("delivering to `kafka:{topic}`"), e))?;
        let meta = serde_json::json!({
            "topic": topic,
            "partition": delivery.partition,
            "offset": delivery.offset,
        });
        exchange
            .message
            .headers
            .insert(headers::RECORD_META, Value::from(meta));
        Ok(exchange)
    }
}
