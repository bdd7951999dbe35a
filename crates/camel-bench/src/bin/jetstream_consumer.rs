//! Scenario `jetstream_consumer` (needs `CAMEL_TEST_NATS_URL`): `from: nats:` as a durable
//! JetStream pull consumer through a route that counts, against a hand-written async-nats
//! loop on a durable with the same settings (`max_ack_pending`, explicit acks, batches of
//! up to 256) that acknowledges each message after reading it. Both read the same
//! pre-filled in-memory stream, each on a durable of its own; the clock runs from the
//! first message to the last.
//!
//! Count: `JETSTREAM_MESSAGES` (default 50000); `JETSTREAM_MAX_ACK_PENDING` (default 1000).

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, consumer::pull, consumer::AckPolicy};
use camel_bench::{count_from_env, median, per_second, result_line};
use futures::StreamExt;

fn unique(prefix: &str) -> String {
    camel_bench::unique_name(prefix, '_')
}

async fn fill(js: &jetstream::Context, subject: &str, n: u64) {
    let mut pending = futures::stream::FuturesUnordered::new();
    for i in 0..n {
        let ack = js
            .publish(subject.to_string(), format!("{{\"n\":{i}}}").into())
            .await
            .expect("published");
        pending.push(std::future::IntoFuture::into_future(ack));
        if pending.len() >= 1000 {
            pending.next().await.expect("an ack").expect("stored");
        }
    }
    while let Some(r) = pending.next().await {
        r.expect("stored");
    }
}

/// The baseline: one loop that acks each message after reading its body.
async fn raw_loop(
    js: &jetstream::Context,
    stream: &str,
    subject: &str,
    n: u64,
    map: usize,
) -> Duration {
    let mut consumer = js
        .get_stream(stream)
        .await
        .expect("stream")
        .create_consumer(pull::Config {
            durable_name: Some(unique("raw")),
            filter_subject: subject.to_string(),
            ack_policy: AckPolicy::Explicit,
            ack_wait: Duration::from_secs(30),
            max_ack_pending: map as i64,
            ..Default::default()
        })
        .await
        .expect("durable")
        .stream()
        .max_messages_per_batch(map.min(256))
        .messages()
        .await
        .expect("messages");
    let mut first = None;
    let mut bytes = 0usize;
    for _ in 0..n {
        let m = consumer.next().await.expect("a message").expect("no error");
        first.get_or_insert_with(Instant::now);
        bytes += m.payload.len();
        m.ack().await.expect("acked");
    }
    assert!(bytes > 0);
    first.map(|f| f.elapsed()).unwrap_or_default()
}

/// Ours: a route that counts; the time from the first exchange to the last.
async fn route(servers: &str, stream: &str, subject: &str, n: u64, map: usize) -> Duration {
    let yaml = format!(
        r#"
- route:
    id: consume
    from:
      uri: "nats:{subject}"
      parameters: {{ servers: '{servers}', durable_name: '{durable}', jetstream_name: '{stream}',
        max_ack_pending: {map}, ack_wait: 30s }}
      steps:
        - process: {{ ref: work }}
"#,
        durable = unique("route")
    );
    camel_bench::time_consumer_route(Arc::new(camel_sinks::nats::NatsComponent::new()), &yaml, n)
        .await
}

#[tokio::main]
async fn main() {
    let Ok(servers) = std::env::var("CAMEL_TEST_NATS_URL") else {
        eprintln!("skipped: CAMEL_TEST_NATS_URL is not set");
        return;
    };
    let n = count_from_env("JETSTREAM_MESSAGES", 50_000);
    let map = count_from_env("JETSTREAM_MAX_ACK_PENDING", 1000) as usize;
    let client = async_nats::connect(servers.as_str())
        .await
        .expect("connect");
    let js = jetstream::new(client);
    let stream = unique("BENCH");
    let subject = unique("bench.consume").replace('_', ".");
    js.create_stream(jetstream::stream::Config {
        name: stream.clone(),
        subjects: vec![subject.clone()],
        storage: jetstream::stream::StorageType::Memory,
        ..Default::default()
    })
    .await
    .expect("stream");
    fill(&js, &subject, n).await;
    let mut raw = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..2 {
        raw.push(per_second(
            n,
            raw_loop(&js, &stream, &subject, n, map).await,
        ));
        ours.push(per_second(
            n,
            route(&servers, &stream, &subject, n, map).await,
        ));
    }
    let _ = js.delete_stream(&stream).await;
    let (raw, ours) = (median(raw), median(ours));
    result_line(
        "jetstream_consumer",
        &[
            ("messages", n.to_string()),
            ("max_ack_pending", map.to_string()),
            ("raw_per_s", format!("{raw:.0}")),
            ("route_per_s", format!("{ours:.0}")),
            ("ratio", format!("{:.2}", ours / raw)),
        ],
    );
}
