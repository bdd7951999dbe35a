//! The consumer and the producer against the local Mosquitto (`CAMEL_TEST_MQTT_URL`,
//! tcp://127.0.0.1:1883): a round trip with user properties, acknowledgement only after
//! the route succeeded, redelivery of a message whose route failed, and the in-flight
//! bound.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use camel_api::test_support::{service_from_env, SlowRoute};
use camel_api::{BoxProcessor, CamelError, Consumer, ConsumerContext, EndpointUri, Exchange};
use camel_mqtt::{
    MqttConsumer, MqttOptions, MqttProducer, Protocol, DUPLICATE_HEADER, QOS_HEADER, TOPIC_HEADER,
};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

const WITHIN: Duration = Duration::from_secs(20);

fn unique(name: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("camel-test/{name}/{}-{nanos}", std::process::id())
}

fn options(uri: &str) -> MqttOptions {
    let protocol = if uri.starts_with("paho-mqtt5:") {
        Protocol::V5
    } else {
        Protocol::V311
    };
    MqttOptions::from_uri(EndpointUri::parse(uri).expect("a URI"), protocol).expect("options")
}

fn producer(uri: &str) -> BoxProcessor {
    Arc::new(MqttProducer::new(options(uri))).processor()
}

/// Every exchange the route saw, by body.
#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<Exchange>>,
    changed: Notify,
}

impl Recorder {
    fn record(&self, ex: &Exchange) {
        self.seen.lock().unwrap().push(ex.clone());
        self.changed.notify_waiters();
    }

    fn bodies(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|e| e.message.body.as_text().unwrap_or_default().to_string())
            .collect()
    }

    fn count(&self, body: &str) -> usize {
        self.bodies().iter().filter(|b| *b == body).count()
    }

    fn find(&self, body: &str) -> Vec<Exchange> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e.message.body.as_text().as_deref() == Some(body))
            .cloned()
            .collect()
    }

    /// Waits until `done` holds, polling on every new exchange; panics after WITHIN.
    async fn until(&self, what: &str, done: impl Fn(&Recorder) -> bool) {
        let deadline = tokio::time::Instant::now() + WITHIN;
        while !done(self) {
            let changed = self.changed.notified();
            if tokio::time::timeout_at(deadline, changed).await.is_err() && !done(self) {
                panic!("{what}: not within {WITHIN:?}; seen {:?}", self.bodies());
            }
        }
    }
}

fn recording(
    seen: &Arc<Recorder>,
    fail: impl Fn(&str) -> bool + Send + Sync + 'static,
) -> BoxProcessor {
    let seen = seen.clone();
    let fail = Arc::new(fail);
    BoxProcessor::from_fn(move |ex: Exchange| {
        let (seen, fail) = (seen.clone(), fail.clone());
        async move {
            seen.record(&ex);
            let body = ex.message.body.as_text().unwrap_or_default().to_string();
            if fail(&body) {
                return Err(CamelError::processor(format!("refusing {body}")));
            }
            Ok(ex)
        }
    })
}

struct Running {
    ctx: ConsumerContext,
    task: JoinHandle<Result<(), CamelError>>,
}

fn start(uri: &str, pipeline: BoxProcessor) -> Running {
    let consumer = MqttConsumer::new(options(uri)).expect("a consumer");
    let ctx = ConsumerContext::for_pipeline("mqtt-test", pipeline);
    let task = tokio::spawn(Box::new(consumer).run(ctx.clone()));
    Running { ctx, task }
}

impl Running {
    async fn stop(self) {
        self.ctx.cancellation().cancel();
        tokio::time::timeout(WITHIN, self.task)
            .await
            .expect("the consumer stops")
            .expect("joined")
            .expect("stopped cleanly");
    }

    /// Like a process that dies: the task is dropped mid-flight, nothing is settled.
    async fn crash(self) {
        self.task.abort();
        let _ = self.task.await;
    }
}

/// Publishes `probe` until the consumer has seen one: then its subscription is in place.
async fn wait_subscribed(send: &BoxProcessor, seen: &Recorder) {
    let deadline = tokio::time::Instant::now() + WITHIN;
    while seen.count("probe") == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the consumer never subscribed"
        );
        send.process(Exchange::new("probe"))
            .await
            .expect("probe published");
        let _ = tokio::time::timeout(Duration::from_millis(200), seen.changed.notified()).await;
    }
}

async fn publish(send: &BoxProcessor, bodies: &[&str]) {
    for body in bodies {
        send.process(Exchange::new(*body))
            .await
            .expect("the broker acknowledged the message");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trip_with_user_properties_and_no_control_headers() {
    let Some(url) = service_from_env("CAMEL_TEST_MQTT_URL") else {
        return;
    };
    let topic = unique("round-trip");
    let seen = Arc::new(Recorder::default());
    let consumer = start(
        &format!("paho-mqtt5:{topic}?brokerUrl={url}&qos=1"),
        recording(&seen, |_| false),
    );
    let send = producer(&format!("paho-mqtt5:{topic}?brokerUrl={url}&qos=1"));
    wait_subscribed(&send, &seen).await;
    let ex = Exchange::new("hello")
        .with_header("tenant", "acme")
        .with_header("CamelSqlQuery", "drop table orders");
    send.process(ex).await.expect("published");
    seen.until("hello arrives", |s| s.count("hello") == 1).await;
    let got = &seen.find("hello")[0];
    assert_eq!(
        got.header("tenant").map(|v| v.to_string()).as_deref(),
        Some("acme")
    );
    assert!(
        got.header("CamelSqlQuery").is_none(),
        "a control header crossed the broker"
    );
    assert_eq!(
        got.header(TOPIC_HEADER).map(|v| v.to_string()),
        Some(topic.clone())
    );
    assert_eq!(
        got.header(QOS_HEADER).map(|v| v.to_string()).as_deref(),
        Some("1")
    );
    consumer.stop().await;

    // MQTT 3.1.1 (`paho:`) both ways.
    let seen = Arc::new(Recorder::default());
    let consumer = start(
        &format!("paho:{topic}/v311?brokerUrl={url}&qos=1"),
        recording(&seen, |_| false),
    );
    let send = producer(&format!("paho:{topic}/v311?brokerUrl={url}&qos=1"));
    wait_subscribed(&send, &seen).await;
    publish(&send, &["old protocol"]).await;
    seen.until("the 3.1.1 message", |s| s.count("old protocol") == 1)
        .await;
    consumer.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_route_leaves_the_message_unacknowledged_and_it_comes_back() {
    let Some(url) = service_from_env("CAMEL_TEST_MQTT_URL") else {
        return;
    };
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .try_init();
    let topic = unique("redelivery");
    let client = format!("camel-redelivery-{}", std::process::id());
    let uri = format!(
        "paho-mqtt5:{topic}?brokerUrl={url}&qos=1&clientId={client}&cleanStart=false&sessionExpiryInterval=120&maxReconnectDelay=2000"
    );
    let seen = Arc::new(Recorder::default());
    // `m2` fails the first time only.
    let failed_once = Arc::new(AtomicBool::new(false));
    let flag = failed_once.clone();
    let consumer = start(
        &uri,
        recording(&seen, move |b| {
            b == "m2" && !flag.swap(true, Ordering::SeqCst)
        }),
    );
    let send = producer(&format!("paho-mqtt5:{topic}?brokerUrl={url}&qos=1"));
    wait_subscribed(&send, &seen).await;
    publish(&send, &["m1", "m2", "m3"]).await;
    seen.until("m2 redelivered and the others done", |s| {
        s.count("m2") == 2 && s.count("m1") >= 1 && s.count("m3") >= 1
    })
    .await;
    let again = &seen.find("m2")[1];
    assert_eq!(
        again
            .header(DUPLICATE_HEADER)
            .map(|v| v.to_string())
            .as_deref(),
        Some("true"),
        "the broker flags the redelivery"
    );
    consumer.stop().await;

    // Everything was acknowledged: a new connection to the same session gets nothing
    // old, only what is published now (the broker sends kept messages first).
    let after = Arc::new(Recorder::default());
    let consumer = start(&uri, recording(&after, |_| false));
    publish(&send, &["sentinel"]).await;
    after
        .until("the sentinel", |s| s.count("sentinel") == 1)
        .await;
    assert_eq!(
        after.bodies(),
        vec!["sentinel"],
        "nothing acknowledged came back"
    );
    consumer.stop().await;
    end_session(&url, &client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_is_acknowledged_only_after_its_route_finished() {
    let Some(url) = service_from_env("CAMEL_TEST_MQTT_URL") else {
        return;
    };
    let topic = unique("ack-after");
    let client = format!("camel-ack-after-{}", std::process::id());
    let uri = format!(
        "paho-mqtt5:{topic}?brokerUrl={url}&qos=1&clientId={client}&cleanStart=false&sessionExpiryInterval=120"
    );
    // A route that never finishes `slow`.
    let seen = Arc::new(Recorder::default());
    let stuck = seen.clone();
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let stuck = stuck.clone();
        async move {
            stuck.record(&ex);
            if ex.message.body.as_text().as_deref() == Some("slow") {
                std::future::pending::<()>().await;
            }
            Ok(ex)
        }
    });
    let consumer = start(&uri, pipeline);
    let send = producer(&format!("paho-mqtt5:{topic}?brokerUrl={url}&qos=1"));
    wait_subscribed(&send, &seen).await;
    publish(&send, &["slow", "quick"]).await;
    seen.until("both started", |s| {
        s.count("slow") == 1 && s.count("quick") == 1
    })
    .await;
    // The process dies while `slow` is in its route.
    consumer.crash().await;

    let after = Arc::new(Recorder::default());
    let consumer = start(&uri, recording(&after, |_| false));
    publish(&send, &["sentinel"]).await;
    after
        .until("slow again, and the sentinel", |s| {
            s.count("slow") == 1 && s.count("sentinel") == 1
        })
        .await;
    // (`quick` may come again or not: its ack may not have left before the crash.)
    consumer.stop().await;
    end_session(&url, &client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_flight_messages_stay_within_receive_maximum() {
    let Some(url) = service_from_env("CAMEL_TEST_MQTT_URL") else {
        return;
    };
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .try_init();
    let topic = unique("bound");
    let route = SlowRoute::new(40, Duration::from_millis(50));
    let slow = route.pipeline();
    let seen = Arc::new(Recorder::default());
    let probes = seen.clone();
    // Probes pass straight through; the 40 others take 50 ms each.
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let (probes, slow) = (probes.clone(), slow.clone());
        async move {
            if ex.message.body.as_text().as_deref() == Some("probe") {
                probes.record(&ex);
                return Ok(ex);
            }
            slow.process(ex).await
        }
    });
    let consumer = start(
        &format!("paho-mqtt5:{topic}?brokerUrl={url}&qos=1&receiveMaximum=3"),
        pipeline,
    );
    let send = producer(&format!("paho-mqtt5:{topic}?brokerUrl={url}&qos=1"));
    wait_subscribed(&send, &seen).await;
    let bodies: Vec<String> = (0..40).map(|i| format!("b{i}")).collect();
    let refs: Vec<&str> = bodies.iter().map(String::as_str).collect();
    publish(&send, &refs).await;
    route.wait_all(WITHIN).await;
    assert_eq!(
        route.most(),
        3,
        "the broker sends at most receive_maximum unacknowledged messages"
    );
    consumer.stop().await;
}

/// Removes a persistent session from the broker: a producer connects under its client
/// id with a clean start and no expiry, then leaves.
async fn end_session(url: &str, client: &str) {
    let send = producer(&format!(
        "paho-mqtt5:camel-test/unused?brokerUrl={url}&clientId={client}&qos=1"
    ));
    publish(&send, &["bye"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retained_message_reaches_a_later_subscriber() {
    let Some(url) = service_from_env("CAMEL_TEST_MQTT_URL") else {
        return;
    };
    let topic = unique("retained");
    let send = producer(&format!(
        "paho-mqtt5:{topic}?brokerUrl={url}&qos=1&retained=true"
    ));
    publish(&send, &["last known value"]).await;
    // Subscribed only now: the broker hands over the retained message.
    let seen = Arc::new(Recorder::default());
    let consumer = start(
        &format!("paho-mqtt5:{topic}?brokerUrl={url}&qos=1"),
        recording(&seen, |_| false),
    );
    seen.until("the retained message", |s| s.count("last known value") == 1)
        .await;
    let got = &seen.find("last known value")[0];
    assert_eq!(
        got.header(camel_mqtt::RETAINED_HEADER)
            .map(|v| v.to_string())
            .as_deref(),
        Some("true")
    );
    consumer.stop().await;
    // An empty retained message clears it.
    publish(&send, &[""]).await;
}
