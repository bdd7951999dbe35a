//! Scenario `pubsub_consumer` (needs `CAMEL_TEST_PUBSUB_EMULATOR`, host:port of Google's
//! emulator): `from: pubsub:projects/P/subscriptions/S` (one pull loop, `PUBSUB_PER_PULL`
//! messages per pull, one `acknowledge` per pull after the route) through a route that
//! counts, against a hand-written loop on the same HTTP client (reqwest) doing the same
//! REST calls: pull, decode each message's base64 data, acknowledge the pull's ack ids
//! in one request. Each run reads a subscription of its own, filled beforehand; the clock
//! runs from the first message to the last.
//!
//! Two transports, each against its own baseline (`PUBSUB_TRANSPORT`: `pull`, `stream` or
//! both, the default): `pull` is the route with `synchronous_pull=true` against the
//! REST loop above; `stream` is the route with `synchronous_pull=false` (gRPC streaming
//! pull, ADR 0171) against a hand-written tonic loop on one stream that acknowledges
//! each batch the service sends on the same stream, with the consumer's own prost
//! messages.
//!
//! Count: `PUBSUB_MESSAGES` (default 5000), `PUBSUB_PER_PULL` (default 100). The figures
//! measure the emulator as much as us: compare the ratio, not the rates.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use camel_bench::{count_from_env, median, per_second, result_line};
use serde::Deserialize;
use serde_json::json;

const PROJECT: &str = "camel-bench";

/// A topic and its subscription, both named `name`.
#[derive(Clone)]
struct Subscription {
    http: reqwest::Client,
    base: String,
    name: String,
}

impl Subscription {
    async fn create(host: &str) -> Self {
        let s = Subscription {
            http: reqwest::Client::new(),
            base: format!("http://{host}/v1/projects/{PROJECT}"),
            name: camel_bench::unique_name("bench", 'x'),
        };
        let r = s.http.put(s.url("topics")).send().await.expect("topic");
        assert!(r.status().is_success(), "create topic: {}", r.status());
        let body = json!({
            "topic": format!("projects/{PROJECT}/topics/{}", s.name),
            "ackDeadlineSeconds": 60,
        });
        let r = s
            .http
            .put(s.url("subscriptions"))
            .json(&body)
            .send()
            .await
            .expect("subscription");
        assert!(
            r.status().is_success(),
            "create subscription: {}",
            r.status()
        );
        s
    }

    fn url(&self, kind: &str) -> String {
        format!("{}/{kind}/{}", self.base, self.name)
    }

    /// Publishes `n` small messages, 1000 a request (Pub/Sub's limit).
    async fn fill(&self, n: u64) {
        let mut i = 0;
        while i < n {
            let messages: Vec<_> = (i..(i + 1000).min(n))
                .map(|j| {
                    let data =
                        base64::engine::general_purpose::STANDARD.encode(format!("{{\"n\":{j}}}"));
                    json!({ "data": data })
                })
                .collect();
            i += messages.len() as u64;
            let r = self
                .http
                .post(format!("{}:publish", self.url("topics")))
                .json(&json!({ "messages": messages }))
                .send()
                .await
                .expect("publish");
            assert!(r.status().is_success(), "publish: {}", r.status());
        }
    }

    async fn delete(&self) {
        let _ = self.http.delete(self.url("subscriptions")).send().await;
        let _ = self.http.delete(self.url("topics")).send().await;
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Pulled {
    #[serde(default)]
    received_messages: Vec<Received>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Received {
    ack_id: String,
    message: Message,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    data: String,
}

/// The baseline: pull, decode, one `acknowledge` per pull.
async fn raw_loop(s: &Subscription, n: u64, per_pull: u64) -> Duration {
    let subscription = s.url("subscriptions");
    let (pull, ack) = (
        format!("{subscription}:pull"),
        format!("{subscription}:acknowledge"),
    );
    let mut first = None;
    let (mut seen, mut bytes) = (0u64, 0usize);
    while seen < n {
        let text = s
            .http
            .post(&pull)
            .json(&json!({ "maxMessages": per_pull }))
            .send()
            .await
            .expect("pull")
            .text()
            .await
            .expect("pull answer");
        let pulled: Pulled = serde_json::from_str(&text).expect("a pull answer");
        if pulled.received_messages.is_empty() {
            continue;
        }
        first.get_or_insert_with(Instant::now);
        let mut ack_ids = Vec::with_capacity(pulled.received_messages.len());
        for m in pulled.received_messages {
            bytes += base64::engine::general_purpose::STANDARD
                .decode(m.message.data.as_bytes())
                .map_or(0, |d| d.len());
            ack_ids.push(m.ack_id);
        }
        seen += ack_ids.len() as u64;
        let r = s
            .http
            .post(&ack)
            .json(&json!({ "ackIds": ack_ids }))
            .send()
            .await
            .expect("acknowledge");
        let status = r.status();
        // Read to the end, so the connection goes back to the pool.
        let answer = r.text().await.expect("acknowledge answer");
        assert!(status.is_success(), "acknowledge: {status} {answer}");
    }
    assert!(bytes > 0);
    first.map(|f| f.elapsed()).unwrap_or_default()
}

/// The streaming baseline: one stream, each batch's data read and its ack ids written
/// back on the stream.
async fn raw_stream_loop(host: &str, s: &Subscription, n: u64, per_pull: u64) -> Duration {
    use camel_sinks::pubsub::wire::{StreamingPullRequest, StreamingPullResponse};
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{host}"))
        .expect("an address")
        .connect()
        .await
        .expect("connect");
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.expect("ready");
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tx.send(StreamingPullRequest {
        subscription: format!("projects/{PROJECT}/subscriptions/{}", s.name),
        stream_ack_deadline_seconds: 60,
        max_outstanding_messages: per_pull as i64,
        ..Default::default()
    })
    .await
    .expect("first request");
    let response = grpc
        .streaming::<_, StreamingPullRequest, StreamingPullResponse, _>(
            tonic::Request::new(tokio_stream::wrappers::ReceiverStream::new(rx)),
            http::uri::PathAndQuery::from_static("/google.pubsub.v1.Subscriber/StreamingPull"),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .expect("stream");
    let mut inbound = response.into_inner();
    let mut first = None;
    let (mut seen, mut bytes) = (0u64, 0usize);
    while seen < n {
        let batch = inbound.message().await.expect("a batch").expect("open");
        first.get_or_insert_with(Instant::now);
        let mut ack_ids = Vec::with_capacity(batch.received_messages.len());
        for m in batch.received_messages {
            bytes += m.message.map_or(0, |m| m.data.len());
            ack_ids.push(m.ack_id);
        }
        seen += ack_ids.len() as u64;
        tx.send(StreamingPullRequest {
            ack_ids,
            ..Default::default()
        })
        .await
        .expect("acknowledge");
    }
    assert!(bytes > 0);
    first.map(|f| f.elapsed()).unwrap_or_default()
}

/// Ours: a route that counts; the time from the first exchange to the last.
async fn route(host: &str, s: &Subscription, n: u64, per_pull: u64, stream: bool) -> Duration {
    let yaml = format!(
        r#"
- route:
    id: consume
    from:
      uri: "pubsub:projects/{PROJECT}/subscriptions/{name}"
      parameters: {{ emulator_host: '{host}', max_messages_per_poll: {per_pull},
        concurrent_consumers: 1, synchronous_pull: {synchronous} }}
      steps:
        - process: {{ ref: work }}
"#,
        name = s.name,
        synchronous = !stream
    );
    camel_bench::time_consumer_route(
        Arc::new(camel_sinks::pubsub::PubSubComponent::default()),
        &yaml,
        n,
    )
    .await
}

#[tokio::main]
async fn main() {
    let Ok(host) = std::env::var("CAMEL_TEST_PUBSUB_EMULATOR") else {
        eprintln!("skipped: CAMEL_TEST_PUBSUB_EMULATOR is not set");
        return;
    };
    let transport = std::env::var("PUBSUB_TRANSPORT").unwrap_or_default();
    for stream in [false, true] {
        let name = if stream { "stream" } else { "pull" };
        if !transport.is_empty() && transport != name {
            continue;
        }
        compare(&host, stream).await;
    }
}

/// One transport: `PUBSUB_RUNS` alternating pairs, the median of each side.
async fn compare(host: &str, stream: bool) {
    let n = count_from_env("PUBSUB_MESSAGES", 5000);
    let per_pull = count_from_env("PUBSUB_PER_PULL", 100).clamp(1, 1000);
    let mut raw = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..count_from_env("PUBSUB_RUNS", 2) {
        let s = Subscription::create(host).await;
        s.fill(n).await;
        // On a task of its own, as the route's consumer is: both sides then run on the
        // runtime's worker threads, not one on the `#[tokio::main]` thread.
        let (copy, h) = (s.clone(), host.to_string());
        let took = tokio::spawn(async move {
            match stream {
                true => raw_stream_loop(&h, &copy, n, per_pull).await,
                false => raw_loop(&copy, n, per_pull).await,
            }
        })
        .await
        .expect("the raw loop");
        raw.push(per_second(n, took));
        s.delete().await;
        let s = Subscription::create(host).await;
        s.fill(n).await;
        ours.push(per_second(n, route(host, &s, n, per_pull, stream).await));
        s.delete().await;
        eprintln!(
            "{} run {}: raw {:.0}/s, route {:.0}/s",
            if stream { "stream" } else { "pull" },
            raw.len(),
            raw[raw.len() - 1],
            ours[ours.len() - 1]
        );
    }
    let (raw, ours) = (median(raw), median(ours));
    result_line(
        "pubsub_consumer",
        &[
            (
                "transport",
                if stream { "stream" } else { "pull" }.to_string(),
            ),
            ("messages", n.to_string()),
            ("per_pull", per_pull.to_string()),
            ("raw_per_s", format!("{raw:.0}")),
            ("route_per_s", format!("{ours:.0}")),
            ("ratio", format!("{:.2}", ours / raw)),
        ],
    );
}
