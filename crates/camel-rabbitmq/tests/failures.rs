//! What comes in from a message and what happens to a message that fails, against the
//! local RabbitMQ (`CAMEL_TEST_RABBITMQ_URL`): control headers stay out, a failed
//! message lands in the declared dead-letter queue, and a poison message is retried a
//! bounded number of times, `retry_delay` apart.

mod support;

use std::sync::Arc;
use std::time::Duration;

use camel_api::test_support::service_from_env;
use camel_api::{BoxProcessor, CamelError, Exchange};
use camel_rabbitmq::{DELIVERY_ATTEMPT_HEADER, REDELIVERED_HEADER, ROUTING_KEY_HEADER};
use lapin::message::BasicGetMessage;
use lapin::options::{BasicGetOptions, BasicPublishOptions, QueueDeclareOptions};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{BasicProperties, Channel};

use support::{
    channel, delete, endpoint, message_count, publish_when_bound, start, unique, Recorder,
};

fn text_header(ex: &Exchange, name: &str) -> Option<String> {
    ex.header(name).map(|v| v.to_string())
}

fn attempt(ex: &Exchange) -> u64 {
    text_header(ex, DELIVERY_ATTEMPT_HEADER)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn redelivered(ex: &Exchange) -> bool {
    text_header(ex, REDELIVERED_HEADER).as_deref() == Some("true")
}

/// A route that records every exchange and fails the ones whose body is `poison`.
fn failing_on_poison(seen: &Arc<Recorder>) -> BoxProcessor {
    let seen = seen.clone();
    BoxProcessor::from_fn(move |ex: Exchange| {
        let seen = seen.clone();
        async move {
            seen.record(&ex);
            if ex.message.body.as_text().as_deref() == Some("poison") {
                return Err(CamelError::processor("poison"));
            }
            Ok(ex)
        }
    })
}

async fn declare(ch: &Channel, queue: &str) {
    ch.queue_declare(
        queue,
        QueueDeclareOptions {
            durable: true,
            ..Default::default()
        },
        FieldTable::default(),
    )
    .await
    .unwrap();
}

/// Polls `queue` until a message is there.
async fn get_one(ch: &Channel, queue: &str) -> BasicGetMessage {
    for _ in 0..500 {
        match ch.basic_get(queue, BasicGetOptions { no_ack: true }).await {
            Ok(Some(m)) => return m,
            Ok(None) => tokio::time::sleep(Duration::from_millis(10)).await,
            Err(e) => panic!("reading queue `{queue}` failed (was it declared?): {e}"),
        }
    }
    panic!("nothing arrived in `{queue}`");
}

fn amqp_text(m: &BasicGetMessage, name: &str) -> Option<String> {
    let headers = m.delivery.properties.headers().as_ref()?;
    match headers.inner().get(name)? {
        AMQPValue::LongString(s) => Some(s.to_string()),
        AMQPValue::ShortString(s) => Some(s.to_string()),
        _ => None,
    }
}

#[tokio::test]
async fn camel_and_rabbitmq_headers_of_a_message_never_reach_the_exchange() {
    let Some(url) = service_from_env("CAMEL_TEST_RABBITMQ_URL") else {
        return;
    };
    let queue = unique("camel.rmq.headers");
    let (_conn, ch) = channel(&url).await;
    declare(&ch, &queue).await;
    let mut headers = FieldTable::default();
    for (name, value) in [
        ("CamelSqlQuery", "drop table orders"),
        ("CamelHttpUri", "http://127.0.0.1:9090/admin/routes"),
        ("CamelHttpMethod", "DELETE"),
        ("camelSqlQuery", "delete from orders"),
        ("CamelRabbitmqRoutingKey", "forged"),
        ("rabbitmq.EXCHANGE_NAME", "forged"),
        ("order-id", "42"),
    ] {
        headers.insert(name.into(), AMQPValue::LongString(value.into()));
    }
    ch.basic_publish(
        "",
        &queue,
        BasicPublishOptions::default(),
        b"hello",
        BasicProperties::default().with_headers(headers),
    )
    .await
    .unwrap()
    .await
    .unwrap();

    let seen = Arc::new(Recorder::default());
    let (ctx, run) = start(
        &format!("rabbitmq:?queue={queue}&addresses={url}"),
        failing_on_poison(&seen),
    );
    seen.wait_for(1).await;
    ctx.cancellation().cancel();
    run.await.unwrap();
    let (ex, _) = seen.seen().remove(0);
    for name in [
        "CamelSqlQuery",
        "camelSqlQuery",
        "CamelHttpUri",
        "CamelHttpMethod",
        "rabbitmq.EXCHANGE_NAME",
    ] {
        assert_eq!(
            text_header(&ex, name),
            None,
            "{name} came in from the message"
        );
    }
    assert_eq!(
        text_header(&ex, ROUTING_KEY_HEADER).as_deref(),
        Some(queue.as_str())
    );
    assert_eq!(text_header(&ex, "order-id").as_deref(), Some("42"));

    // The other way: the producer keeps a route's control headers in the process.
    let out = unique("camel.rmq.headers.out");
    declare(&ch, &out).await;
    let producer = endpoint(&format!(
        "rabbitmq:?queue={out}&routing_key={out}&addresses={url}"
    ))
    .producer()
    .unwrap();
    producer
        .process(
            Exchange::new("out")
                .with_header("CamelSqlQuery", "select 1")
                .with_header("order-id", "43"),
        )
        .await
        .unwrap();
    let m = get_one(&ch, &out).await;
    assert_eq!(amqp_text(&m, "CamelSqlQuery"), None);
    assert_eq!(amqp_text(&m, "order-id").as_deref(), Some("43"));
    delete(&ch, &[&queue, &out]).await;
}

#[tokio::test]
async fn a_failed_message_lands_in_the_declared_dead_letter_queue() {
    let Some(url) = service_from_env("CAMEL_TEST_RABBITMQ_URL") else {
        return;
    };
    // Nothing declared beforehand: the consumer declares the dead-letter exchange, its
    // queue (`<queue>.dlq`) and the binding.
    let exchange = unique("camel.rmq.dlx");
    let dlx = format!("{exchange}.dead");
    let dlq = format!("{exchange}.dlq");
    let uri = format!(
        "rabbitmq:{exchange}?addresses={url}&routing_key=k&dead_letter_exchange={dlx}&maximum_retry_attempts=1&retry_delay=20ms"
    );
    let seen = Arc::new(Recorder::default());
    let (ctx, run) = start(&uri, failing_on_poison(&seen));
    publish_when_bound(&uri, "good").await;
    publish_when_bound(&uri, "poison").await;
    let (_conn, ch) = channel(&url).await;
    let dead = get_one(&ch, &dlq).await;
    ctx.cancellation().cancel();
    run.await.unwrap();

    assert_eq!(dead.delivery.data, b"poison");
    assert_eq!(
        amqp_text(&dead, "x-first-death-reason").as_deref(),
        Some("rejected")
    );
    assert_eq!(
        amqp_text(&dead, "x-first-death-queue").as_deref(),
        Some(exchange.as_str())
    );
    let poison: Vec<u64> = seen
        .seen()
        .iter()
        .filter(|(ex, _)| ex.message.body.as_text().as_deref() == Some("poison"))
        .map(|(ex, _)| attempt(ex))
        .collect();
    assert_eq!(
        poison,
        vec![1, 2],
        "the first try and one retry, then the dead letter"
    );
    let (left, _) = message_count(&ch, &exchange).await;
    assert_eq!(
        left, 0,
        "the good message was acked, the poison one dead-lettered"
    );
    let (parked, _) = message_count(&ch, &dlq).await;
    assert_eq!(parked, 0, "exactly one dead letter");
    delete(&ch, &[&exchange, &dlq]).await;
    let _ = ch
        .exchange_delete(&dlx, lapin::options::ExchangeDeleteOptions::default())
        .await;
    let _ = ch
        .exchange_delete(&exchange, lapin::options::ExchangeDeleteOptions::default())
        .await;
}

#[tokio::test]
async fn a_fanout_dead_letter_exchange_with_a_named_queue_keeps_the_routing_key() {
    let Some(url) = service_from_env("CAMEL_TEST_RABBITMQ_URL") else {
        return;
    };
    let exchange = unique("camel.rmq.dlxfan");
    let dlx = format!("{exchange}.dead");
    let dlq = format!("{exchange}.parked");
    let uri = format!(
        "rabbitmq:{exchange}?addresses={url}&exchange_type=topic&routing_key=orders.*&deadLetterExchange={dlx}&deadLetterExchangeType=fanout&deadLetterQueue={dlq}&maximumRetryAttempts=0"
    );
    let seen = Arc::new(Recorder::default());
    let (ctx, run) = start(&uri, failing_on_poison(&seen));
    publish_when_bound(&format!("{uri}&routingKey=orders.eu"), "poison").await;
    let (_conn, ch) = channel(&url).await;
    let dead = get_one(&ch, &dlq).await;
    ctx.cancellation().cancel();
    run.await.unwrap();
    assert_eq!(dead.delivery.data, b"poison");
    assert_eq!(dead.delivery.routing_key.as_str(), "orders.eu");
    assert_eq!(seen.seen().len(), 1, "maximum_retry_attempts=0: no retry");
    delete(&ch, &[&exchange, &dlq]).await;
    for x in [&dlx, &exchange] {
        let _ = ch
            .exchange_delete(x, lapin::options::ExchangeDeleteOptions::default())
            .await;
    }
}

#[tokio::test]
async fn a_poison_message_with_requeue_is_retried_at_most_the_limit_spaced_by_the_delay() {
    let Some(url) = service_from_env("CAMEL_TEST_RABBITMQ_URL") else {
        return;
    };
    let delay = Duration::from_millis(150);
    let exchange = unique("camel.rmq.poison");
    // The default requeue=true (no dead-letter exchange).
    let uri = format!(
        "rabbitmq:{exchange}?addresses={url}&routing_key=k&maximum_retry_attempts=3&retry_delay=150ms"
    );
    let seen = Arc::new(Recorder::default());
    let (ctx, run) = start(&uri, failing_on_poison(&seen));
    publish_when_bound(&uri, "poison").await;
    // The first delivery's four runs, then the broker's redelivery of it.
    seen.wait_for(5).await;
    ctx.cancellation().cancel();
    run.await.unwrap();

    let seen = seen.seen();
    let runs: Vec<(u64, bool)> = seen
        .iter()
        .map(|(ex, _)| (attempt(ex), redelivered(ex)))
        .collect();
    assert_eq!(
        runs[..5],
        [(1, false), (2, false), (3, false), (4, false), (1, true)],
        "one try and three retries of the delivery, then requeued: {runs:?}"
    );
    for pair in seen.windows(2) {
        let gap = pair[1].1.duration_since(pair[0].1);
        // A timer never fires early; a little slack for the clock reads.
        assert!(
            gap >= delay - Duration::from_millis(5),
            "runs {gap:?} apart, retry_delay is {delay:?}"
        );
    }
    // Stopping gave the message back: it is not lost.
    let (_conn, ch) = channel(&url).await;
    let (left, consumers) = message_count(&ch, &exchange).await;
    assert_eq!((left, consumers), (1, 0));
    delete(&ch, &[&exchange]).await;
    let _ = ch
        .exchange_delete(&exchange, lapin::options::ExchangeDeleteOptions::default())
        .await;
}
