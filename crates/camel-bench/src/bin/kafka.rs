//! Scenario `kafka` (needs `CAMEL_TEST_KAFKA_BROKERS`):
//!
//! - `kafka_consumer`: `from: kafka:` through a route that counts, against a hand-written
//!   rdkafka loop that stores each record's offset after "processing" it, with the same
//!   librdkafka settings (stored offsets committed by librdkafka's timer). Both read the
//!   same pre-filled 8-partition topic in a group of their own; the clock runs from the
//!   first record to the last, so the group join is not measured.
//! - `outbox_kafka_relay`: messages already in an outbox (SQLite), relayed by
//!   `from: outbox:` → `to: kafka:` (8 partitions, acks=all, idempotent producer);
//!   messages per second from the relay's start to the last delivery.
//!
//! Counts: `KAFKA_RECORDS` (default 100000), `KAFKA_RELAY_MESSAGES` (default 5000).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use camel_api::{BoxProcessor, Exchange};
use camel_bench::{count_from_env, per_second, result_line};
use camel_core::CamelContext;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};
use tokio::sync::Notify;

const PARTITIONS: i32 = 8;

fn unique(prefix: &str) -> String {
    camel_bench::unique_name(prefix, '-')
}

async fn create_topic(brokers: &str, topic: &str) {
    let admin: AdminClient<_> = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .create()
        .expect("admin client");
    for r in admin
        .create_topics(
            &[NewTopic::new(topic, PARTITIONS, TopicReplication::Fixed(1))],
            &AdminOptions::new(),
        )
        .await
        .expect("create topic")
    {
        r.expect("topic created");
    }
}

async fn fill(brokers: &str, topic: &str, n: u64) {
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("linger.ms", "5")
        .create()
        .expect("producer");
    let mut pending = futures::stream::FuturesUnordered::new();
    for i in 0..n {
        let p = producer.clone();
        let topic = topic.to_string();
        pending.push(async move {
            let key = format!("k{}", i % 64);
            let body = format!("{{\"n\":{i}}}");
            p.send(
                FutureRecord::to(&topic).key(&key).payload(&body),
                Duration::from_secs(30),
            )
            .await
            .map(|_| ())
            .map_err(|(e, _)| e)
        });
        if pending.len() >= 1000 {
            use futures::StreamExt;
            pending.next().await.expect("a send").expect("delivered");
        }
    }
    use futures::StreamExt;
    while let Some(r) = pending.next().await {
        r.expect("delivered");
    }
}

fn group_config(brokers: &str, group: &str) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", brokers)
        .set("group.id", group)
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "true")
        .set("enable.auto.offset.store", "false")
        .set("auto.commit.interval.ms", "5000")
        .set("session.timeout.ms", "6000")
        .set("heartbeat.interval.ms", "500")
        .set("partition.assignment.strategy", "cooperative-sticky");
    c
}

/// The baseline: one loop, store each record's offset + 1 after reading its body. With
/// `KAFKA_RAW_STORE=burst` it stores once per burst instead (what records librdkafka
/// already holds, up to 256), as the route's consumer does.
async fn raw_loop(brokers: &str, topic: &str, n: u64) -> Duration {
    use futures::{FutureExt, StreamExt};
    let burst = std::env::var("KAFKA_RAW_STORE").is_ok_and(|v| v == "burst");
    let consumer: StreamConsumer = group_config(brokers, &unique("raw"))
        .create()
        .expect("consumer");
    consumer.subscribe(&[topic]).expect("subscribe");
    let mut first = None;
    let mut bytes = 0usize;
    if !burst {
        for _ in 0..n {
            let m = consumer.recv().await.expect("a record");
            first.get_or_insert_with(Instant::now);
            bytes += m.payload().map_or(0, <[u8]>::len);
            let mut list = TopicPartitionList::new();
            list.add_partition_offset(m.topic(), m.partition(), Offset::Offset(m.offset() + 1))
                .expect("offset");
            consumer.store_offsets(&list).expect("stored");
        }
    } else {
        let mut stream = consumer.stream();
        let mut seen = 0;
        let mut next: std::collections::HashMap<i32, i64> = std::collections::HashMap::new();
        while seen < n {
            let mut received = stream.next().await;
            let mut taken = 0;
            while let Some(m) = received {
                let m = m.expect("a record");
                first.get_or_insert_with(Instant::now);
                bytes += m.payload().map_or(0, <[u8]>::len);
                next.insert(m.partition(), m.offset() + 1);
                seen += 1;
                taken += 1;
                if taken == 256 || seen == n {
                    break;
                }
                received = stream.next().now_or_never().flatten();
            }
            let mut list = TopicPartitionList::new();
            for (p, o) in next.drain() {
                list.add_partition_offset(topic, p, Offset::Offset(o))
                    .expect("offset");
            }
            consumer.store_offsets(&list).expect("stored");
        }
    }
    assert!(bytes > 0);
    first.map(|f| f.elapsed()).unwrap_or_default()
}

/// Ours: a route that counts; returns the time from the first record to the last.
async fn route(brokers: &str, topic: &str, n: u64) -> Duration {
    let yaml = format!(
        r#"
- route:
    id: consume
    from:
      uri: "kafka:{topic}"
      parameters: {{ brokers: '{brokers}', group_id: '{group}', auto_offset_reset: earliest,
        session_timeout_ms: 6000, heartbeat_interval_ms: 500 }}
      steps:
        - process: {{ ref: work }}
"#,
        group = unique("route")
    );
    camel_bench::time_consumer_route(Arc::new(camel_kafka::KafkaComponent::new()), &yaml, n).await
}

async fn relay(brokers: &str, n: u64) {
    let topic = unique("bench-relay");
    create_topic(brokers, &topic).await;
    let dir = std::env::temp_dir().join(unique("camel-bench-relay"));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let db = format!("sqlite:{}", dir.join("outbox.db").display());
    let publish = format!(
        r#"
- route:
    id: publish
    from:
      uri: direct:publish
      steps:
        - to:
            uri: outbox:bench
            parameters: {{ datasource: '{db}', group_key: '${{header.group}}' }}
"#
    );
    let ctx = CamelContext::new();
    ctx.add_component(Arc::new(camel_outbox::OutboxComponent::new()));
    ctx.add_routes(camel_core::yaml::load_str(&publish, "p.yaml").expect("yaml"))
        .await
        .expect("routes");
    ctx.start().await.expect("start");
    for i in 0..n {
        let ex =
            Exchange::new(format!("{{\"n\":{i}}}")).with_header("group", format!("g{}", i % 64));
        ctx.request("direct:publish", ex).await.expect("published");
    }
    ctx.stop().await;

    let count = Arc::new(AtomicU64::new(0));
    let done = Arc::new(Notify::new());
    let counter = {
        let (count, done) = (count.clone(), done.clone());
        BoxProcessor::sync(move |ex: Exchange| {
            if count.fetch_add(1, Ordering::Relaxed) + 1 == n {
                done.notify_one();
            }
            Ok(ex)
        })
    };
    let relay = format!(
        r#"
- route:
    id: relay
    from:
      uri: outbox:bench
      parameters: {{ datasource: '{db}' }}
      steps:
        - to:
            uri: "kafka:{topic}"
            parameters: {{ brokers: '{brokers}' }}
        - process: {{ ref: counter }}
"#
    );
    let ctx = CamelContext::new();
    ctx.add_component(Arc::new(camel_outbox::OutboxComponent::new()));
    ctx.add_component(Arc::new(camel_kafka::KafkaComponent::new()));
    ctx.add_resource("counter", Arc::new(counter));
    ctx.add_routes(camel_core::yaml::load_str(&relay, "r.yaml").expect("yaml"))
        .await
        .expect("routes");
    let start = Instant::now();
    ctx.start().await.expect("start");
    done.notified().await;
    let elapsed = start.elapsed();
    ctx.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
    result_line(
        "outbox_kafka_relay",
        &[
            ("messages", n.to_string()),
            ("partitions", PARTITIONS.to_string()),
            ("groups", "64".into()),
            ("msgs_per_s", format!("{:.0}", per_second(n, elapsed))),
        ],
    );
}

#[tokio::main]
async fn main() {
    let Ok(brokers) = std::env::var("CAMEL_TEST_KAFKA_BROKERS") else {
        eprintln!("skipped: CAMEL_TEST_KAFKA_BROKERS is not set");
        return;
    };
    let n = count_from_env("KAFKA_RECORDS", 100_000);
    let topic = unique("bench-consume");
    create_topic(&brokers, &topic).await;
    fill(&brokers, &topic, n).await;
    // `KAFKA_SIDE=route|raw` runs one side of the consumer case once, for callgrind.
    match std::env::var("KAFKA_SIDE").as_deref() {
        Ok("route") => {
            let t = route(&brokers, &topic, n).await;
            println!("route: {n} records in {t:?}");
            return;
        }
        Ok("raw") => {
            let t = raw_loop(&brokers, &topic, n).await;
            println!("raw: {n} records in {t:?}");
            return;
        }
        _ => {}
    }
    let mut raw = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..2 {
        raw.push(per_second(n, raw_loop(&brokers, &topic, n).await));
        ours.push(per_second(n, route(&brokers, &topic, n).await));
    }
    let raw = camel_bench::median(raw);
    let ours = camel_bench::median(ours);
    result_line(
        "kafka_consumer",
        &[
            ("records", n.to_string()),
            ("partitions", PARTITIONS.to_string()),
            ("raw_per_s", format!("{raw:.0}")),
            ("route_per_s", format!("{ours:.0}")),
            ("ratio", format!("{:.2}", ours / raw)),
        ],
    );
    relay(&brokers, count_from_env("KAFKA_RELAY_MESSAGES", 5000)).await;
}
