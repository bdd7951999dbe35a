//! Scenario `s3_consumer` (needs `CAMEL_TEST_SQS_ENDPOINT`: moto serves S3 on the same
//! port): `from: aws2-s3:` (10 objects per poll, one at a time, delete after the route)
//! through a route that counts, against a hand-written aws-sdk-s3 loop doing the same
//! requests: list up to 10 keys, then for each one get it, read its body and delete it.
//! Each run reads a bucket of its own, filled beforehand; the clock runs from the first
//! object read to the last.
//!
//! Count: `S3_OBJECTS` (default 200), each a small JSON body; `S3_CONCURRENCY` (default 1,
//! the consumer's default `concurrent_consumers`): objects of one listing read at once, on
//! both sides. The figures measure moto as much as us: compare the ratio, not the rates.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_s3::primitives::ByteStream;
use camel_bench::{count_from_env, median, per_second, result_line};
use futures::stream::{self, StreamExt};

/// Keys listed per request, on both sides (`max_messages_per_poll`).
const PER_POLL: i32 = 10;

fn client(endpoint: &str) -> aws_sdk_s3::Client {
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "bench"))
        .endpoint_url(endpoint)
        .force_path_style(true)
        .build();
    aws_sdk_s3::Client::from_conf(config)
}

/// A new bucket holding `n` small objects; returns its name.
async fn filled_bucket(client: &aws_sdk_s3::Client, n: u64) -> String {
    let name = camel_bench::unique_name("bench-s3", '-');
    client
        .create_bucket()
        .bucket(&name)
        .send()
        .await
        .expect("bucket");
    let puts = (0..n).map(|i| {
        let (client, name) = (client.clone(), name.clone());
        async move {
            client
                .put_object()
                .bucket(&name)
                .key(format!("in/{i:08}.json"))
                .body(ByteStream::from(format!("{{\"n\":{i}}}").into_bytes()))
                .send()
                .await
                .expect("put")
        }
    });
    stream::iter(puts)
        .buffer_unordered(8)
        .collect::<Vec<_>>()
        .await;
    name
}

async fn remove_bucket(client: &aws_sdk_s3::Client, bucket: &str) {
    let _ = client.delete_bucket().bucket(bucket).send().await;
}

/// One object: get, read the body, delete. Returns the body's length.
async fn take(client: &aws_sdk_s3::Client, bucket: &str, key: &str) -> usize {
    let got = client
        .get_object()
        .bucket(bucket)
        .key(key)
        .send()
        .await
        .expect("get");
    let body = got.body.collect().await.expect("body").into_bytes();
    client
        .delete_object()
        .bucket(bucket)
        .key(key)
        .send()
        .await
        .expect("delete");
    body.len()
}

/// The baseline: list 10, take each (get, read, delete), `concurrency` at once.
async fn raw_loop(
    client: &aws_sdk_s3::Client,
    bucket: &str,
    n: u64,
    concurrency: usize,
) -> Duration {
    let mut first = None;
    let (mut seen, mut bytes) = (0u64, 0usize);
    while seen < n {
        let listed = client
            .list_objects_v2()
            .bucket(bucket)
            .max_keys(PER_POLL)
            .send()
            .await
            .expect("list");
        let keys: Vec<String> = listed
            .contents
            .unwrap_or_default()
            .into_iter()
            .filter_map(|o| o.key)
            .collect();
        if keys.is_empty() {
            continue;
        }
        first.get_or_insert_with(Instant::now);
        // Owned futures (the client is an `Arc`), so the loop can run on a spawned task.
        let takes = keys.into_iter().map(|key| {
            let (client, bucket) = (client.clone(), bucket.to_string());
            async move { take(&client, &bucket, &key).await }
        });
        let lengths: Vec<usize> = stream::iter(takes)
            .buffer_unordered(concurrency)
            .collect()
            .await;
        seen += lengths.len() as u64;
        bytes += lengths.iter().sum::<usize>();
    }
    assert!(bytes > 0);
    first.map(|f| f.elapsed()).unwrap_or_default()
}

/// Ours: a route that counts; the time from the first exchange to the last.
async fn route(endpoint: &str, bucket: &str, n: u64, concurrency: usize) -> Duration {
    let yaml = format!(
        r#"
- route:
    id: consume
    from:
      uri: "aws2-s3:{bucket}"
      parameters: {{ override_endpoint: true, uri_endpoint_override: '{endpoint}',
        force_path_style: true, access_key: test, secret_key: test, region: us-east-1,
        max_messages_per_poll: {PER_POLL}, concurrent_consumers: {concurrency},
        initial_delay: 0, delay: 50 }}
      steps:
        - process: {{ ref: work }}
"#
    );
    camel_bench::time_consumer_route(Arc::new(camel_s3::S3Component::new()), &yaml, n).await
}

#[tokio::main]
async fn main() {
    let Ok(endpoint) = std::env::var("CAMEL_TEST_SQS_ENDPOINT") else {
        eprintln!("skipped: CAMEL_TEST_SQS_ENDPOINT is not set");
        return;
    };
    let n = count_from_env("S3_OBJECTS", 200);
    let concurrency = usize::try_from(count_from_env("S3_CONCURRENCY", 1))
        .unwrap_or(1)
        .max(1);
    let client = client(&endpoint);
    let mut raw = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..2 {
        let bucket = filled_bucket(&client, n).await;
        // On a task of its own, as the route's consumer is: both sides then run on the
        // runtime's worker threads, not one on the `#[tokio::main]` thread.
        let (c, b) = (client.clone(), bucket.clone());
        let took = tokio::spawn(async move { raw_loop(&c, &b, n, concurrency).await })
            .await
            .expect("the raw loop");
        raw.push(per_second(n, took));
        remove_bucket(&client, &bucket).await;
        let bucket = filled_bucket(&client, n).await;
        ours.push(per_second(
            n,
            route(&endpoint, &bucket, n, concurrency).await,
        ));
        remove_bucket(&client, &bucket).await;
    }
    let (raw, ours) = (median(raw), median(ours));
    result_line(
        "s3_consumer",
        &[
            ("objects", n.to_string()),
            ("per_poll", PER_POLL.to_string()),
            ("concurrency", concurrency.to_string()),
            ("raw_per_s", format!("{raw:.0}")),
            ("route_per_s", format!("{ours:.0}")),
            ("ratio", format!("{:.2}", ours / raw)),
        ],
    );
}
