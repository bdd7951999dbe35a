//! Scenario `rabbitmq_consumer` (needs `CAMEL_TEST_RABBITMQ_URL`): `from: rabbitmq:`
//! (manual acks, `prefetch_count`) through a route that counts, against a hand-written
//! lapin loop (`basic_qos` with the same prefetch, `basic_consume`, `basic_ack` per
//! delivery after reading it, acks overlapping). Each run reads a queue of its own, filled beforehand; the
//! clock runs from the first delivery to the last.
//!
//! Count: `RABBITMQ_MESSAGES` (default 50000); `RABBITMQ_PREFETCH` (default 250, ours).

use std::sync::Arc;
use std::time::{Duration, Instant};

use camel_bench::{count_from_env, median, per_second, result_line};
use futures::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicConsumeOptions, BasicPublishOptions, BasicQosOptions,
    ConfirmSelectOptions, QueueDeclareOptions, QueueDeleteOptions,
};
use lapin::types::FieldTable;
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties};

fn unique(prefix: &str) -> String {
    camel_bench::unique_name(prefix, '-')
}

async fn channel(url: &str) -> (Connection, Channel) {
    let properties = ConnectionProperties::default()
        .with_executor(tokio_executor_trait::Tokio::current())
        .with_reactor(tokio_reactor_trait::Tokio);
    let connection = Connection::connect(url, properties).await.expect("connect");
    let channel = connection.create_channel().await.expect("channel");
    (connection, channel)
}

/// A new durable queue holding `n` messages (published with confirms).
async fn filled_queue(channel: &Channel, n: u64) -> String {
    let queue = unique("bench-consume");
    channel
        .queue_declare(
            &queue,
            QueueDeclareOptions {
                durable: true,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await
        .expect("queue");
    channel
        .confirm_select(ConfirmSelectOptions::default())
        .await
        .expect("confirms");
    let mut pending = futures::stream::FuturesUnordered::new();
    for i in 0..n {
        let confirm = channel
            .basic_publish(
                "",
                &queue,
                BasicPublishOptions::default(),
                format!("{{\"n\":{i}}}").as_bytes(),
                BasicProperties::default(),
            )
            .await
            .expect("published");
        pending.push(confirm);
        if pending.len() >= 1000 {
            pending.next().await.expect("a confirm").expect("confirmed");
        }
    }
    while let Some(c) = pending.next().await {
        c.expect("confirmed");
    }
    queue
}

/// The baseline: one consumer acking each delivery after reading it.
async fn raw_loop(url: &str, queue: &str, n: u64, prefetch: u16) -> Duration {
    let (_connection, channel) = channel(url).await;
    channel
        .basic_qos(prefetch, BasicQosOptions::default())
        .await
        .expect("qos");
    let mut consumer = channel
        .basic_consume(
            queue,
            &unique("raw"),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await
        .expect("consume");
    let mut first = None;
    let mut bytes = 0usize;
    // Each ack is sent without waiting for the previous one (awaited ack by ack, lapin
    // manages about 15k/s here): the acks overlap, as ours do.
    let mut acks = tokio::task::JoinSet::new();
    for _ in 0..n {
        let delivery = consumer
            .next()
            .await
            .expect("a delivery")
            .expect("no error");
        first.get_or_insert_with(Instant::now);
        bytes += delivery.data.len();
        acks.spawn(async move { delivery.ack(BasicAckOptions::default()).await });
        while let Some(done) = acks.try_join_next() {
            done.expect("ack task").expect("acked");
        }
    }
    while let Some(done) = acks.join_next().await {
        done.expect("ack task").expect("acked");
    }
    assert!(bytes > 0);
    first.map(|f| f.elapsed()).unwrap_or_default()
}

/// Ours: a route that counts; the time from the first exchange to the last.
async fn route(url: &str, queue: &str, n: u64, prefetch: u16) -> Duration {
    let yaml = format!(
        r#"
- route:
    id: consume
    from:
      uri: "rabbitmq:?queue={queue}"
      parameters: {{ addresses: '{url}', prefetch_count: {prefetch}, auto_declare: false }}
      steps:
        - process: {{ ref: work }}
"#
    );
    camel_bench::time_consumer_route(Arc::new(camel_rabbitmq::RabbitMqComponent::new()), &yaml, n)
        .await
}

#[tokio::main]
async fn main() {
    let Ok(url) = std::env::var("CAMEL_TEST_RABBITMQ_URL") else {
        eprintln!("skipped: CAMEL_TEST_RABBITMQ_URL is not set");
        return;
    };
    let n = count_from_env("RABBITMQ_MESSAGES", 50_000);
    let prefetch = u16::try_from(count_from_env("RABBITMQ_PREFETCH", 250)).unwrap_or(250);
    let (_connection, admin) = channel(&url).await;
    let mut raw = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..2 {
        let queue = filled_queue(&admin, n).await;
        raw.push(per_second(n, raw_loop(&url, &queue, n, prefetch).await));
        let _ = admin
            .queue_delete(&queue, QueueDeleteOptions::default())
            .await;
        let queue = filled_queue(&admin, n).await;
        ours.push(per_second(n, route(&url, &queue, n, prefetch).await));
        let _ = admin
            .queue_delete(&queue, QueueDeleteOptions::default())
            .await;
    }
    let (raw, ours) = (median(raw), median(ours));
    result_line(
        "rabbitmq_consumer",
        &[
            ("messages", n.to_string()),
            ("prefetch_count", prefetch.to_string()),
            ("raw_per_s", format!("{raw:.0}")),
            ("route_per_s", format!("{ours:.0}")),
            ("ratio", format!("{:.2}", ours / raw)),
        ],
    );
}
