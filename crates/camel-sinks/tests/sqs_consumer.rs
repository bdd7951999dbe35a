//! The SQS consumer against moto: delete only after success, redelivery after a failed
//! exchange, `max_messages_per_poll` backpressure, FIFO group order, and endpoints that
//! build without credentials (the default chain is asked only at the first request).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sqs::types::QueueAttributeName;
use camel_api::test_support::{service_from_env, SlowRoute};
use camel_api::{BoxProcessor, CamelError, Component, ConsumerContext, EndpointUri, Exchange};
use camel_sinks::sqs::{Aws2SqsComponent, SqsComponent, GROUP_ID_HEADER, RECEIVE_COUNT_HEADER};
use camel_sinks::testing::HeaderContext;
use camel_sinks::BatcherRegistry;
use tokio::sync::Notify;

fn client(endpoint: &str) -> aws_sdk_sqs::Client {
    let config = aws_sdk_sqs::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "test"))
        .endpoint_url(endpoint)
        .build();
    aws_sdk_sqs::Client::from_conf(config)
}

struct Queue {
    client: aws_sdk_sqs::Client,
    name: String,
    url: String,
}

impl Queue {
    async fn create(endpoint: &str, fifo: bool) -> Queue {
        let client = client(endpoint);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let mut name = format!("camel-consumer-{}-{nanos}", std::process::id());
        let mut request = client.create_queue();
        if fifo {
            name.push_str(".fifo");
            request = request
                .attributes(QueueAttributeName::FifoQueue, "true")
                .attributes(QueueAttributeName::ContentBasedDeduplication, "true");
        }
        let url = request
            .queue_name(&name)
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap();
        Queue { client, name, url }
    }

    async fn send(&self, body: &str, group: Option<&str>) {
        let mut r = self
            .client
            .send_message()
            .queue_url(&self.url)
            .message_body(body);
        if let Some(g) = group {
            r = r.message_group_id(g);
        }
        r.send().await.unwrap();
    }

    /// (visible, in flight) as SQS counts them.
    async fn counts(&self) -> (u64, u64) {
        let out = self
            .client
            .get_queue_attributes()
            .queue_url(&self.url)
            .attribute_names(QueueAttributeName::All)
            .send()
            .await
            .unwrap();
        let attrs = out.attributes.unwrap_or_default();
        let get = |k: QueueAttributeName| {
            attrs
                .get(&k)
                .and_then(|v| v.parse().ok())
                .unwrap_or(u64::MAX)
        };
        (
            get(QueueAttributeName::ApproximateNumberOfMessages),
            get(QueueAttributeName::ApproximateNumberOfMessagesNotVisible),
        )
    }

    /// Waits (up to 15 s) until the queue is empty: every message deleted.
    async fn emptied(&self) -> (u64, u64) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let c = self.counts().await;
            if c == (0, 0) || tokio::time::Instant::now() > deadline {
                return c;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn delete(self) {
        let _ = self.client.delete_queue().queue_url(&self.url).send().await;
    }
}

fn start(uri: &str, pipeline: BoxProcessor) -> (ConsumerContext, tokio::task::JoinHandle<()>) {
    let component = SqsComponent::with_registry(BatcherRegistry::new());
    let hc = HeaderContext {
        route_id: Some("sqs-test".into()),
    };
    let consumer = component
        .endpoint(EndpointUri::parse(uri).unwrap(), &hc)
        .unwrap()
        .consumer()
        .unwrap();
    let ctx = ConsumerContext::for_pipeline("sqs-test", pipeline);
    let run_ctx = ctx.clone();
    let handle = tokio::spawn(async move { consumer.run(run_ctx).await.unwrap() });
    (ctx, handle)
}

fn uri(q: &Queue, endpoint: &str, extra: &str) -> String {
    format!(
        "sqs:{}?endpoint={endpoint}&access_key=test&secret_key=test&wait_time_seconds=1{extra}",
        q.name
    )
}

#[derive(Default)]
struct Seen(Mutex<Vec<(String, i64, String)>>, Notify);

impl Seen {
    fn record(&self, ex: &Exchange) -> (String, i64) {
        let body = ex.message.body.as_text().unwrap_or_default().to_string();
        let count = ex
            .header(RECEIVE_COUNT_HEADER)
            .and_then(|v| v.to_string().parse().ok())
            .unwrap_or(0);
        let group = ex
            .header(GROUP_ID_HEADER)
            .map(|v| v.to_string())
            .unwrap_or_default();
        self.0.lock().unwrap().push((body.clone(), count, group));
        self.1.notify_waiters();
        (body, count)
    }

    async fn wait_for(&self, n: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
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
}

#[tokio::test]
async fn a_failed_exchange_is_redelivered_after_its_visibility_timeout() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let q = Queue::create(&endpoint, false).await;
    for i in 0..5 {
        q.send(&format!("m{i}"), None).await;
    }
    let seen = Arc::new(Seen::default());
    let s = seen.clone();
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let s = s.clone();
        async move {
            let (body, count) = s.record(&ex);
            if body == "m2" && count == 1 {
                return Err(CamelError::processor("m2 failed once"));
            }
            Ok(ex)
        }
    });
    let (ctx, run) = start(&uri(&q, &endpoint, "&visibility_timeout=1"), pipeline);
    seen.wait_for(6).await;
    let counts = q.emptied().await;
    ctx.cancellation().cancel();
    run.await.unwrap();
    let all = seen.0.lock().unwrap().clone();
    let m2: Vec<i64> = all
        .iter()
        .filter(|(b, ..)| b == "m2")
        .map(|(_, c, _)| *c)
        .collect();
    assert_eq!(m2, vec![1, 2], "{all:?}");
    assert_eq!(all.len(), 6, "{all:?}");
    assert_eq!(counts, (0, 0), "every message deleted after success");
    q.delete().await;
}

#[tokio::test]
async fn a_message_is_deleted_only_after_the_route_succeeded() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let q = Queue::create(&endpoint, false).await;
    q.send("held", None).await;
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
    let (ctx, run) = start(&uri(&q, &endpoint, "&visibility_timeout=30"), pipeline);
    entered.notified().await;
    assert_eq!(q.counts().await, (0, 1), "received, in flight, not deleted");
    release.notify_one();
    assert_eq!(q.emptied().await, (0, 0));
    ctx.cancellation().cancel();
    run.await.unwrap();
    q.delete().await;
}

#[tokio::test]
async fn a_long_exchange_keeps_its_message_invisible() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let q = Queue::create(&endpoint, false).await;
    q.send("long", None).await;
    let seen = Arc::new(Seen::default());
    let s = seen.clone();
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let s = s.clone();
        async move {
            s.record(&ex);
            // Longer than two visibility timeouts: without extension SQS would hand the
            // message out again meanwhile.
            tokio::time::sleep(Duration::from_millis(2500)).await;
            Ok(ex)
        }
    });
    let extra = "&visibility_timeout=1&concurrent_consumers=2";
    let (ctx, run) = start(&uri(&q, &endpoint, extra), pipeline);
    seen.wait_for(1).await;
    assert_eq!(q.emptied().await, (0, 0));
    ctx.cancellation().cancel();
    run.await.unwrap();
    let all = seen.0.lock().unwrap().clone();
    assert_eq!(all.len(), 1, "received once: {all:?}");
    q.delete().await;
}

#[tokio::test]
async fn a_slow_route_never_holds_more_than_max_messages_per_poll() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let q = Queue::create(&endpoint, false).await;
    for i in 0..30 {
        q.send(&format!("m{i}"), None).await;
    }
    let route = SlowRoute::new(30, Duration::from_millis(10));
    let pipeline = route.pipeline();
    let (ctx, run) = start(&uri(&q, &endpoint, "&maxMessagesPerPoll=3"), pipeline);
    route.wait_all(Duration::from_secs(30)).await;
    assert_eq!(q.emptied().await, (0, 0));
    ctx.cancellation().cancel();
    run.await.unwrap();
    let most = route.most();
    assert!(most <= 3, "{most} exchanges ran at once");
    q.delete().await;
}

#[tokio::test]
async fn a_fifo_queue_keeps_each_group_in_order_with_one_in_flight() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let q = Queue::create(&endpoint, true).await;
    for i in 0..10 {
        for g in ["a", "b", "c"] {
            q.send(&format!("{g}-{i}"), Some(g)).await;
        }
    }
    let seen = Arc::new(Seen::default());
    let in_flight: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let overlap = Arc::new(AtomicUsize::new(0));
    let (s, f, o) = (seen.clone(), in_flight.clone(), overlap.clone());
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let (s, f, o) = (s.clone(), f.clone(), o.clone());
        async move {
            let (body, count) = s.record(&ex);
            let group = body[..1].to_string();
            {
                let mut f = f.lock().unwrap();
                let n = f.entry(group.clone()).or_default();
                *n += 1;
                if *n > 1 {
                    o.fetch_add(1, Ordering::SeqCst);
                }
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
            *f.lock().unwrap().entry(group).or_default() -= 1;
            // One failure in group b: its order must survive the redelivery.
            if body == "b-3" && count == 1 {
                return Err(CamelError::processor("b-3 failed once"));
            }
            Ok(ex)
        }
    });
    // One poll loop: moto's FIFO emulation can hand one group to two concurrent
    // receives (real SQS does not); the groups of a batch still run side by side.
    let extra = "&visibility_timeout=1";
    let (ctx, run) = start(&uri(&q, &endpoint, extra), pipeline);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    // Done when every body has succeeded at least once (b-3 needs its second delivery).
    loop {
        let all = seen.0.lock().unwrap().clone();
        let distinct: std::collections::HashSet<_> = all.iter().map(|(b, ..)| b.clone()).collect();
        let b3_retried = all.iter().any(|(b, c, _)| b == "b-3" && *c > 1);
        if distinct.len() == 30 && b3_retried {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{all:?}");
        let notified = seen.1.notified();
        let _ = tokio::time::timeout(Duration::from_secs(2), notified).await;
    }
    assert_eq!(q.emptied().await, (0, 0));
    ctx.cancellation().cancel();
    run.await.unwrap();
    assert_eq!(
        overlap.load(Ordering::SeqCst),
        0,
        "two of one group ran at once"
    );
    let all = seen.0.lock().unwrap().clone();
    for g in ["a", "b", "c"] {
        // The successful runs of a group, in the order they ran, are 0..10.
        let order: Vec<usize> = all
            .iter()
            .filter(|(b, c, grp)| b.starts_with(g) && grp == g && !(b == "b-3" && *c == 1))
            .map(|(b, ..)| b[2..].parse().unwrap())
            .collect();
        let mut firsts = Vec::new();
        for i in order {
            if !firsts.contains(&i) {
                firsts.push(i);
            }
        }
        assert_eq!(firsts, (0..10).collect::<Vec<_>>(), "group {g}: {all:?}");
    }
    q.delete().await;
}

#[test]
fn endpoints_build_without_credentials_and_check_their_options() {
    // Neither parameters nor variables: the default chain is asked at the first request,
    // so building (what `camel validate` does) needs no credentials.
    let hc = HeaderContext { route_id: None };
    let component = SqsComponent::with_registry(BatcherRegistry::new());
    let endpoint = component
        .endpoint(EndpointUri::parse("sqs:orders").unwrap(), &hc)
        .unwrap();
    assert!(endpoint.consumer().is_ok());
    let aws2 = Aws2SqsComponent(component.clone());
    assert_eq!(aws2.scheme(), "aws2-sqs");
    assert!(aws2
        .endpoint(
            EndpointUri::parse("aws2-sqs:orders.fifo?maxMessagesPerPoll=5&concurrentConsumers=2")
                .unwrap(),
            &hc
        )
        .is_ok());
    for (uri, needle) in [
        ("sqs:q?max_messages_per_poll=11", "1 to 10"),
        ("sqs:q?wait_time_seconds=21", "0 to 20"),
        ("sqs:q?visibility_timeout=0", "seconds"),
        ("sqs:q?concurrent_consumers=0", "at least 1"),
        ("sqs:q?max_messages_per_pol=3", "max_messages_per_poll"),
    ] {
        let e = component
            .endpoint(EndpointUri::parse(uri).unwrap(), &hc)
            .unwrap_err();
        assert!(e.to_string().contains(needle), "{uri}: {e}");
    }
}

#[tokio::test]
async fn control_header_attributes_do_not_reach_the_exchange() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    use aws_sdk_sqs::types::MessageAttributeValue;
    let text = |v: &str| {
        MessageAttributeValue::builder()
            .data_type("String")
            .string_value(v)
            .build()
            .unwrap()
    };
    let q = Queue::create(&endpoint, false).await;
    q.client
        .send_message()
        .queue_url(&q.url)
        .message_body("b")
        .message_attributes("CamelSqlQuery", text("DELETE FROM orders"))
        .message_attributes("CamelHttpUri", text("http://127.0.0.1:9/admin"))
        .message_attributes("CamelHttpMethod", text("DELETE"))
        .message_attributes(RECEIVE_COUNT_HEADER, text("99"))
        .message_attributes("order-id", text("42"))
        .send()
        .await
        .unwrap();
    let seen: Arc<Mutex<Vec<Exchange>>> = Arc::default();
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
    let (ctx, run) = start(&uri(&q, &endpoint, ""), pipeline);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while seen.lock().unwrap().is_empty() {
        let _ = tokio::time::timeout(Duration::from_millis(100), arrived.notified()).await;
        assert!(tokio::time::Instant::now() < deadline, "no delivery");
    }
    q.emptied().await;
    ctx.cancellation().cancel();
    run.await.unwrap();
    let ex = seen.lock().unwrap()[0].clone();
    for name in ["CamelSqlQuery", "CamelHttpUri", "CamelHttpMethod"] {
        assert!(ex.header(name).is_none(), "{name} reached the exchange");
    }
    assert_eq!(
        ex.header(RECEIVE_COUNT_HEADER)
            .map(|v| v.to_string())
            .as_deref(),
        Some("1")
    );
    assert_eq!(
        ex.header("order-id").map(|v| v.to_string()).as_deref(),
        Some("42")
    );
    q.delete().await;
}
