//! The `nats:` consumers against the local nats-server: the durable JetStream consumer
//! (ack after success, redelivery after a failure, backpressure by `max_ack_pending`,
//! in-progress acks, dead letters after `max_deliver`) and core request/reply.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_nats::jetstream::{self, stream};
use camel_api::test_support::{service_from_env, SlowRoute};
use camel_api::{BoxProcessor, CamelError, Component, ConsumerContext, EndpointUri, Exchange};
use camel_sinks::nats::{NatsComponent, DELIVERED_HEADER, SERVICE_ERROR_HEADER};
use camel_sinks::testing::HeaderContext;
use camel_sinks::BatcherRegistry;
use tokio::sync::Notify;

fn unique(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{prefix}{}x{nanos}", std::process::id())
}

struct Stream {
    js: jetstream::Context,
    name: String,
    subject: String,
}

impl Stream {
    async fn new(url: &str, prefix: &str) -> Stream {
        let client = async_nats::connect(url).await.unwrap();
        let js = jetstream::new(client);
        let name = unique(prefix);
        let subject = format!("camel.consumer.{}", name.to_lowercase());
        js.create_stream(stream::Config {
            name: name.clone(),
            subjects: vec![subject.clone()],
            storage: stream::StorageType::Memory,
            ..Default::default()
        })
        .await
        .unwrap();
        Stream { js, name, subject }
    }

    async fn publish(&self, bodies: impl IntoIterator<Item = String>) {
        let mut acks = Vec::new();
        for body in bodies {
            acks.push(
                self.js
                    .publish(self.subject.clone(), body.into())
                    .await
                    .unwrap(),
            );
        }
        for ack in acks {
            ack.await.unwrap();
        }
    }

    async fn durable_info(&self, durable: &str) -> jetstream::consumer::Info {
        let stream = self.js.get_stream(&self.name).await.unwrap();
        let mut consumer: jetstream::consumer::PullConsumer =
            stream.get_consumer(durable).await.unwrap();
        consumer.info().await.unwrap().clone()
    }

    /// Waits (up to 10 s) until the durable has nothing pending and nothing unacknowledged.
    async fn drained(&self, durable: &str) -> jetstream::consumer::Info {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let info = self.durable_info(durable).await;
            if (info.num_pending == 0 && info.num_ack_pending == 0)
                || tokio::time::Instant::now() > deadline
            {
                return info;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn delete(self) {
        let _ = self.js.delete_stream(&self.name).await;
    }
}

/// Starts the consumer of `uri` on `pipeline`; cancel the returned context to stop it.
fn start(uri: &str, pipeline: BoxProcessor) -> (ConsumerContext, tokio::task::JoinHandle<()>) {
    let component = NatsComponent::with_registry(BatcherRegistry::new());
    let ctx_c = HeaderContext {
        route_id: Some("jetstream-test".into()),
    };
    let endpoint = component
        .endpoint(EndpointUri::parse(uri).unwrap(), &ctx_c)
        .unwrap();
    let consumer = endpoint.consumer().unwrap();
    let ctx = ConsumerContext::for_pipeline("jetstream-test", pipeline);
    let run_ctx = ctx.clone();
    let handle = tokio::spawn(async move {
        consumer.run(run_ctx).await.unwrap();
    });
    (ctx, handle)
}

/// Records every body the route saw with its delivery count; `fail` decides failures.
#[derive(Default)]
struct Seen(Mutex<Vec<(String, i64)>>, Notify);

impl Seen {
    fn pipeline(
        self: &Arc<Self>,
        fail: impl Fn(&str, i64) -> bool + Send + Sync + 'static,
    ) -> BoxProcessor {
        let seen = self.clone();
        let fail = Arc::new(fail);
        BoxProcessor::from_fn(move |ex: Exchange| {
            let (seen, fail) = (seen.clone(), fail.clone());
            async move {
                let body = ex.message.body.as_text().unwrap_or_default().to_string();
                let delivered: i64 = ex
                    .header(DELIVERED_HEADER)
                    .map(|v| v.to_string().parse().unwrap())
                    .unwrap();
                seen.0.lock().unwrap().push((body.clone(), delivered));
                seen.1.notify_waiters();
                if fail(&body, delivered) {
                    return Err(CamelError::processor(format!("{body} failed")));
                }
                Ok(ex)
            }
        })
    }

    async fn wait_for(&self, n: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let notified = self.1.notified();
            if self.0.lock().unwrap().len() >= n {
                return;
            }
            assert!(
                tokio::time::timeout_at(deadline, notified).await.is_ok(),
                "only {} of {n} deliveries arrived",
                self.0.lock().unwrap().len()
            );
        }
    }

    fn all(&self) -> Vec<(String, i64)> {
        self.0.lock().unwrap().clone()
    }
}

#[tokio::test]
async fn a_failed_exchange_is_redelivered_and_every_message_acked_after_success() {
    let Some(url) = service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let s = Stream::new(&url, "CAMEL_JS_REDELIVER_").await;
    s.publish((0..20).map(|i| format!("m{i}"))).await;
    let seen = Arc::new(Seen::default());
    // Every fifth message fails on its first delivery.
    let pipeline = seen.pipeline(|body, delivered| {
        let i: usize = body[1..].parse().unwrap();
        i.is_multiple_of(5) && delivered == 1
    });
    let uri = format!(
        "nats:{}?servers={url}&durable_name=redeliver&nak_delay=10ms&ack_wait=5s",
        s.subject
    );
    let (ctx, run) = start(&uri, pipeline);
    seen.wait_for(24).await;
    let info = s.drained("redeliver").await;
    ctx.cancellation().cancel();
    run.await.unwrap();

    let all = seen.all();
    let mut per_body: HashMap<String, Vec<i64>> = HashMap::new();
    for (body, delivered) in &all {
        per_body.entry(body.clone()).or_default().push(*delivered);
    }
    assert_eq!(per_body.len(), 20);
    for (body, deliveries) in &per_body {
        let i: usize = body[1..].parse().unwrap();
        let expected = if i.is_multiple_of(5) {
            vec![1, 2]
        } else {
            vec![1]
        };
        assert_eq!(deliveries, &expected, "{body}");
    }
    assert_eq!(info.num_ack_pending, 0);
    assert_eq!(info.num_pending, 0);
    assert_eq!(info.ack_floor.stream_sequence, 20);
    s.delete().await;
}

#[tokio::test]
async fn a_message_is_acked_only_after_the_route_succeeded() {
    let Some(url) = service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let s = Stream::new(&url, "CAMEL_JS_ACK_").await;
    s.publish(["only".to_string()]).await;
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
    let uri = format!(
        "nats:{}?servers={url}&durable_name=acklater&ack_wait=5s",
        s.subject
    );
    let (ctx, run) = start(&uri, pipeline);
    entered.notified().await;
    // The route holds the message: the server counts it unacknowledged.
    let holding = s.durable_info("acklater").await;
    assert_eq!(holding.num_ack_pending, 1);
    assert_eq!(holding.ack_floor.stream_sequence, 0);
    release.notify_one();
    let done = s.drained("acklater").await;
    assert_eq!(done.num_ack_pending, 0);
    assert_eq!(done.ack_floor.stream_sequence, 1);
    ctx.cancellation().cancel();
    run.await.unwrap();
    s.delete().await;
}

#[tokio::test]
async fn a_slow_route_never_holds_more_than_max_ack_pending() {
    let Some(url) = service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let s = Stream::new(&url, "CAMEL_JS_BACKPRESSURE_").await;
    s.publish((0..60).map(|i| format!("m{i}"))).await;
    let route = SlowRoute::new(60, Duration::from_millis(15));
    let pipeline = route.pipeline();
    let uri = format!(
        "nats:{}?servers={url}&durableName=slow&maxAckPending=4&ack_wait=5s",
        s.subject
    );
    let (ctx, run) = start(&uri, pipeline);
    route.wait_all(Duration::from_secs(20)).await;
    let info = s.drained("slow").await;
    ctx.cancellation().cancel();
    run.await.unwrap();
    let most = route.most();
    assert!(most <= 4, "{most} exchanges ran at once");
    assert_eq!(most, 4, "the consumer should use the slots it has");
    assert_eq!(info.config.max_ack_pending, 4);
    assert_eq!(info.num_ack_pending, 0);
    s.delete().await;
}

#[tokio::test]
async fn a_long_exchange_is_kept_with_in_progress_acks() {
    let Some(url) = service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let s = Stream::new(&url, "CAMEL_JS_PROGRESS_").await;
    s.publish(["long".to_string()]).await;
    let seen = Arc::new(Seen::default());
    let inner = seen.pipeline(|_, _| false);
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let inner = inner.clone();
        async move {
            let ex = inner.process(ex).await?;
            // Three times ack_wait: without progress acks the server would redeliver.
            tokio::time::sleep(Duration::from_millis(1500)).await;
            Ok(ex)
        }
    });
    let uri = format!(
        "nats:{}?servers={url}&durable_name=progress&ack_wait=500ms",
        s.subject
    );
    let (ctx, run) = start(&uri, pipeline);
    seen.wait_for(1).await;
    let info = s.drained("progress").await;
    ctx.cancellation().cancel();
    run.await.unwrap();
    assert_eq!(seen.all(), vec![("long".to_string(), 1)]);
    assert_eq!(info.num_redelivered, 0);
    assert_eq!(info.ack_floor.stream_sequence, 1);
    s.delete().await;
}

#[tokio::test]
async fn after_max_deliver_a_message_goes_to_the_dead_letter_subject() {
    let Some(url) = service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let s = Stream::new(&url, "CAMEL_JS_DEAD_").await;
    let dead = Stream::new(&url, "CAMEL_JS_DEADLQ_").await;
    s.publish(["good".to_string(), "poison".to_string()]).await;
    let seen = Arc::new(Seen::default());
    let pipeline = seen.pipeline(|body, _| body == "poison");
    let uri = format!(
        "nats:{}?servers={url}&durable_name=dead&max_deliver=3&nak_delay=10ms&dead_letter_subject={}",
        s.subject, dead.subject
    );
    let (ctx, run) = start(&uri, pipeline);
    seen.wait_for(4).await;
    let info = s.drained("dead").await;
    ctx.cancellation().cancel();
    run.await.unwrap();

    let mut poison: Vec<i64> = seen
        .all()
        .into_iter()
        .filter(|(b, _)| b == "poison")
        .map(|(_, d)| d)
        .collect();
    poison.sort_unstable();
    assert_eq!(poison, vec![1, 2, 3]);
    assert_eq!(info.num_ack_pending, 0);
    let mut stored = dead.js.get_stream(&dead.name).await.unwrap();
    assert_eq!(stored.info().await.unwrap().state.messages, 1);
    let letter = stored.get_raw_message(1).await.unwrap();
    assert_eq!(&letter.payload[..], b"poison");
    let reason = letter
        .headers
        .get("CamelNatsDeadLetterReason")
        .map(|v| v.as_str().to_string())
        .unwrap_or_default();
    assert!(reason.contains("poison failed"), "{reason}");
    s.delete().await;
    dead.delete().await;
}

#[tokio::test]
async fn a_core_subscriber_answers_requests_and_a_producer_sends_them() {
    let Some(url) = service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let subject = format!("camel.request.{}", unique("r").to_lowercase());
    let pipeline = BoxProcessor::from_fn(|mut ex: Exchange| async move {
        let body = ex.message.body.as_text().unwrap_or_default().to_string();
        if body == "boom" {
            return Err(CamelError::processor("boom refused"));
        }
        ex.message.body = body.to_uppercase().into();
        ex.message.headers.insert("answered", "yes");
        Ok(ex)
    });
    let (ctx, run) = start(&format!("nats:{subject}?servers={url}"), pipeline);
    // The subscription is up once a request is answered.
    let component = NatsComponent::with_registry(BatcherRegistry::new());
    let hc = HeaderContext { route_id: None };
    let requester = component
        .endpoint(
            EndpointUri::parse(&format!(
                "nats:{subject}?servers={url}&exchange_pattern=InOut&request_timeout=1s"
            ))
            .unwrap(),
            &hc,
        )
        .unwrap()
        .producer()
        .unwrap();
    let mut answer = None;
    for _ in 0..50 {
        match requester.process(Exchange::new("hello")).await {
            Ok(ex) => {
                answer = Some(ex);
                break;
            }
            Err(_) => tokio::task::yield_now().await,
        }
    }
    let answer = answer.expect("the request was answered");
    assert_eq!(answer.message.body.as_text().unwrap_or_default(), "HELLO");
    assert_eq!(
        answer.header("answered").map(|v| v.to_string()).as_deref(),
        Some("yes")
    );

    let client = async_nats::connect(&url).await.unwrap();
    let refused = client
        .request(subject.clone(), "boom".into())
        .await
        .unwrap();
    let error = refused
        .headers
        .as_ref()
        .and_then(|h| h.get(SERVICE_ERROR_HEADER))
        .map(|v| v.as_str().to_string())
        .unwrap_or_default();
    assert!(error.contains("boom refused"), "{error}");
    let failed = requester.process(Exchange::new("boom")).await.unwrap_err();
    assert!(failed.to_string().contains("boom refused"), "{failed}");
    ctx.cancellation().cancel();
    run.await.unwrap();
}

#[tokio::test]
async fn bad_jetstream_options_are_refused_at_the_endpoint() {
    let component = NatsComponent::with_registry(BatcherRegistry::new());
    let hc = HeaderContext { route_id: None };
    for (uri, needle) in [
        ("nats:x?durable_name=a.b", "durable_name"),
        ("nats:x?durable_name=d&max_ack_pending=0", "max_ack_pending"),
        (
            "nats:x?durable_name=d&deliver_policy=sometimes",
            "all, last, new",
        ),
        ("nats:x?durable_name=d&max_deliver=0", "max_deliver"),
        ("nats:x?durable_name=d&ack_wait=soon", "ack_wait"),
        ("nats:x?durable_name=d&max_ack_pendin=3", "max_ack_pending"),
    ] {
        let e = component
            .endpoint(EndpointUri::parse(uri).unwrap(), &hc)
            .unwrap_err();
        assert!(e.to_string().contains(needle), "{uri}: {e}");
    }
}

/// Headers a publisher puts on a message: the framework's control headers (which once
/// replaced a route's SQL and redirected its `http:` calls), one of the consumer's own,
/// a NATS protocol header, and one ordinary header.
fn hostile_headers() -> async_nats::HeaderMap {
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("CamelSqlQuery", "DELETE FROM orders");
    headers.insert("CamelHttpUri", "http://127.0.0.1:9/admin/shutdown");
    headers.insert("CamelHttpMethod", "DELETE");
    headers.insert("camelfilename", "/etc/passwd");
    headers.insert(DELIVERED_HEADER, "99");
    headers.insert(SERVICE_ERROR_HEADER, "forged");
    headers.insert("order-id", "42");
    headers
}

/// A route that keeps every exchange it sees.
fn recording() -> (Arc<Mutex<Vec<Exchange>>>, Arc<Notify>, BoxProcessor) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let arrived = Arc::new(Notify::new());
    let (s, a) = (seen.clone(), arrived.clone());
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let (s, a) = (s.clone(), a.clone());
        async move {
            s.lock().unwrap().push(ex.clone());
            a.notify_waiters();
            Ok(ex)
        }
    });
    (seen, arrived, pipeline)
}

fn assert_only_admitted_headers(ex: &Exchange) {
    for name in [
        "CamelSqlQuery",
        "CamelHttpUri",
        "CamelHttpMethod",
        "camelfilename",
        SERVICE_ERROR_HEADER,
    ] {
        assert!(ex.header(name).is_none(), "{name} reached the exchange");
    }
    assert_eq!(
        ex.header("order-id").map(|v| v.to_string()).as_deref(),
        Some("42")
    );
}

#[tokio::test]
async fn control_headers_of_a_jetstream_message_do_not_reach_the_exchange() {
    let Some(url) = service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let s = Stream::new(&url, "CAMEL_JS_HEADERS_").await;
    s.js.publish_with_headers(s.subject.clone(), hostile_headers(), "b".into())
        .await
        .unwrap()
        .await
        .unwrap();
    let (seen, arrived, pipeline) = recording();
    let uri = format!("nats:{}?servers={url}&durable_name=headers", s.subject);
    let (ctx, run) = start(&uri, pipeline);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while seen.lock().unwrap().is_empty() {
        let _ = tokio::time::timeout_at(deadline, arrived.notified()).await;
        assert!(tokio::time::Instant::now() < deadline, "no delivery");
    }
    ctx.cancellation().cancel();
    run.await.unwrap();
    let ex = seen.lock().unwrap()[0].clone();
    assert_only_admitted_headers(&ex);
    // The consumer's own header is the server's count, not the forged one.
    assert_eq!(
        ex.header(DELIVERED_HEADER)
            .map(|v| v.to_string())
            .as_deref(),
        Some("1")
    );
    s.delete().await;
}

#[tokio::test]
async fn control_headers_of_a_core_nats_message_do_not_reach_the_exchange() {
    let Some(url) = service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let subject = format!("camel.headers.{}", unique("h").to_lowercase());
    let (seen, arrived, pipeline) = recording();
    let (ctx, run) = start(&format!("nats:{subject}?servers={url}"), pipeline);
    let client = async_nats::connect(&url).await.unwrap();
    // A core subscription has no backlog: publish until the subscriber is up.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while seen.lock().unwrap().is_empty() {
        client
            .publish_with_headers(subject.clone(), hostile_headers(), "b".into())
            .await
            .unwrap();
        client.flush().await.unwrap();
        let _ = tokio::time::timeout(Duration::from_millis(50), arrived.notified()).await;
        assert!(tokio::time::Instant::now() < deadline, "no delivery");
    }
    ctx.cancellation().cancel();
    run.await.unwrap();
    let ex = seen.lock().unwrap()[0].clone();
    assert_only_admitted_headers(&ex);
    assert_eq!(
        ex.header("CamelNatsSubject").map(|v| v.to_string()),
        Some(subject)
    );
}
