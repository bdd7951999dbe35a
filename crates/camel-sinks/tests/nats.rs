//! The NATS JetStream sink against the local nats-server: per-group order, one result
//! per caller, `Nats-Msg-Id` deduplication, and the `nats:` component's parameters.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_nats::jetstream::{self, stream};
use camel_api::test_support::service_from_env;
use camel_api::{Component, EndpointUri, Exchange};
use camel_sinks::nats::{
    NatsCodec, NatsComponent, DUPLICATE_HEADER, SEQUENCE_HEADER, STREAM_HEADER,
};
use camel_sinks::testing::{HeaderContext, HeaderExpression};
use camel_sinks::{BatchConfig, BatcherRegistry, SinkOptions, SinkProducer};

fn unique(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{prefix}{}x{nanos}", std::process::id())
}

/// A JetStream stream on a subject of its own, for one test.
async fn temp_stream(
    url: &str,
    prefix: &str,
) -> (jetstream::Context, String, String, stream::Stream) {
    let client = async_nats::connect(url).await.unwrap();
    let js = jetstream::new(client);
    let name = unique(prefix);
    let subject = format!("camel.sinks.{}", name.to_lowercase());
    let stream = js
        .create_stream(stream::Config {
            name: name.clone(),
            subjects: vec![subject.clone()],
            ..Default::default()
        })
        .await
        .unwrap();
    (js, name, subject, stream)
}

fn options() -> SinkOptions {
    SinkOptions {
        group_key: Some(Arc::new(HeaderExpression("group".into()))),
        idempotency_key: Some(Arc::new(HeaderExpression("key".into()))),
        ..SinkOptions::default()
    }
}

#[tokio::test]
async fn jetstream_batches_keep_group_order_and_deduplicate() {
    let Some(url) = service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let (js, name, subject, mut stream) = temp_stream(&url, "CAMEL_SINKS_").await;

    let config = BatchConfig {
        max_entries: Some(20),
        linger: Duration::from_millis(5),
        ..BatchConfig::default()
    };
    let producer = SinkProducer::new(
        NatsCodec::new(&subject, &url, true),
        config,
        options(),
        BatcherRegistry::new(),
    );
    let groups = ["a", "b", "c", "d"];
    let mut calls = Vec::new();
    for i in 0..200 {
        let g = groups[i % groups.len()];
        let ex = Exchange::new(format!("{g}-{i}"))
            .with_header("group", g)
            .with_header("key", format!("{name}-{i}"));
        let p = producer.clone();
        calls.push(tokio::spawn(async move { p.deliver(&ex).await }));
    }
    for c in calls {
        c.await.unwrap().unwrap();
    }
    // A retry of an entry already stored is acknowledged but not stored again.
    let retry = Exchange::new("a-0")
        .with_header("group", "a")
        .with_header("key", format!("{name}-0"));
    producer.deliver(&retry).await.unwrap();

    let count = stream.info().await.unwrap().state.messages;
    let mut stored = Vec::new();
    for seq in 1..=count {
        let msg = stream.get_raw_message(seq).await.unwrap();
        let id = msg
            .headers
            .get(async_nats::header::NATS_MESSAGE_ID)
            .map(|v| v.as_str().to_string());
        stored.push((String::from_utf8(msg.payload.to_vec()).unwrap(), id));
    }
    js.delete_stream(&name).await.unwrap();

    assert_eq!(count, 200);
    let mut last_per_group = std::collections::HashMap::new();
    for (body, id) in stored {
        let (g, i) = body.split_once('-').unwrap();
        let i: usize = i.parse().unwrap();
        if let Some(prev) = last_per_group.insert(g.to_string(), i) {
            assert!(prev < i, "group {g}: {i} stored after {prev}");
        }
        assert_eq!(id, Some(format!("{name}-{i}")));
    }
}

#[tokio::test]
async fn component_builds_a_sink_that_publishes() {
    let Some(url) = service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let (js, name, subject, mut stream) = temp_stream(&url, "CAMEL_SINKS_C").await;
    let component = NatsComponent::with_registry(BatcherRegistry::new());
    let uri = EndpointUri::parse(&format!(
        "nats:{subject}?servers={url}&jetstream=true&groupKey=${{header.g}}&lingerMs=1&headers=g"
    ))
    .unwrap();
    let ctx = HeaderContext {
        route_id: Some("r".into()),
    };
    let endpoint = component.endpoint(uri, &ctx).unwrap();
    let producer = endpoint.producer().unwrap();
    for i in 0..3 {
        let ex = Exchange::new(format!("m{i}")).with_header("g", "x");
        producer.process(ex).await.unwrap();
    }
    let count = stream.info().await.unwrap().state.messages;
    let first = stream.get_raw_message(1).await.unwrap();
    js.delete_stream(&name).await.unwrap();
    assert_eq!(count, 3);
    assert_eq!(
        first
            .headers
            .get("g")
            .map(|v| v.as_str().to_string())
            .as_deref(),
        Some("x")
    );
}

#[tokio::test]
async fn unreachable_server_fails_each_caller() {
    let producer = SinkProducer::new(
        NatsCodec::new("camel.nowhere", "nats://127.0.0.1:1", true)
            .with_connect_timeout(Duration::from_millis(200)),
        BatchConfig::default(),
        SinkOptions::default(),
        BatcherRegistry::new(),
    );
    let err = producer.deliver(&Exchange::new("x")).await.unwrap_err();
    assert!(err.to_string().contains("NATS"), "{err}");
}

#[test]
fn unknown_parameters_are_rejected_with_a_suggestion() {
    let component = NatsComponent::with_registry(BatcherRegistry::new());
    let ctx = HeaderContext { route_id: None };
    let uri = EndpointUri::parse("nats:orders?max_entrys=5").unwrap();
    let err = component.endpoint(uri, &ctx).unwrap_err().to_string();
    assert!(
        err.contains("max_entrys") && err.contains("max_entries"),
        "{err}"
    );
    let uri = EndpointUri::parse("nats:?jetstream=true").unwrap();
    assert!(component.endpoint(uri, &ctx).is_err());
}

#[tokio::test]
async fn stream_parameter_creates_a_missing_stream() {
    let Some(url) = service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let name = unique("CAMEL_SINKS_S");
    let subject = format!("camel.sinks.{}", name.to_lowercase());
    let component = NatsComponent::with_registry(BatcherRegistry::new());
    let uri = EndpointUri::parse(&format!("nats:{subject}?servers={url}&stream={name}")).unwrap();
    let ctx = HeaderContext { route_id: None };
    let producer = component.endpoint(uri, &ctx).unwrap().producer().unwrap();
    let sent = producer.process(Exchange::new("hello")).await;
    let js = jetstream::new(async_nats::connect(&url).await.unwrap());
    let mut stream = js.get_stream(&name).await.unwrap();
    let count = stream.info().await.unwrap().state.messages;
    js.delete_stream(&name).await.unwrap();
    sent.unwrap();
    assert_eq!(count, 1);
}

#[tokio::test]
async fn core_nats_publishes_in_order_without_jetstream() {
    let Some(url) = service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let subject = format!("camel.sinks.core.{}", unique("c").to_lowercase());
    let client = async_nats::connect(&url).await.unwrap();
    let mut sub = client.subscribe(subject.clone()).await.unwrap();
    client.flush().await.unwrap();
    let producer = SinkProducer::new(
        NatsCodec::new(&subject, &url, false),
        BatchConfig::default(),
        options(),
        BatcherRegistry::new(),
    );
    let exchanges = (0..20)
        .map(|i| Exchange::new(format!("m{i}")).with_header("group", "g"))
        .collect();
    let results = camel_sinks::testing::deliver_all(&producer, exchanges).await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    let mut got = Vec::new();
    while got.len() < 20 {
        let msg = futures::StreamExt::next(&mut sub).await.unwrap();
        got.push(String::from_utf8(msg.payload.to_vec()).unwrap());
    }
    let expected: Vec<String> = (0..20).map(|i| format!("m{i}")).collect();
    assert_eq!(got, expected);
}

/// The route step sets what JetStream answered on each exchange: stream, sequence, and
/// whether the stream dropped it as a duplicate of an earlier `Nats-Msg-Id`.
#[tokio::test]
async fn the_exchange_carries_the_jetstream_ack() {
    let Some(url) = service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let (js, name, subject, _stream) = temp_stream(&url, "CAMEL_SINKS_ACK").await;
    let component = NatsComponent::with_registry(BatcherRegistry::new());
    let uri = EndpointUri::parse(&format!(
        "nats:{subject}?servers={url}&idempotency_key=${{header.key}}&linger_ms=1"
    ))
    .unwrap();
    let ctx = HeaderContext { route_id: None };
    let producer = component.endpoint(uri, &ctx).unwrap().producer().unwrap();
    let mut acks = Vec::new();
    for key in ["a", "b", "a"] {
        let ex = Exchange::new(format!("m-{key}")).with_header("key", key);
        let out = producer.process(ex).await.unwrap();
        let header = |h: &str| out.header(h).map(ToString::to_string).unwrap_or_default();
        acks.push((
            header(STREAM_HEADER),
            header(SEQUENCE_HEADER),
            header(DUPLICATE_HEADER),
        ));
    }
    js.delete_stream(&name).await.unwrap();
    let expected = |seq: &str, dup: &str| (name.clone(), seq.to_string(), dup.to_string());
    assert_eq!(
        acks,
        [
            expected("1", "false"),
            expected("2", "false"),
            expected("1", "true")
        ]
    );
}
