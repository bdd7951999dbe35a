//! `to: kafka:` against a real broker: the key, headers and delivery result per exchange,
//! a delivery error failing the exchange, and the outbox relayed to an 8-partition topic
//! with the group key as the record key, read back by a `from: kafka:` route that sees
//! every group in publish order.

mod support;

use std::collections::HashMap;
use std::sync::Arc;

use camel_api::{BoxProcessor, Exchange, Value};
use camel_outbox::OutboxComponent;
use rdkafka::message::Headers;
use rdkafka::Message;
use support::*;
use tokio::sync::mpsc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_producer_sends_key_headers_and_reports_where_the_record_went() {
    let Some(brokers) = brokers() else { return };
    let topic = unique("camel-produce");
    create_topic(&brokers, &topic, 3).await;
    let yaml = format!(
        r#"
- route:
    id: send
    from:
      uri: direct:send
      steps:
        - to:
            uri: "kafka:{topic}"
            parameters: {{ brokers: '{brokers}', key: '${{header.customer}}', headers: 'tenant' }}
- route:
    id: bad
    from:
      uri: direct:bad
      steps:
        - to:
            uri: "kafka:{topic}"
            parameters: {{ brokers: '{brokers}', partition_key: 7, delivery_timeout_ms: 3000 }}
"#
    );
    let ctx = context(&yaml, |_| {}).await;
    let ex = Exchange::new("order-1")
        .with_header("customer", "c42")
        .with_header("tenant", "t1")
        .with_header("secret", "not sent");
    let out = ctx.request("direct:send", ex).await.unwrap();
    let Some(Value::Json(meta)) = out.header(camel_kafka::headers::RECORD_META) else {
        panic!("no delivery result: {:?}", out.message.headers);
    };
    assert_eq!(meta["topic"], topic.as_str());
    let partition = meta["partition"].as_i64().unwrap();
    assert_eq!(meta["offset"], 0);

    let err = ctx
        .request("direct:bad", Exchange::new("x"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("delivering to"), "{err}");
    ctx.stop().await;

    let got = read(&brokers, &topic, 3, 1).await;
    assert_eq!(got.len(), 1);
    let record = &got[0];
    assert_eq!(record.key(), Some(&b"c42"[..]));
    assert_eq!(i64::from(record.partition()), partition);
    assert_eq!(text(record), "order-1");
    let names: Vec<String> = record
        .headers()
        .map(|hs| hs.iter().map(|h| h.key.to_string()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["tenant"]);
}

const GROUPS: usize = 8;
const PER_GROUP: usize = 25;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_outbox_relayed_to_kafka_keeps_every_group_in_publish_order() {
    let Some(brokers) = brokers() else { return };
    let topic = unique("camel-relay");
    let group = unique("g");
    create_topic(&brokers, &topic, 8).await;
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("outbox.db").display());
    let yaml = format!(
        r#"
- route:
    id: publish
    from:
      uri: direct:publish
      steps:
        - to:
            uri: outbox:orders
            parameters: {{ datasource: '{db}', group_key: '${{header.group}}' }}
- route:
    id: relay
    from:
      uri: outbox:orders
      parameters: {{ datasource: '{db}' }}
      steps:
        - to:
            uri: "kafka:{topic}"
            parameters: {{ brokers: '{brokers}' }}
- route:
    id: consume
    from:
      uri: "kafka:{topic}"
      parameters: {{ {consumer} }}
      steps:
        - process: {{ ref: work }}
"#,
        consumer = consumer_parameters(&brokers, &group)
    );
    let (tx, mut seen) = mpsc::unbounded_channel::<(String, String)>();
    let work = BoxProcessor::from_fn(move |ex: Exchange| {
        let tx = tx.clone();
        async move {
            let key = ex
                .header(camel_kafka::headers::KEY)
                .and_then(Value::as_utf8_text)
                .unwrap_or("-")
                .to_string();
            let body = ex.message.body.as_text().unwrap_or_default().to_string();
            let _ = tx.send((key, body));
            Ok(ex)
        }
    });
    let ctx = context(&yaml, |ctx| {
        ctx.add_component(Arc::new(OutboxComponent::new()));
        ctx.add_resource("work", Arc::new(work));
    })
    .await;
    for i in 0..PER_GROUP {
        for g in 0..GROUPS {
            let ex = Exchange::new(format!("g{g}-{i}")).with_header("group", format!("g{g}"));
            ctx.request("direct:publish", ex).await.unwrap();
        }
    }
    let mut per_key: HashMap<String, Vec<String>> = HashMap::new();
    let mut firsts = std::collections::HashSet::new();
    while firsts.len() < GROUPS * PER_GROUP {
        let (key, body) = seen.recv().await.unwrap();
        if firsts.insert(body.clone()) {
            per_key.entry(key).or_default().push(body);
        }
    }
    ctx.stop().await;
    assert_eq!(per_key.len(), GROUPS);
    for g in 0..GROUPS {
        let expected: Vec<String> = (0..PER_GROUP).map(|i| format!("g{g}-{i}")).collect();
        assert_eq!(
            per_key[&format!("g{g}")],
            expected,
            "group g{g} keyed by its group key, in publish order"
        );
    }
}
