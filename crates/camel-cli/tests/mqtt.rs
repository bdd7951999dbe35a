//! MQTT through the binary, against the local Mosquitto (`CAMEL_TEST_MQTT_URL`):
//!
//! - a `camel run` consumer on a persistent session is SIGKILLed mid-stream and started
//!   again: nothing is lost; the messages seen twice (those the killed process had taken
//!   but not acknowledged) are counted and printed;
//! - two `camel run` processes on one shared subscription (`$share/GROUP/TOPIC`) split
//!   the messages between them, each message once.

mod support;

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use rumqttc::v5::mqttbytes::v5::Packet;
use rumqttc::v5::mqttbytes::QoS;
use rumqttc::v5::{AsyncClient, Event, MqttOptions};
use support::{run_id, spawn, wait_line, KillOnDrop};

/// Host and port of `tcp://host:port`.
fn host_port(url: &str) -> (String, u16) {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let (host, port) = rest.rsplit_once(':').expect("tcp://host:port");
    (host.to_string(), port.parse().expect("a port"))
}

/// A result seen on the output topic: its body and the `worker` user property.
type Seen = (String, String);

/// Subscribes to `topic` (QoS 1) and forwards every message; returns once subscribed.
async fn collect(url: &str, topic: &str) -> (AsyncClient, Receiver<Seen>) {
    let (host, port) = host_port(url);
    let mut o = MqttOptions::new(format!("camel-test-collector-{}", run_id()), host, port);
    o.set_max_packet_size(Some(1 << 20));
    let (client, mut events) = AsyncClient::new(o, 64);
    client
        .subscribe(topic, QoS::AtLeastOnce)
        .await
        .expect("subscribe");
    let (tx, rx) = mpsc::channel();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let mut ready = Some(ready_tx);
    tokio::spawn(async move {
        loop {
            match events.poll().await {
                Ok(Event::Incoming(Packet::SubAck(_))) => {
                    if let Some(r) = ready.take() {
                        let _ = r.send(());
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    let worker = p
                        .properties
                        .as_ref()
                        .and_then(|pr| pr.user_properties.iter().find(|(k, _)| k == "worker"))
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default();
                    let body = String::from_utf8_lossy(&p.payload).into_owned();
                    if tx.send((body, worker)).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(_) => return,
            }
        }
    });
    tokio::time::timeout(Duration::from_secs(10), ready_rx)
        .await
        .expect("the collector subscribed in time")
        .expect("subscribed");
    (client, rx)
}

/// A publisher that waits for each PUBACK (rumqttc's own loop drives it).
async fn publisher(url: &str) -> AsyncClient {
    let (host, port) = host_port(url);
    let o = MqttOptions::new(format!("camel-test-publisher-{}", run_id()), host, port);
    let (client, mut events) = AsyncClient::new(o, 1024);
    tokio::spawn(async move { while events.poll().await.is_ok() {} });
    client
}

/// Waits until `want` distinct bodies were seen (or `within` passed), counting.
fn drain(
    rx: &Receiver<Seen>,
    counts: &mut HashMap<String, Vec<String>>,
    want: usize,
    within: Duration,
) {
    let deadline = Instant::now() + within;
    while counts.len() < want {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((body, worker)) => counts.entry(body).or_default().push(worker),
            Err(_) => break,
        }
    }
}

#[test]
fn a_sigkilled_consumer_restarts_on_its_session_and_loses_nothing() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_MQTT_URL") else {
        return;
    };
    // Below Mosquitto's default max_queued_messages (1000), which bounds what a broker
    // keeps for a session while its client is away.
    const MESSAGES: usize = 600;
    let id = run_id();
    let (input, output) = (
        format!("camel-test/kill/{id}/in"),
        format!("camel-test/kill/{id}/out"),
    );
    let client_id = format!("camel-kill-{id}");
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    let _enter = rt.enter();
    let (_collector, results) = rt.block_on(collect(&url, &output));
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("routes.yaml");
    std::fs::write(
        &file,
        format!(
            r#"
- route:
    id: mqtt-relay
    from:
      uri: "paho-mqtt5:{input}?brokerUrl={url}&qos=1&clientId={client_id}&cleanStart=false&sessionExpiryInterval=300&receiveMaximum=20"
      steps:
        - to: "paho-mqtt5:{output}?brokerUrl={url}&qos=1"
"#
        ),
    )
    .expect("write the routes");
    let path = file.to_str().expect("a UTF-8 path").to_string();
    let (child, rx) = spawn(&["run", &path]);
    let mut child = KillOnDrop(child);
    wait_line(&rx, "consuming from MQTT");

    let send = rt.block_on(publisher(&url));
    let feeding = rt.spawn({
        let (send, input) = (send.clone(), input.clone());
        async move {
            for i in 0..MESSAGES {
                send.publish(input.clone(), QoS::AtLeastOnce, false, format!("m{i}"))
                    .await
                    .expect("publish");
                // Paced, so that the kill below lands while messages still arrive.
                if i % 20 == 19 {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        }
    });

    let mut counts: HashMap<String, Vec<String>> = HashMap::new();
    drain(&results, &mut counts, MESSAGES / 4, Duration::from_secs(30));
    assert!(
        counts.len() >= MESSAGES / 4,
        "the relay is not relaying: {}",
        counts.len()
    );
    child.0.kill().expect("SIGKILL the consumer");
    let _ = child.0.wait();
    let seen_before_restart = counts.len();

    let (child, rx) = spawn(&["run", &path]);
    let _child = KillOnDrop(child);
    let line = wait_line(&rx, "consuming from MQTT");
    assert!(
        line.contains("session_present=true"),
        "the broker kept the session: {line}"
    );
    rt.block_on(feeding).expect("every message published");
    drain(&results, &mut counts, MESSAGES, Duration::from_secs(60));
    let duplicates: usize = counts.values().map(|v| v.len() - 1).sum();
    println!(
        "mqtt sigkill: messages={MESSAGES} unique={} duplicates={duplicates} seen_before_kill={seen_before_restart}",
        counts.len()
    );
    let lost: Vec<String> = (0..MESSAGES)
        .map(|i| format!("m{i}"))
        .filter(|m| !counts.contains_key(m))
        .collect();
    assert!(lost.is_empty(), "lost {} messages: {lost:?}", lost.len());
    // Only what the broker had sent the killed process without its ack can come twice.
    // Mosquitto 2.0 does not hold to receive_maximum (20 here): it keeps sending until
    // TCP pushes back while the consumer waits for a free slot, so the bound is that
    // window, not 20 (1 to 58 in ten runs here).
    assert!(duplicates <= 150, "{duplicates} duplicates");
    end_session(&rt, &url, &client_id);
}

#[test]
fn two_processes_share_one_subscription() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_MQTT_URL") else {
        return;
    };
    const MESSAGES: usize = 300;
    let id = run_id();
    let (input, output) = (
        format!("camel-test/share/{id}/in"),
        format!("camel-test/share/{id}/out"),
    );
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    let _enter = rt.enter();
    let (_collector, results) = rt.block_on(collect(&url, &output));
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut children = Vec::new();
    for worker in ["a", "b"] {
        let file = dir.path().join(format!("{worker}.yaml"));
        std::fs::write(
            &file,
            format!(
                r#"
- route:
    id: share-{worker}
    from:
      uri: "paho-mqtt5:$share/workers-{id}/{input}?brokerUrl={url}&qos=1&clientId=camel-share-{worker}-{id}"
      steps:
        - set_header:
            name: worker
            constant: "{worker}"
        - to: "paho-mqtt5:{output}?brokerUrl={url}&qos=1"
"#
            ),
        )
        .expect("write the routes");
        let (child, rx) = spawn(&["run", file.to_str().expect("a UTF-8 path")]);
        let child = KillOnDrop(child);
        wait_line(&rx, "consuming from MQTT");
        children.push((child, rx));
    }
    let send = rt.block_on(publisher(&url));
    rt.block_on(async {
        for i in 0..MESSAGES {
            send.publish(input.clone(), QoS::AtLeastOnce, false, format!("s{i}"))
                .await
                .expect("publish");
        }
    });
    let mut counts: HashMap<String, Vec<String>> = HashMap::new();
    drain(&results, &mut counts, MESSAGES, Duration::from_secs(30));
    // Settle: anything more would be a duplicate.
    while let Ok((body, worker)) = results.recv_timeout(Duration::from_millis(300)) {
        counts.entry(body).or_default().push(worker);
    }
    let by = |w: &str| counts.values().filter(|v| v.iter().any(|x| x == w)).count();
    let duplicates: usize = counts.values().map(|v| v.len() - 1).sum();
    println!(
        "mqtt shared subscription: messages={MESSAGES} unique={} duplicates={duplicates} by_a={} by_b={}",
        counts.len(),
        by("a"),
        by("b")
    );
    assert_eq!(counts.len(), MESSAGES, "every message relayed");
    assert_eq!(
        duplicates, 0,
        "a shared subscription delivers each message to one member"
    );
    assert!(by("a") > 0 && by("b") > 0, "both processes took messages");
}

/// Removes the test's persistent session: a clean start under its client id.
fn end_session(rt: &tokio::runtime::Runtime, url: &str, client_id: &str) {
    let (host, port) = host_port(url);
    let mut o = MqttOptions::new(client_id, host, port);
    o.set_clean_start(true);
    let (client, mut events) = AsyncClient::new(o, 8);
    rt.block_on(async {
        let _ = tokio::time::timeout(Duration::from_secs(5), async {
            while let Ok(e) = events.poll().await {
                if matches!(e, Event::Incoming(Packet::ConnAck(_))) {
                    break;
                }
            }
        })
        .await;
        let _ = client.disconnect().await;
        let _ = tokio::time::timeout(Duration::from_secs(2), events.poll()).await;
    });
}

#[test]
fn mqtt_routes_validate_without_a_broker_and_mistakes_name_the_option() {
    let (ok, text) = support::validate_yaml(
        r#"
- route:
    from:
      uri: "paho-mqtt5:$share/g/sensors/+?brokerUrl=tcp://127.0.0.1:9&qos=1&clientId=c&cleanStart=false"
      steps:
        - to: "paho:out?brokerUrl=tcp://127.0.0.1:9&qos=0&retained=true"
"#,
    );
    assert!(ok, "{text}");
    let (ok, text) = support::validate_yaml(
        "- route:\n    from:\n      uri: \"paho-mqtt5:t?cleanStart=false\"\n      steps:\n        - log: x\n",
    );
    assert!(!ok, "{text}");
    assert!(text.contains("client_id"), "{text}");
}
