//! The `rabbitmq:` component against the local RabbitMQ (`CAMEL_TEST_RABBITMQ_URL`):
//! ack after success, requeue after a failure, `prefetch_count` backpressure, and
//! publisher confirms. Headers, retries and dead letters: `failures.rs`.

mod support;

use std::sync::Arc;
use std::time::Duration;

use camel_api::test_support::{service_from_env, SlowRoute};
use camel_api::{BoxProcessor, CamelError, Exchange};
use camel_rabbitmq::REDELIVERED_HEADER;
use lapin::options::BasicGetOptions;
use tokio::sync::Notify;

use support::{channel, delete, endpoint, message_count, produce, start, unique, Seen};

#[tokio::test]
async fn a_failed_exchange_is_requeued_and_redelivered_then_acked() {
    let Some(url) = service_from_env("CAMEL_TEST_RABBITMQ_URL") else {
        return;
    };
    let exchange = unique("camel.rmq.requeue");
    // No retries in the consumer: the first failure goes straight back to the queue.
    let uri = format!(
        "rabbitmq:{exchange}?addresses={url}&routing_key=k&auto_declare=true&maximum_retry_attempts=0&retry_delay=20ms"
    );
    let seen = Arc::new(Seen::default());
    let s = seen.clone();
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let s = s.clone();
        async move {
            let body = s.record(&ex);
            let redelivered = ex
                .header(REDELIVERED_HEADER)
                .is_some_and(|v| v.to_string() == "true");
            if body == "m3" && !redelivered {
                return Err(CamelError::processor("m3 failed once"));
            }
            Ok(ex)
        }
    });
    let (ctx, run) = start(&uri, pipeline);
    // The consumer declares and binds the queue; publishing with mandatory fails until
    // the binding exists, so retry the first publish until it is routed.
    let producer = endpoint(&format!("{uri}&mandatory=true"))
        .producer()
        .unwrap();
    // Bounded by time, not by a count of tries: on a loaded machine the consumer's
    // declare-and-bind can take longer than a few hundred quick publishes.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut routed = false;
    while tokio::time::Instant::now() < deadline {
        if producer.process(Exchange::new("m0")).await.is_ok() {
            routed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(routed, "the queue was never bound");
    produce(&uri, (1..6).map(|i| format!("m{i}"))).await;
    seen.wait_for(7).await;
    ctx.cancellation().cancel();
    run.await.unwrap();

    let all = seen.0.lock().unwrap().clone();
    let m3: Vec<bool> = all
        .iter()
        .filter(|(b, _)| b == "m3")
        .map(|(_, r)| *r)
        .collect();
    assert_eq!(m3, vec![false, true], "{all:?}");
    assert_eq!(all.len(), 7, "{all:?}");
    let (_conn, ch) = channel(&url).await;
    let (left, consumers) = message_count(&ch, &exchange).await;
    assert_eq!((left, consumers), (0, 0), "everything was acked");
    delete(&ch, &[&exchange]).await;
}

#[tokio::test]
async fn a_delivery_is_acked_only_after_the_route_succeeded() {
    let Some(url) = service_from_env("CAMEL_TEST_RABBITMQ_URL") else {
        return;
    };
    let exchange = unique("camel.rmq.ack");
    let uri = format!("rabbitmq:{exchange}?addresses={url}");
    let (_conn, ch) = channel(&url).await;
    let entered = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let (e, r) = (entered.clone(), release.clone());
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let (e, r) = (e.clone(), r.clone());
        async move {
            let released = r.notified();
            e.notify_one();
            released.await;
            Ok(ex)
        }
    });
    let (ctx, run) = start(&uri, pipeline);
    let mut published = false;
    let producer = endpoint(&format!("{uri}&mandatory=true"))
        .producer()
        .unwrap();
    for _ in 0..200 {
        if producer.process(Exchange::new("held")).await.is_ok() {
            published = true;
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(published);
    entered.notified().await;
    // Held by the route: stop the consumer's connection by cancelling after release is
    // impossible, so look from a second channel: the message is not ready (it is
    // unacknowledged), and a basic_get finds nothing.
    let got = ch
        .basic_get(&exchange, BasicGetOptions { no_ack: false })
        .await
        .unwrap();
    assert!(got.is_none(), "the held message must not be ready");
    release.notify_one();
    ctx.cancellation().cancel();
    run.await.unwrap();
    let (left, _) = message_count(&ch, &exchange).await;
    assert_eq!(left, 0, "acked after the route finished");
    delete(&ch, &[&exchange]).await;
}

#[tokio::test]
async fn an_unacked_delivery_returns_to_the_queue_when_the_consumer_dies() {
    let Some(url) = service_from_env("CAMEL_TEST_RABBITMQ_URL") else {
        return;
    };
    let exchange = unique("camel.rmq.abort");
    let uri = format!("rabbitmq:{exchange}?addresses={url}");
    let (_conn, ch) = channel(&url).await;
    let entered = Arc::new(Notify::new());
    let e = entered.clone();
    let pipeline = BoxProcessor::from_fn(move |_ex: Exchange| {
        let e = e.clone();
        async move {
            e.notify_one();
            std::future::pending::<()>().await;
            Err(CamelError::processor("never"))
        }
    });
    let (_ctx, run) = start(&uri, pipeline);
    let producer = endpoint(&format!("{uri}&mandatory=true"))
        .producer()
        .unwrap();
    let mut published = false;
    for _ in 0..200 {
        if producer.process(Exchange::new("in-flight")).await.is_ok() {
            published = true;
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(published);
    entered.notified().await;
    // The process "dies": the consumer task and its connection go away un-acked.
    run.abort();
    let _ = run.await;
    let mut back = None;
    for _ in 0..500 {
        back = ch
            .basic_get(&exchange, BasicGetOptions { no_ack: true })
            .await
            .unwrap();
        if back.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let back = back.expect("the un-acked delivery is back in the queue");
    assert_eq!(back.delivery.data, b"in-flight");
    assert!(back.delivery.redelivered);
    delete(&ch, &[&exchange]).await;
}

#[tokio::test]
async fn a_slow_route_never_holds_more_than_prefetch_count() {
    let Some(url) = service_from_env("CAMEL_TEST_RABBITMQ_URL") else {
        return;
    };
    let exchange = unique("camel.rmq.prefetch");
    let uri = format!("rabbitmq:{exchange}?addresses={url}&prefetchCount=3");
    let route = SlowRoute::new(40, Duration::from_millis(10));
    let pipeline = route.pipeline();
    // Declare (and bind) before publishing: one consumer start.
    let (ctx, run) = start(&uri, pipeline);
    let producer = endpoint(&format!("{uri}&mandatory=true"))
        .producer()
        .unwrap();
    let mut sent = 0;
    while sent < 40 {
        if producer
            .process(Exchange::new(format!("m{sent}")))
            .await
            .is_ok()
        {
            sent += 1;
        } else {
            tokio::task::yield_now().await;
        }
    }
    route.wait_all(Duration::from_secs(20)).await;
    ctx.cancellation().cancel();
    run.await.unwrap();
    let most = route.most();
    assert!(most <= 3, "{most} deliveries ran at once");
    assert_eq!(most, 3, "the consumer should use its prefetch");
    let (_conn, ch) = channel(&url).await;
    delete(&ch, &[&exchange]).await;
}

#[tokio::test]
async fn a_refused_publish_fails_the_exchange() {
    let Some(url) = service_from_env("CAMEL_TEST_RABBITMQ_URL") else {
        return;
    };
    // Unroutable with mandatory: the broker returns it and the exchange fails.
    let exchange = unique("camel.rmq.unroutable");
    let uri = format!("rabbitmq:{exchange}?addresses={url}&mandatory=true&routing_key=nobody");
    let e = endpoint(&uri)
        .producer()
        .unwrap()
        .process(Exchange::new("x"))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("no queue is bound"), "{e}");
    // A publish to an exchange that does not exist closes the channel: an error, and
    // the next publish opens a new channel.
    let missing = format!(
        "rabbitmq:{}?addresses={url}&auto_declare=false",
        unique("camel.rmq.missing")
    );
    let producer = endpoint(&missing).producer().unwrap();
    assert!(producer.process(Exchange::new("x")).await.is_err());
    assert!(producer.process(Exchange::new("y")).await.is_err());
    let (_conn, ch) = channel(&url).await;
    let _ = ch
        .exchange_delete(&exchange, lapin::options::ExchangeDeleteOptions::default())
        .await;
}
