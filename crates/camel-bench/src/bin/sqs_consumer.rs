//! Scenario `sqs_consumer` (needs `CAMEL_TEST_SQS_ENDPOINT`, moto or LocalStack): `from:
//! aws2-sqs:` (one poll loop, 10 messages per poll) through a route that counts, against a
//! hand-written aws-sdk-sqs loop doing the same requests: receive up to 10, read them,
//! delete them with one `DeleteMessageBatch`. Each run reads a queue of its own, filled
//! beforehand; the clock runs from the first message to the last.
//!
//! Count: `SQS_MESSAGES` (default 200; moto slows down sharply with the queue's length). The figures measure the emulator as much as us:
//! compare the ratio, not the rates.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sqs::types::{DeleteMessageBatchRequestEntry, SendMessageBatchRequestEntry};
use camel_bench::{count_from_env, median, per_second, result_line};

fn unique(prefix: &str) -> String {
    camel_bench::unique_name(prefix, '-')
}

fn client(endpoint: &str) -> aws_sdk_sqs::Client {
    let config = aws_sdk_sqs::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "bench"))
        .endpoint_url(endpoint)
        .build();
    aws_sdk_sqs::Client::from_conf(config)
}

/// A new standard queue holding `n` messages; returns its name and URL.
async fn filled_queue(client: &aws_sdk_sqs::Client, n: u64) -> (String, String) {
    let name = unique("bench-consume");
    let url = client
        .create_queue()
        .queue_name(&name)
        .send()
        .await
        .expect("queue")
        .queue_url
        .expect("url");
    let mut i = 0;
    while i < n {
        let mut batch = client.send_message_batch().queue_url(&url);
        for j in i..(i + 10).min(n) {
            batch = batch.entries(
                SendMessageBatchRequestEntry::builder()
                    .id(j.to_string())
                    .message_body(format!("{{\"n\":{j}}}"))
                    .build()
                    .expect("entry"),
            );
        }
        batch.send().await.expect("sent");
        i += 10;
    }
    (name, url)
}

/// The baseline: receive 10, read them, delete them in one batch.
async fn raw_loop(client: &aws_sdk_sqs::Client, url: &str, n: u64) -> Duration {
    let mut first = None;
    let (mut seen, mut bytes) = (0u64, 0usize);
    while seen < n {
        let out = client
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .visibility_timeout(30)
            .send()
            .await
            .expect("received");
        let messages = out.messages.unwrap_or_default();
        if messages.is_empty() {
            continue;
        }
        first.get_or_insert_with(Instant::now);
        let mut delete = client.delete_message_batch().queue_url(url);
        for (i, m) in messages.iter().enumerate() {
            bytes += m.body.as_deref().map_or(0, str::len);
            delete = delete.entries(
                DeleteMessageBatchRequestEntry::builder()
                    .id(i.to_string())
                    .receipt_handle(m.receipt_handle.clone().unwrap_or_default())
                    .build()
                    .expect("entry"),
            );
        }
        seen += messages.len() as u64;
        delete.send().await.expect("deleted");
    }
    assert!(bytes > 0);
    first.map(|f| f.elapsed()).unwrap_or_default()
}

/// Ours: a route that counts; the time from the first exchange to the last.
async fn route(endpoint: &str, queue: &str, n: u64) -> Duration {
    let yaml = format!(
        r#"
- route:
    id: consume
    from:
      uri: "aws2-sqs:{queue}"
      parameters: {{ endpoint: '{endpoint}', access_key: test, secret_key: test,
        max_messages_per_poll: 10, concurrent_consumers: 1, wait_time_seconds: 1,
        visibility_timeout: 30 }}
      steps:
        - process: {{ ref: work }}
"#
    );
    camel_bench::time_consumer_route(
        Arc::new(camel_sinks::sqs::Aws2SqsComponent::default()),
        &yaml,
        n,
    )
    .await
}

#[tokio::main]
async fn main() {
    let Ok(endpoint) = std::env::var("CAMEL_TEST_SQS_ENDPOINT") else {
        eprintln!("skipped: CAMEL_TEST_SQS_ENDPOINT is not set");
        return;
    };
    let n = count_from_env("SQS_MESSAGES", 200);
    let client = client(&endpoint);
    let mut raw = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..2 {
        let (_, url) = filled_queue(&client, n).await;
        raw.push(per_second(n, raw_loop(&client, &url, n).await));
        let _ = client.delete_queue().queue_url(&url).send().await;
        let (name, url) = filled_queue(&client, n).await;
        ours.push(per_second(n, route(&endpoint, &name, n).await));
        let _ = client.delete_queue().queue_url(&url).send().await;
    }
    let (raw, ours) = (median(raw), median(ours));
    result_line(
        "sqs_consumer",
        &[
            ("messages", n.to_string()),
            ("per_poll", "10".into()),
            ("raw_per_s", format!("{raw:.0}")),
            ("route_per_s", format!("{ours:.0}")),
            ("ratio", format!("{:.2}", ours / raw)),
        ],
    );
}
