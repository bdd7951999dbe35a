//! Helpers for the tests against a real Kafka broker (`CAMEL_TEST_KAFKA_BROKERS`): topics
//! of their own, raw records in and out, the group's committed offsets, and a context
//! with the `kafka:` component and routes from YAML.

#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use camel_core::CamelContext;
use camel_kafka::KafkaComponent;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::OwnedMessage;
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};

pub fn brokers() -> Option<String> {
    camel_api::test_support::service_from_env("CAMEL_TEST_KAFKA_BROKERS")
}

/// A name no other test run uses.
pub fn unique(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{prefix}-{}-{nanos}", std::process::id())
}

pub async fn create_topic(brokers: &str, topic: &str, partitions: i32) {
    let admin: AdminClient<_> = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .create()
        .unwrap();
    let results = admin
        .create_topics(
            &[NewTopic::new(topic, partitions, TopicReplication::Fixed(1))],
            &AdminOptions::new().operation_timeout(Some(Duration::from_secs(10))),
        )
        .await
        .unwrap();
    for r in results {
        r.unwrap();
    }
}

pub fn producer(brokers: &str) -> FutureProducer {
    ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .create()
        .unwrap()
}

/// Publishes `(key, value)` records one after another.
pub async fn produce(brokers: &str, topic: &str, records: &[(String, String)]) {
    let p = producer(brokers);
    for (k, v) in records {
        p.send(
            FutureRecord::to(topic).key(k.as_str()).payload(v.as_str()),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    }
}

/// The group's committed offsets of `topic`'s partitions (-1 where none).
pub async fn committed(brokers: &str, group: &str, topic: &str, partitions: i32) -> Vec<i64> {
    let (brokers, group, topic) = (brokers.to_string(), group.to_string(), topic.to_string());
    tokio::task::spawn_blocking(move || {
        let c: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", &brokers)
            .set("group.id", &group)
            .create()
            .unwrap();
        let mut list = TopicPartitionList::new();
        for p in 0..partitions {
            list.add_partition(&topic, p);
        }
        let got = c.committed_offsets(list, Duration::from_secs(10)).unwrap();
        got.elements()
            .iter()
            .map(|e| match e.offset() {
                Offset::Offset(o) => o,
                _ => -1,
            })
            .collect()
    })
    .await
    .unwrap()
}

/// Reads `n` records of `topic` from the beginning, without a group.
pub async fn read(brokers: &str, topic: &str, partitions: i32, n: usize) -> Vec<OwnedMessage> {
    let (brokers, topic) = (brokers.to_string(), topic.to_string());
    tokio::task::spawn_blocking(move || {
        let c: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", &brokers)
            .set("group.id", "camel-kafka-test-reader")
            .set("enable.auto.commit", "false")
            .create()
            .unwrap();
        let mut list = TopicPartitionList::new();
        for p in 0..partitions {
            list.add_partition_offset(&topic, p, Offset::Beginning)
                .unwrap();
        }
        c.assign(&list).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let mut out = Vec::new();
        while out.len() < n && std::time::Instant::now() < deadline {
            if let Some(Ok(m)) = c.poll(Duration::from_millis(200)) {
                out.push(m.detach());
            }
        }
        out
    })
    .await
    .unwrap()
}

pub fn text(m: &OwnedMessage) -> String {
    String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned()
}

/// Consumer parameters that make a test group join quickly on tansu (it answers a join
/// after about half the session timeout).
pub fn consumer_parameters(brokers: &str, group: &str) -> String {
    format!(
        "brokers: '{brokers}', group_id: '{group}', auto_offset_reset: earliest, \
         session_timeout_ms: 6000, heartbeat_interval_ms: 500, auto_commit_interval_ms: 100"
    )
}

/// A started context with the `kafka` component (and whatever `setup` adds) and routes.
pub async fn context(yaml: &str, setup: impl FnOnce(&CamelContext)) -> CamelContext {
    let ctx = CamelContext::new();
    ctx.add_component(Arc::new(KafkaComponent::new()));
    setup(&ctx);
    let defs = camel_core::yaml::load_str(yaml, "kafka-test.yaml").unwrap();
    ctx.add_routes(defs).await.unwrap();
    ctx.start().await.unwrap();
    ctx
}
