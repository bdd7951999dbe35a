//! The Pub/Sub sink against Google's emulator: per-key order, the 10 MB limit enforced
//! on our side, and a key paused after a failed publish until its failed message is
//! retried.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use camel_api::test_support::service_from_env;
use camel_api::{Component, EndpointUri, Exchange, Process};
use camel_sinks::pubsub::{PubSubCodec, PubSubComponent, MESSAGE_ID_HEADER};
use camel_sinks::testing::{deliver_all, HeaderContext, HeaderExpression};
use camel_sinks::{BatchConfig, BatcherRegistry, SinkOptions, SinkProducer};
use serde_json::{json, Value as Json};

/// A topic and an ordered subscription of their own, for one test.
struct TempTopic {
    http: reqwest::Client,
    base: String,
    topic: String,
    subscription: String,
}

impl TempTopic {
    async fn create(host: &str) -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let id = format!("camel{}x{nanos}", std::process::id());
        let t = TempTopic {
            http: reqwest::Client::new(),
            base: format!("http://{host}/v1"),
            topic: format!("projects/camel-sinks/topics/t{id}"),
            subscription: format!("projects/camel-sinks/subscriptions/s{id}"),
        };
        let r = t
            .http
            .put(format!("{}/{}", t.base, t.topic))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{}", r.text().await.unwrap());
        let r = t
            .http
            .put(format!("{}/{}", t.base, t.subscription))
            .json(&json!({"topic": t.topic, "enableMessageOrdering": true}))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{}", r.text().await.unwrap());
        t
    }

    /// Pulls and acknowledges until `expected` messages arrived (or the emulator has no
    /// more), then deletes the subscription and topic. Returns (data, ordering key).
    async fn drain_and_delete(self, expected: usize) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for _ in 0..50 {
            if out.len() >= expected {
                break;
            }
            let pulled: Json = self
                .http
                .post(format!("{}/{}:pull", self.base, self.subscription))
                .json(&json!({"maxMessages": 1000, "returnImmediately": true}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let received = pulled["receivedMessages"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if received.is_empty() {
                continue;
            }
            let mut acks = Vec::new();
            for m in received {
                let data = m["message"]["data"].as_str().unwrap_or("");
                let data = base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .unwrap_or_default();
                let key = m["message"]["orderingKey"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                out.push((String::from_utf8_lossy(&data).to_string(), key));
                acks.push(m["ackId"].clone());
            }
            self.http
                .post(format!("{}/{}:acknowledge", self.base, self.subscription))
                .json(&json!({"ackIds": acks}))
                .send()
                .await
                .unwrap();
        }
        let _ = self
            .http
            .delete(format!("{}/{}", self.base, self.subscription))
            .send()
            .await;
        let _ = self
            .http
            .delete(format!("{}/{}", self.base, self.topic))
            .send()
            .await;
        out
    }
}

fn producer(host: &str, topic: &str, config: BatchConfig) -> SinkProducer<PubSubCodec> {
    let options = SinkOptions {
        group_key: Some(Arc::new(HeaderExpression("group".into()))),
        idempotency_key: Some(Arc::new(HeaderExpression("key".into()))),
        ..SinkOptions::default()
    };
    let codec = PubSubCodec::new(topic, &format!("http://{host}"), None);
    SinkProducer::new(codec, config, options, BatcherRegistry::new())
}

fn quick() -> BatchConfig {
    BatchConfig {
        linger: Duration::from_millis(10),
        send_timeout: Duration::from_secs(20),
        ..BatchConfig::default()
    }
}

#[tokio::test]
async fn ordering_keys_keep_their_order() {
    let Some(host) = service_from_env("CAMEL_TEST_PUBSUB_EMULATOR") else {
        return;
    };
    let topic = TempTopic::create(&host).await;
    let p = producer(&host, &topic.topic, quick());
    let exchanges = (0..90)
        .map(|i| {
            let g = ["a", "b", "c"][i % 3];
            Exchange::new(format!("{g}-{i}")).with_header("group", g)
        })
        .collect();
    let results = deliver_all(&p, exchanges).await;
    let got = topic.drain_and_delete(90).await;

    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(got.len(), 90);
    let mut last: HashMap<String, usize> = HashMap::new();
    for (data, key) in got {
        let (g, i) = data.split_once('-').unwrap();
        assert_eq!(g, key);
        let i: usize = i.parse().unwrap();
        if let Some(prev) = last.insert(key, i) {
            assert!(prev < i, "key {g}: {i} after {prev}");
        }
    }
}

/// The route step sets the `messageId` Pub/Sub gave each message on its exchange, also
/// when several share one publish request.
#[tokio::test]
async fn the_exchange_carries_its_message_id() {
    let Some(host) = service_from_env("CAMEL_TEST_PUBSUB_EMULATOR") else {
        return;
    };
    let topic = TempTopic::create(&host).await;
    let p = producer(&host, &topic.topic, quick());
    let calls: Vec<_> = (0..5)
        .map(|i| {
            let p = p.clone();
            tokio::spawn(async move { p.process(Exchange::new(format!("m{i}"))).await })
        })
        .collect();
    let mut ids = Vec::new();
    for c in calls {
        let out = c.await.unwrap().unwrap();
        ids.push(out.header(MESSAGE_ID_HEADER).map(ToString::to_string));
    }
    topic.drain_and_delete(5).await;
    let mut distinct: Vec<String> = ids.iter().flatten().cloned().collect();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 5, "{ids:?}");
}

#[tokio::test]
async fn requests_stay_under_ten_megabytes() {
    let Some(host) = service_from_env("CAMEL_TEST_PUBSUB_EMULATOR") else {
        return;
    };
    let topic = TempTopic::create(&host).await;
    let p = producer(&host, &topic.topic, quick());
    // Four 3 MB messages (4 MB once base64-encoded): at most two fit in one request.
    let big = "x".repeat(3_000_000);
    let exchanges = (0..4).map(|i| Exchange::new(format!("{i}{big}"))).collect();
    let results = deliver_all(&p, exchanges).await;
    let too_big = p.deliver(&Exchange::new("y".repeat(8_000_000))).await;
    let got = topic.drain_and_delete(4).await;

    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert!(too_big.unwrap_err().to_string().contains("exceeds"));
    assert_eq!(got.len(), 4);
}

#[tokio::test]
async fn a_failed_key_pauses_until_its_message_is_retried() {
    let Some(host) = service_from_env("CAMEL_TEST_PUBSUB_EMULATOR") else {
        return;
    };
    let topic = TempTopic::create(&host).await;
    let p = producer(&host, &topic.topic, quick());
    let msg = |body: &str, key: &str| {
        Exchange::new(body.to_string())
            .with_header("group", "k")
            .with_header("key", key)
    };
    p.deliver(&msg("first", "m1")).await.unwrap();
    // An empty message is refused by Pub/Sub: the key pauses.
    let refused = p.deliver(&msg("", "m2")).await;
    let fast = p.deliver(&msg("third", "m3")).await;
    let other_key = p
        .deliver(&Exchange::new("other").with_header("group", "z"))
        .await;
    // The retry of m2 resumes the key.
    p.deliver(&msg("second", "m2")).await.unwrap();
    p.deliver(&msg("fourth", "m4")).await.unwrap();
    let got = topic.drain_and_delete(4).await;

    assert!(refused.unwrap_err().to_string().contains("400"));
    assert!(fast.unwrap_err().to_string().contains("paused"));
    other_key.unwrap();
    let k: Vec<&str> = got
        .iter()
        .filter(|(_, key)| key == "k")
        .map(|(d, _)| d.as_str())
        .collect();
    assert_eq!(k, ["first", "second", "fourth"]);
}

/// Two routes' endpoints on one topic (tuned differently, so two batchers and two codec
/// instances), and a third built later as a swap would: a key paused by one is paused
/// for all, until resumed through the component.
#[tokio::test]
async fn a_paused_key_holds_for_every_route_on_the_topic_until_resumed() {
    let Some(host) = service_from_env("CAMEL_TEST_PUBSUB_EMULATOR") else {
        return;
    };
    let topic = TempTopic::create(&host).await;
    let component = PubSubComponent::with_registry(BatcherRegistry::new());
    let route = |tuning: &str| {
        let uri = format!(
            "pubsub:{}?emulator_host={host}&group_key=${{header.group}}&idempotency_key=${{header.key}}&{tuning}",
            topic.topic
        );
        let ctx = HeaderContext { route_id: None };
        let endpoint = component
            .endpoint(EndpointUri::parse(&uri).unwrap(), &ctx)
            .unwrap();
        endpoint.producer().unwrap()
    };
    let msg = |body: &str, key: &str| {
        Exchange::new(body.to_string())
            .with_header("group", "k")
            .with_header("key", key)
    };
    let (a, b) = (route("linger_ms=5"), route("linger_ms=7"));
    a.process(msg("first", "m1")).await.unwrap();
    // An empty message is refused by Pub/Sub: key k pauses, for route B too.
    assert!(a.process(msg("", "m2")).await.is_err());
    let through_b = b.process(msg("third", "m3")).await;
    assert!(
        through_b
            .as_ref()
            .is_err_and(|e| e.to_string().contains("paused")),
        "route B must not overtake the failed message: {through_b:?}"
    );
    // A swapped route (a new endpoint and codec) still finds k paused.
    let swapped = route("linger_ms=9");
    assert!(swapped.process(msg("fourth", "m4")).await.is_err());
    assert_eq!(component.paused(&topic.topic), ["k"]);

    assert!(component.resume(&topic.topic, "k"));
    assert!(component.paused(&topic.topic).is_empty());
    b.process(msg("fifth", "m5")).await.unwrap();
    let got = topic.drain_and_delete(2).await;
    let k: Vec<&str> = got.iter().map(|(d, _)| d.as_str()).collect();
    assert_eq!(k, ["first", "fifth"]);
}

#[test]
fn component_checks_the_topic_path_and_parameters() {
    let component = PubSubComponent::with_registry(BatcherRegistry::new());
    let ctx = HeaderContext { route_id: None };
    let ok = EndpointUri::parse(
        "pubsub:projects/p/topics/orders?emulatorHost=127.0.0.1:8085&groupKey=${header.g}",
    )
    .unwrap();
    assert!(component.endpoint(ok, &ctx).is_ok());
    let bad = EndpointUri::parse("pubsub:orders").unwrap();
    assert!(component.endpoint(bad, &ctx).is_err());
    let metadata = EndpointUri::parse(
        "pubsub:projects/p/topics/orders?tokenSource=metadata&metadataHost=127.0.0.1:1",
    )
    .unwrap();
    assert!(component.endpoint(metadata, &ctx).is_ok());
    let bogus = EndpointUri::parse("pubsub:projects/p/topics/orders?token_source=file").unwrap();
    let err = component.endpoint(bogus, &ctx).unwrap_err().to_string();
    assert!(err.contains("token_source"), "{err}");
    let unknown = EndpointUri::parse("pubsub:projects/p/topics/orders?emulator=x").unwrap();
    let err = component.endpoint(unknown, &ctx).unwrap_err().to_string();
    // A one-word unknown name gets the known names in Camel's spelling (ADR 0128).
    assert!(err.contains("emulatorHost"), "{err}");
}
