//! The Pub/Sub subscription consumer against Google's emulator: acknowledged only after
//! success, a failed message handed back and redelivered, a long route's deadline
//! extended, one ordering key never run twice at once (and its order kept across a
//! failure), Camel's headers without `Camel*` attributes, and `google-pubsub:` as Camel
//! spells it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use camel_api::test_support::service_from_env;
use camel_api::{BoxProcessor, CamelError, Component, ConsumerContext, EndpointUri, Exchange};
use camel_sinks::pubsub::{
    GooglePubsubComponent, PubSubComponent, ACK_ID_HEADER, ATTRIBUTES_HEADER, MESSAGE_ID_HEADER,
    ORDERING_KEY_HEADER, PUBLISH_TIME_HEADER,
};
use camel_sinks::testing::HeaderContext;
use camel_sinks::BatcherRegistry;
use serde_json::{json, Value as Json};
use tokio::sync::Notify;

/// A topic and a subscription (ordered, 10 s deadline) of their own, for one test.
struct Subscription {
    http: reqwest::Client,
    base: String,
    project: String,
    name: String,
}

impl Subscription {
    async fn create(host: &str) -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let s = Subscription {
            // Bounded, so a hung emulator fails the test instead of holding it.
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .unwrap(),
            base: format!("http://{host}/v1"),
            project: "camel-consumer".into(),
            name: format!("c{}x{nanos}", std::process::id()),
        };
        let r = s.http.put(s.url("topics")).send().await.unwrap();
        assert!(r.status().is_success(), "{}", r.text().await.unwrap());
        let body = json!({
            "topic": format!("projects/{}/topics/{}", s.project, s.name),
            "enableMessageOrdering": true,
            "ackDeadlineSeconds": 10,
        });
        let r = s
            .http
            .put(s.url("subscriptions"))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{}", r.text().await.unwrap());
        s
    }

    fn url(&self, kind: &str) -> String {
        format!(
            "{}/projects/{}/{kind}/{}",
            self.base, self.project, self.name
        )
    }

    /// Publishes (data, ordering key, attributes) in one request.
    async fn publish(&self, messages: &[(&str, &str, Json)]) {
        let list: Vec<Json> = messages
            .iter()
            .map(|(data, key, attributes)| {
                let data = base64::engine::general_purpose::STANDARD.encode(data);
                json!({"data": data, "orderingKey": key, "attributes": attributes})
            })
            .collect();
        let r = self
            .http
            .post(format!("{}:publish", self.url("topics")))
            .json(&json!({ "messages": list }))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    }

    /// How many messages a pull that returns at once gets (and hands back at once).
    async fn left(&self) -> usize {
        let pulled: Json = self
            .http
            .post(format!("{}:pull", self.url("subscriptions")))
            .json(&json!({"maxMessages": 1000, "returnImmediately": true}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let ids: Vec<Json> = pulled["receivedMessages"]
            .as_array()
            .map(|a| a.iter().map(|m| m["ackId"].clone()).collect())
            .unwrap_or_default();
        if !ids.is_empty() {
            let _ = self
                .http
                .post(format!("{}:modifyAckDeadline", self.url("subscriptions")))
                .json(&json!({"ackIds": ids, "ackDeadlineSeconds": 0}))
                .send()
                .await;
        }
        ids.len()
    }

    async fn delete(self) {
        let _ = self.http.delete(self.url("subscriptions")).send().await;
        let _ = self.http.delete(self.url("topics")).send().await;
    }
}

fn start(
    component: &dyn Component,
    uri: &str,
    pipeline: BoxProcessor,
) -> (ConsumerContext, tokio::task::JoinHandle<()>) {
    let hc = HeaderContext {
        route_id: Some("pubsub-test".into()),
    };
    let consumer = component
        .endpoint(EndpointUri::parse(uri).unwrap(), &hc)
        .unwrap()
        .consumer()
        .unwrap();
    let ctx = ConsumerContext::for_pipeline("pubsub-test", pipeline);
    let run_ctx = ctx.clone();
    let handle = tokio::spawn(async move { consumer.run(run_ctx).await.unwrap() });
    (ctx, handle)
}

fn pubsub() -> PubSubComponent {
    PubSubComponent::with_registry(BatcherRegistry::new())
}

/// The exchanges the route saw, in arrival order.
#[derive(Default)]
struct Seen(Mutex<Vec<Exchange>>, Notify);

impl Seen {
    /// Records `ex`; returns its body and how many times this body was seen before.
    fn record(&self, ex: &Exchange) -> (String, usize) {
        let body = ex.message.body.as_text().unwrap_or_default().to_string();
        let mut all = self.0.lock().unwrap();
        let before = all
            .iter()
            .filter(|e| e.message.body.as_text().as_deref() == Some(body.as_str()))
            .count();
        eprintln!("seen {body} {before}");
        all.push(ex.clone());
        self.1.notify_waiters();
        (body, before)
    }

    fn bodies(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|e| e.message.body.as_text().unwrap_or_default().to_string())
            .collect()
    }

    async fn wait_for(&self, n: usize, within: Duration) {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let notified = self.1.notified();
            if self.0.lock().unwrap().len() >= n {
                return;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                // One lock at a time: a guard inside `panic!`'s arguments would live
                // while `bodies` locks again, and a std mutex locked twice hangs.
                let bodies = self.bodies();
                panic!(
                    "only {} of {n} deliveries arrived: {bodies:?}",
                    bodies.len()
                );
            }
        }
    }
}

/// Polls (every 50 ms, at most `within`) until the subscription hands out nothing.
async fn until_drained(s: &Subscription, within: Duration) -> usize {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let left = s.left().await;
        if left == 0 || tokio::time::Instant::now() > deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_failed_message_comes_back_and_the_rest_are_acknowledged_with_camels_headers() {
    failed_message_comes_back(Transport::Stream).await;
}

#[tokio::test]
async fn a_failed_message_comes_back_and_the_rest_are_acknowledged_by_rest_pull() {
    failed_message_comes_back(Transport::Pull).await;
}

async fn failed_message_comes_back(transport: Transport) {
    let logs = transport.capture();
    let Some(host) = service_from_env("CAMEL_TEST_PUBSUB_EMULATOR") else {
        return;
    };
    let s = Subscription::create(&host).await;
    let attributes = json!({"order-id": "42", "CamelSqlQuery": "DROP TABLE orders"});
    let messages: Vec<(String, Json)> = (0..5)
        .map(|i| (format!("m{i}"), attributes.clone()))
        .collect();
    let list: Vec<(&str, &str, Json)> = messages
        .iter()
        .map(|(d, a)| (d.as_str(), "", a.clone()))
        .collect();
    s.publish(&list).await;
    let seen = Arc::new(Seen::default());
    let sn = seen.clone();
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let sn = sn.clone();
        async move {
            let (body, before) = sn.record(&ex);
            if body == "m2" && before == 0 {
                return Err(CamelError::processor("m2 failed once"));
            }
            Ok(ex)
        }
    });
    let uri = format!(
        "pubsub:projects/{}/subscriptions/{}?emulator_host={host}&maxMessagesPerPoll=10{}",
        s.project,
        s.name,
        transport.parameter()
    );
    let (ctx, run) = start(&pubsub(), &uri, pipeline);
    seen.wait_for(6, Duration::from_secs(20)).await;
    // Everything acknowledged: a pull that returns at once finds nothing.
    let left = until_drained(&s, Duration::from_secs(10)).await;
    ctx.cancellation().cancel();
    run.await.unwrap();
    let mut bodies = seen.bodies();
    bodies.sort();
    assert_eq!(bodies, ["m0", "m1", "m2", "m2", "m3", "m4"]);
    assert_eq!(left, 0, "acknowledged after success");
    let first = seen.0.lock().unwrap()[0].clone();
    let header = |n: &str| first.header(n).map(|v| v.to_string()).unwrap_or_default();
    assert!(!header(MESSAGE_ID_HEADER).is_empty());
    assert!(!header(ACK_ID_HEADER).is_empty());
    assert!(!header(PUBLISH_TIME_HEADER).is_empty());
    assert_eq!(header("order-id"), "42");
    assert!(
        first.header("CamelSqlQuery").is_none(),
        "no Camel* header from outside"
    );
    assert!(header(ATTRIBUTES_HEADER).contains("order-id"));
    transport.check(&logs);
    s.delete().await;
}

#[tokio::test]
async fn a_long_route_keeps_its_message_by_extending_the_deadline() {
    long_route_keeps_its_message(Transport::Stream).await;
}

#[tokio::test]
async fn a_long_route_keeps_its_message_by_extending_the_deadline_by_rest_pull() {
    long_route_keeps_its_message(Transport::Pull).await;
}

async fn long_route_keeps_its_message(transport: Transport) {
    let logs = transport.capture();
    let Some(host) = service_from_env("CAMEL_TEST_PUBSUB_EMULATOR") else {
        return;
    };
    let s = Subscription::create(&host).await;
    s.publish(&[("long", "", json!({}))]).await;
    let seen = Arc::new(Seen::default());
    let sn = seen.clone();
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let sn = sn.clone();
        async move {
            sn.record(&ex);
            // Past the subscription's 10 s deadline: without an extension the other pull
            // loop would get the message again meanwhile.
            tokio::time::sleep(Duration::from_secs(13)).await;
            Ok(ex)
        }
    });
    let uri = format!(
        "pubsub:projects/{}/subscriptions/{}?emulator_host={host}&concurrent_consumers=2&ack_deadline=10{}",
        s.project,
        s.name,
        transport.parameter()
    );
    let (ctx, run) = start(&pubsub(), &uri, pipeline);
    seen.wait_for(1, Duration::from_secs(10)).await;
    let started = tokio::time::Instant::now();
    // Let the route finish and its message be acknowledged.
    let left = loop {
        let left = until_drained(&s, Duration::from_secs(20)).await;
        if started.elapsed() > Duration::from_secs(14) {
            break left;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    ctx.cancellation().cancel();
    run.await.unwrap();
    assert_eq!(seen.bodies(), ["long"], "delivered once");
    assert_eq!(left, 0);
    transport.check(&logs);
    s.delete().await;
}

#[tokio::test]
async fn one_ordering_key_runs_one_message_at_a_time_in_order_across_a_failure() {
    ordering_key_in_order(Transport::Stream).await;
}

#[tokio::test]
async fn one_ordering_key_runs_in_order_across_a_failure_by_rest_pull() {
    ordering_key_in_order(Transport::Pull).await;
}

async fn ordering_key_in_order(transport: Transport) {
    let logs = transport.capture();
    let Some(host) = service_from_env("CAMEL_TEST_PUBSUB_EMULATOR") else {
        return;
    };
    let s = Subscription::create(&host).await;
    const PER_KEY: usize = 10;
    let keys = ["k0", "k1", "k2", "k3"];
    let data: Vec<(String, &str)> = (0..PER_KEY)
        .flat_map(|i| keys.iter().map(move |k| (format!("{k}-{i}"), *k)))
        .collect();
    let list: Vec<(&str, &str, Json)> = data
        .iter()
        .map(|(d, k)| (d.as_str(), *k, json!({})))
        .collect();
    s.publish(&list).await;
    let running: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let overlaps = Arc::new(Mutex::new(0usize));
    let seen = Arc::new(Seen::default());
    let (sn, rn, ov) = (seen.clone(), running.clone(), overlaps.clone());
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let (sn, rn, ov) = (sn.clone(), rn.clone(), ov.clone());
        async move {
            let key = ex
                .header(ORDERING_KEY_HEADER)
                .map(|v| v.to_string())
                .unwrap_or_default();
            {
                let mut r = rn.lock().unwrap();
                let n = r.entry(key.clone()).or_default();
                *n += 1;
                if *n > 1 {
                    *ov.lock().unwrap() += 1;
                }
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
            *rn.lock().unwrap().entry(key).or_default() -= 1;
            let (body, before) = sn.record(&ex);
            if body == "k1-3" && before == 0 {
                return Err(CamelError::processor("k1-3 failed once"));
            }
            Ok(ex)
        }
    });
    let uri = format!(
        "google-pubsub:{}:{}?emulatorHost={host}&maxMessagesPerPoll=8&concurrentConsumers=3{}",
        s.project,
        s.name,
        transport.camel_parameter()
    );
    let component = GooglePubsubComponent(pubsub());
    let (ctx, run) = start(&component, &uri, pipeline);
    seen.wait_for(keys.len() * PER_KEY + 1, Duration::from_secs(30))
        .await;
    let left = until_drained(&s, Duration::from_secs(10)).await;
    ctx.cancellation().cancel();
    run.await.unwrap();
    assert_eq!(*overlaps.lock().unwrap(), 0, "a key ran twice at once");
    assert_eq!(left, 0);
    let bodies = seen.bodies();
    let k1: Vec<&String> = bodies.iter().filter(|b| b.starts_with("k1-")).collect();
    let expected_k1: Vec<String> = (0..3)
        .map(|i| format!("k1-{i}"))
        .chain(std::iter::once("k1-3".to_string()))
        .chain((3..PER_KEY).map(|i| format!("k1-{i}")))
        .collect();
    assert_eq!(
        k1,
        expected_k1.iter().collect::<Vec<_>>(),
        "k1's rest waited for its failed message"
    );
    for key in ["k0", "k2", "k3"] {
        let got: Vec<&String> = bodies
            .iter()
            .filter(|b| b.starts_with(&format!("{key}-")))
            .collect();
        let want: Vec<String> = (0..PER_KEY).map(|i| format!("{key}-{i}")).collect();
        assert_eq!(got, want.iter().collect::<Vec<_>>(), "{key} in order");
    }
    transport.check(&logs);
    s.delete().await;
}

/// How the consumer receives: gRPC streaming pull (the default) or REST pull.
#[derive(Clone, Copy, PartialEq)]
enum Transport {
    Stream,
    Pull,
}

impl Transport {
    /// Against the emulator, REST pull is the default (ADR 0171).
    fn parameter(self) -> &'static str {
        match self {
            Transport::Stream => "&synchronous_pull=false",
            Transport::Pull => "",
        }
    }

    fn camel_parameter(self) -> &'static str {
        match self {
            Transport::Stream => "&synchronousPull=false",
            Transport::Pull => "&synchronousPull=true",
        }
    }

    /// The consumer's log lines of this test (its tasks run on the test's one thread).
    fn capture(self) -> (Arc<Mutex<Vec<u8>>>, tracing::subscriber::DefaultGuard) {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::DEBUG)
            .with_writer(move || Capture(sink.clone()))
            .finish();
        (logs, tracing::subscriber::set_default(subscriber))
    }

    /// The transport asked for is the one that ran.
    fn check(self, logs: &(Arc<Mutex<Vec<u8>>>, tracing::subscriber::DefaultGuard)) {
        let text = String::from_utf8_lossy(&logs.0.lock().unwrap()).into_owned();
        let streamed = text.contains("Pub/Sub stream opened");
        assert_eq!(streamed, self == Transport::Stream, "transport: {text}");
    }
}

struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_stream_runs_no_more_than_max_messages_per_poll_at_once() {
    let logs = Transport::Stream.capture();
    let Some(host) = service_from_env("CAMEL_TEST_PUBSUB_EMULATOR") else {
        return;
    };
    let s = Subscription::create(&host).await;
    let data: Vec<String> = (0..60).map(|i| format!("b{i}")).collect();
    let list: Vec<(&str, &str, Json)> = data.iter().map(|d| (d.as_str(), "", json!({}))).collect();
    s.publish(&list).await;
    let running = Arc::new(Mutex::new((0usize, 0usize)));
    let seen = Arc::new(Seen::default());
    let (sn, rn) = (seen.clone(), running.clone());
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let (sn, rn) = (sn.clone(), rn.clone());
        async move {
            {
                let mut r = rn.lock().unwrap();
                r.0 += 1;
                r.1 = r.1.max(r.0);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
            rn.lock().unwrap().0 -= 1;
            sn.record(&ex);
            Ok(ex)
        }
    });
    // The emulator ignores the stream's flow control and sends everything at once.
    let uri = format!(
        "pubsub:projects/{}/subscriptions/{}?emulator_host={host}&maxMessagesPerPoll=5{}",
        s.project,
        s.name,
        Transport::Stream.parameter()
    );
    let (ctx, run) = start(&pubsub(), &uri, pipeline);
    seen.wait_for(data.len(), Duration::from_secs(30)).await;
    let left = until_drained(&s, Duration::from_secs(10)).await;
    ctx.cancellation().cancel();
    run.await.unwrap();
    let most = running.lock().unwrap().1;
    assert!(most <= 5, "{most} exchanges ran at once");
    assert!(most > 1, "a part's messages run side by side");
    let mut bodies = seen.bodies();
    bodies.sort();
    bodies.dedup();
    assert_eq!(bodies.len(), data.len());
    assert_eq!(left, 0);
    Transport::Stream.check(&logs);
    s.delete().await;
}

#[test]
fn endpoints_refuse_what_they_cannot_do() {
    let hc = HeaderContext { route_id: None };
    let c = pubsub();
    let parse = |u: &str| EndpointUri::parse(u).unwrap();
    let sub = c
        .endpoint(
            parse("pubsub:projects/p/subscriptions/s?emulator_host=h:1"),
            &hc,
        )
        .unwrap();
    assert!(
        sub.producer().is_err(),
        "a subscription is not published to"
    );
    assert!(sub.consumer().is_ok());
    let topic = c
        .endpoint(parse("pubsub:projects/p/topics/t?emulator_host=h:1"), &hc)
        .unwrap();
    assert!(topic.consumer().is_err(), "a topic is not read");
    assert!(c
        .endpoint(parse("pubsub:projects/p/topics/t?ack_mode=AUTO"), &hc)
        .is_err());
    assert!(c
        .endpoint(
            parse("pubsub:projects/p/subscriptions/s?ack_mode=MAYBE"),
            &hc
        )
        .is_err());
    let g = GooglePubsubComponent(pubsub());
    let both = g
        .endpoint(
            parse("google-pubsub:p:orders?emulatorHost=h:1&ackMode=NONE&synchronousPull=true"),
            &hc,
        )
        .unwrap();
    assert!(both.producer().is_ok() && both.consumer().is_ok());
    assert!(g.endpoint(parse("google-pubsub:orders"), &hc).is_err());
}
