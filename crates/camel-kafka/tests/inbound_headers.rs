//! A record's headers are the publisher's: control headers (`CamelSqlQuery`,
//! `CamelHttpUri`), destination headers (`kafka.OVERRIDE_TOPIC`, …) and the consumer's
//! own `kafka.` names never reach the exchange, against a real broker.

mod support;

use std::sync::Arc;
use std::time::Duration;

use camel_api::{BoxProcessor, Exchange, Value};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::FutureRecord;
use rdkafka::ClientConfig;
use support::*;
use tokio::sync::mpsc;

/// How many records `topic` holds (the high watermarks of its partitions).
async fn record_count(brokers: &str, topic: &str, partitions: i32) -> i64 {
    let (brokers, topic) = (brokers.to_string(), topic.to_string());
    tokio::task::spawn_blocking(move || {
        let c: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", &brokers)
            .create()
            .unwrap();
        (0..partitions)
            .map(|p| {
                c.fetch_watermarks(&topic, p, Duration::from_secs(10))
                    .unwrap()
                    .1
            })
            .sum()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_and_destination_record_headers_never_reach_the_exchange() {
    let Some(brokers) = brokers() else { return };
    let topic = unique("camel-inbound");
    let dest = format!("{topic}.out");
    let forged = format!("{topic}.forged");
    let group = unique("g");
    for t in [&topic, &dest, &forged] {
        create_topic(&brokers, t, 1).await;
    }
    let mut hs = OwnedHeaders::new();
    for (key, value) in [
        ("CamelSqlQuery", "DROP TABLE orders"),
        ("CamelHttpUri", "http://127.0.0.1:9/admin"),
        ("camelhttpmethod", "DELETE"),
        (camel_kafka::headers::OVERRIDE_TOPIC, forged.as_str()),
        ("KAFKA.override_topic", forged.as_str()),
        (camel_kafka::headers::PARTITION_KEY, "7"),
        (camel_kafka::headers::OFFSET, "999"),
        ("trace-id", "t-1"),
    ] {
        hs = hs.insert(Header {
            key,
            value: Some(value),
        });
    }
    producer(&brokers)
        .send(
            FutureRecord::to(&topic)
                .key("k")
                .payload("order")
                .headers(hs),
            Duration::from_secs(10),
        )
        .await
        .unwrap();

    let (tx, mut seen) = mpsc::unbounded_channel::<Exchange>();
    let capture = BoxProcessor::sync(move |ex: Exchange| {
        let _ = tx.send(ex.clone());
        Ok(ex)
    });
    let yaml = format!(
        r#"
- route:
    id: inbound
    from:
      uri: "kafka:{topic}"
      parameters: {{ {} }}
      steps:
        - process: {{ ref: capture }}
        - to: {{ uri: "kafka:{dest}", parameters: {{ brokers: '{brokers}' }} }}
"#,
        consumer_parameters(&brokers, &group)
    );
    let ctx = context(&yaml, |ctx| ctx.add_resource("capture", Arc::new(capture))).await;
    let ex = tokio::time::timeout(Duration::from_secs(60), seen.recv())
        .await
        .unwrap()
        .unwrap();
    let out = read(&brokers, &dest, 1, 1).await;
    ctx.stop().await;

    let names: Vec<&str> = ex.message.headers.iter().map(|(n, _)| n).collect();
    for refused in [
        "CamelSqlQuery",
        "CamelHttpUri",
        "camelhttpmethod",
        camel_kafka::headers::OVERRIDE_TOPIC,
        "KAFKA.override_topic",
        camel_kafka::headers::PARTITION_KEY,
    ] {
        assert!(
            !names.contains(&refused),
            "{refused} reached the exchange: {names:?}"
        );
    }
    assert_eq!(ex.header("trace-id"), Some(&Value::from("t-1")));
    assert_eq!(
        ex.header(camel_kafka::headers::OFFSET),
        Some(&Value::Int(0)),
        "the consumer's own offset, not the record header's"
    );
    assert_eq!(out.len(), 1, "the record went to the route's topic");
    assert_eq!(text(&out[0]), "order");
    assert_eq!(
        record_count(&brokers, &forged, 1).await,
        0,
        "nothing went to the topic named by the record header"
    );
}
