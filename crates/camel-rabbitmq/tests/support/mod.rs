//! Helpers shared by the tests against the local RabbitMQ.
#![allow(dead_code)] // each test binary uses its own subset

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use camel_api::{BoxProcessor, Component, ConsumerContext, EndpointUri, Exchange};
use camel_rabbitmq::{RabbitMqComponent, REDELIVERED_HEADER};
use lapin::options::{QueueDeclareOptions, QueueDeleteOptions};
use lapin::types::FieldTable;
use lapin::{Channel, Connection, ConnectionProperties};
use tokio::sync::Notify;

pub(crate) use camel_api::test_support::NoContext;

pub(crate) fn unique(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{prefix}.{}x{nanos}", std::process::id())
}

pub(crate) async fn channel(url: &str) -> (Connection, Channel) {
    let conn = Connection::connect(
        url,
        ConnectionProperties::default()
            .with_executor(tokio_executor_trait::Tokio::current())
            .with_reactor(tokio_reactor_trait::Tokio),
    )
    .await
    .unwrap();
    let ch = conn.create_channel().await.unwrap();
    (conn, ch)
}

pub(crate) fn endpoint(uri: &str) -> Arc<dyn camel_api::Endpoint> {
    RabbitMqComponent::new()
        .endpoint(EndpointUri::parse(uri).unwrap(), &NoContext)
        .unwrap()
}

/// Publishes `bodies` through the component's producer (with confirms).
pub(crate) async fn produce(uri: &str, bodies: impl IntoIterator<Item = String>) {
    let producer = endpoint(uri).producer().unwrap();
    for body in bodies {
        producer.process(Exchange::new(body)).await.unwrap();
    }
}

pub(crate) fn start(
    uri: &str,
    pipeline: BoxProcessor,
) -> (ConsumerContext, tokio::task::JoinHandle<()>) {
    let consumer = endpoint(uri).consumer().unwrap();
    let ctx = ConsumerContext::for_pipeline("rabbitmq-test", pipeline);
    let run_ctx = ctx.clone();
    let handle = tokio::spawn(async move { consumer.run(run_ctx).await.unwrap() });
    (ctx, handle)
}

pub(crate) async fn message_count(ch: &Channel, queue: &str) -> (u32, u32) {
    let q = ch
        .queue_declare(
            queue,
            QueueDeclareOptions {
                passive: true,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await
        .unwrap();
    (q.message_count(), q.consumer_count())
}

pub(crate) async fn delete(ch: &Channel, queues: &[&str]) {
    for q in queues {
        let _ = ch.queue_delete(q, QueueDeleteOptions::default()).await;
    }
}

#[derive(Default)]
pub(crate) struct Seen(pub(crate) Mutex<Vec<(String, bool)>>, pub(crate) Notify);

impl Seen {
    pub(crate) fn record(&self, ex: &Exchange) -> String {
        let body = ex.message.body.as_text().unwrap_or_default().to_string();
        let redelivered = ex
            .header(REDELIVERED_HEADER)
            .is_some_and(|v| v.to_string() == "true");
        self.0.lock().unwrap().push((body.clone(), redelivered));
        self.1.notify_waiters();
        body
    }

    pub(crate) async fn wait_for(&self, n: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let notified = self.1.notified();
            if self.0.lock().unwrap().len() >= n {
                return;
            }
            assert!(
                tokio::time::timeout_at(deadline, notified).await.is_ok(),
                "only {} of {n} deliveries arrived",
                self.0.lock().unwrap().len()
            );
        }
    }
}

/// Publishes `body` through a mandatory producer on `uri`, again until it is routed
/// (the consumer declares and binds the queue when it starts).
pub(crate) async fn publish_when_bound(uri: &str, body: &str) {
    let producer = endpoint(&format!("{uri}&mandatory=true"))
        .producer()
        .unwrap();
    for _ in 0..500 {
        if producer.process(Exchange::new(body)).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("`{body}` was never routed: the queue was not bound");
}

/// Every exchange a route saw, with when it saw it.
#[derive(Default)]
pub(crate) struct Recorder(
    pub(crate) Mutex<Vec<(Exchange, std::time::Instant)>>,
    pub(crate) Notify,
);

impl Recorder {
    pub(crate) fn record(&self, ex: &Exchange) {
        let at = std::time::Instant::now();
        self.0.lock().unwrap().push((ex.clone(), at));
        self.1.notify_waiters();
    }

    pub(crate) fn seen(&self) -> Vec<(Exchange, std::time::Instant)> {
        self.0.lock().unwrap().clone()
    }

    pub(crate) async fn wait_for(&self, n: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let notified = self.1.notified();
            if self.0.lock().unwrap().len() >= n {
                return;
            }
            assert!(
                tokio::time::timeout_at(deadline, notified).await.is_ok(),
                "only {} of {n} deliveries arrived",
                self.0.lock().unwrap().len()
            );
        }
    }
}
