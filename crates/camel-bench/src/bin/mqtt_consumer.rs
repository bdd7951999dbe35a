//! Scenario `mqtt_consumer` (needs `CAMEL_TEST_MQTT_URL`): `from: paho-mqtt5:` (QoS 1,
//! acknowledged after the route, persistent session) through a route that counts,
//! against a hand-written rumqttc loop (manual acks, each message acknowledged right
//! after it was read) on the same kind of session.
//!
//! Mosquitto keeps at most 1000 messages per session (`max_queued_messages`) and drops
//! the rest, so the topic cannot be filled beforehand: one publisher (QoS 1) feeds both
//! runs in a closed loop, at most `MQTT_WINDOW` messages ahead of the consumer. The clock
//! runs from the first delivery to the last, so both runs include the same publisher.
//!
//! Count: `MQTT_MESSAGES` (default 20000); `MQTT_WINDOW` (default 500).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use camel_bench::{count_from_env, median, per_second, result_line};
use rumqttc::v5::mqttbytes::v5::Packet;
use rumqttc::v5::mqttbytes::QoS;
use rumqttc::v5::{AsyncClient, Event, MqttOptions};
use tokio::sync::{Notify, Semaphore};

fn host_port(url: &str) -> (String, u16) {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let (host, port) = rest.rsplit_once(':').expect("tcp://host:port");
    (host.to_string(), port.parse().expect("a port"))
}

fn options(url: &str, client_id: &str, clean: bool) -> MqttOptions {
    let (host, port) = host_port(url);
    let mut o = MqttOptions::new(client_id, host, port);
    o.set_clean_start(clean)
        .set_session_expiry_interval((!clean).then_some(300))
        .set_keep_alive(Duration::from_secs(30));
    o
}

/// Creates (or, with `clean`, removes) the persistent session `client_id` subscribed to
/// `topic`, so that messages published before its consumer connects are kept.
async fn session(url: &str, client_id: &str, topic: &str, clean: bool) {
    let (client, mut events) = AsyncClient::new(options(url, client_id, clean), 16);
    if !clean {
        client
            .subscribe(topic, QoS::AtLeastOnce)
            .await
            .expect("subscribe");
    }
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), events.poll())
            .await
            .expect("the session is set up within 10 s");
        match event.expect("the session connects") {
            Event::Incoming(Packet::SubAck(_)) => break,
            Event::Incoming(Packet::ConnAck(_)) if clean => break,
            _ => {}
        }
    }
    client.disconnect().await.expect("disconnect");
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while events.poll().await.is_ok() {}
    })
    .await;
}

/// Publishes `n` messages, never more than the window's permits ahead of the consumer.
fn feed(url: &str, topic: &str, n: u64, window: Arc<Semaphore>) -> tokio::task::JoinHandle<()> {
    let (client, mut events) = AsyncClient::new(
        options(url, &camel_bench::unique_name("bench-pub", '-'), true),
        1000,
    );
    tokio::spawn(async move { while events.poll().await.is_ok() {} });
    let topic = topic.to_string();
    tokio::spawn(async move {
        for i in 0..n {
            window
                .acquire()
                .await
                .expect("the window stays open")
                .forget();
            client
                .publish(
                    topic.clone(),
                    QoS::AtLeastOnce,
                    false,
                    format!("{{\"n\":{i}}}"),
                )
                .await
                .expect("publish");
        }
    })
}

/// The baseline: reads each message and acknowledges it at once.
async fn raw_loop(url: &str, topic: &str, n: u64, window: usize) -> Duration {
    let client_id = camel_bench::unique_name("bench-raw", '-');
    session(url, &client_id, topic, false).await;
    let permits = Arc::new(Semaphore::new(window));
    let feeder = feed(url, topic, n, permits.clone());
    let mut o = options(url, &client_id, false);
    o.set_manual_acks(true);
    let (client, mut events) = AsyncClient::new(o, 10_000);
    let mut first = None;
    let mut seen = 0;
    while seen < n {
        let event = tokio::time::timeout(Duration::from_secs(30), events.poll())
            .await
            .unwrap_or_else(|_| panic!("raw: {seen} of {n} messages, then 30 s of silence"));
        if let Event::Incoming(Packet::Publish(p)) = event.expect("consuming") {
            first.get_or_insert_with(Instant::now);
            assert!(!p.payload.is_empty());
            client.ack(&p).await.expect("ack");
            permits.add_permits(1);
            seen += 1;
        }
    }
    let elapsed = first.map(|f| f.elapsed()).unwrap_or_default();
    feeder.await.expect("fed");
    let _ = client.disconnect().await;
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while events.poll().await.is_ok() {}
    })
    .await;
    session(url, &client_id, topic, true).await;
    elapsed
}

/// Ours: a route that counts; the time from the first exchange to the last.
async fn route(url: &str, topic: &str, n: u64, window: usize) -> Duration {
    let client_id = camel_bench::unique_name("bench-route", '-');
    session(url, &client_id, topic, false).await;
    let permits = Arc::new(Semaphore::new(window));
    let count = Arc::new(AtomicU64::new(0));
    let first: Arc<Mutex<Option<Instant>>> = Arc::default();
    let done = Arc::new(Notify::new());
    let work = {
        let (count, first, done, permits) =
            (count.clone(), first.clone(), done.clone(), permits.clone());
        camel_api::BoxProcessor::sync(move |ex: camel_api::Exchange| {
            let seen = count.fetch_add(1, Ordering::Relaxed) + 1;
            if seen == 1 {
                *first.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
            }
            permits.add_permits(1);
            if seen == n {
                done.notify_one();
            }
            Ok(ex)
        })
    };
    let yaml = format!(
        r#"
- route:
    id: consume
    from:
      uri: "paho-mqtt5:{topic}?brokerUrl={url}&qos=1&clientId={client_id}&cleanStart=false&sessionExpiryInterval=300"
      steps:
        - process: {{ ref: work }}
"#
    );
    let ctx = camel_core::CamelContext::new();
    ctx.add_component(Arc::new(camel_mqtt::MqttComponent::mqtt5()));
    ctx.add_resource("work", Arc::new(work));
    ctx.add_routes(camel_core::yaml::load_str(&yaml, "bench.yaml").expect("the route loads"))
        .await
        .expect("the route compiles");
    ctx.start().await.expect("the route starts");
    let feeder = feed(url, topic, n, permits);
    if tokio::time::timeout(Duration::from_secs(30), done.notified())
        .await
        .is_err()
    {
        panic!(
            "route: {} of {n} messages after 30 s",
            count.load(Ordering::Relaxed)
        );
    }
    let elapsed = first
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .map(|f| f.elapsed())
        .unwrap_or_default();
    feeder.await.expect("fed");
    ctx.stop().await;
    session(url, &client_id, topic, true).await;
    elapsed
}

#[tokio::main]
async fn main() {
    let Ok(url) = std::env::var("CAMEL_TEST_MQTT_URL") else {
        eprintln!("skipped: CAMEL_TEST_MQTT_URL is not set");
        return;
    };
    let n = count_from_env("MQTT_MESSAGES", 20_000);
    let window = usize::try_from(count_from_env("MQTT_WINDOW", 500)).unwrap_or(500);
    let mut raw = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..2 {
        let topic = camel_bench::unique_name("bench/raw", '-');
        raw.push(per_second(n, raw_loop(&url, &topic, n, window).await));
        let topic = camel_bench::unique_name("bench/route", '-');
        ours.push(per_second(n, route(&url, &topic, n, window).await));
    }
    let (raw, ours) = (median(raw), median(ours));
    result_line(
        "mqtt_consumer",
        &[
            ("messages", n.to_string()),
            ("window", window.to_string()),
            ("raw_per_s", format!("{raw:.0}")),
            ("route_per_s", format!("{ours:.0}")),
            ("ratio", format!("{:.2}", ours / raw)),
        ],
    );
}
