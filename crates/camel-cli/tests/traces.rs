//! Traces through the binary: spans sent over OTLP/HTTP to an in-process receiver, one
//! trace from an HTTP caller through a route, the http producer and a second route.

mod support;

use std::process::Command;
use std::time::Duration;

use support::otlp::{self, Received};
use support::{spawn, wait_line};

/// A port free now (the run binds it a moment later).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn routes(port: u16) -> String {
    format!(
        "\
- route:
    id: front
    from:
      uri: platform-http:/front
      steps:
        - remove_headers:
            pattern: 'CamelHttp*'
        - to: http://127.0.0.1:{port}/back
- route:
    id: back
    from:
      uri: platform-http:/back
      steps:
        - log: 'back got a call'
        - set_body:
            constant: done
"
    )
}

fn curl(url: &str, headers: &[&str]) -> String {
    let mut cmd = Command::new("curl");
    cmd.args(["-s", "--max-time", "10", url]);
    for h in headers {
        cmd.args(["-H", h]);
    }
    String::from_utf8_lossy(&cmd.output().expect("curl runs").stdout).into_owned()
}

const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

fn one<'a>(spans: &'a [Received], route: &str, trace_id: &str) -> &'a Received {
    let found: Vec<&Received> = spans
        .iter()
        .filter(|s| s.name == route && s.trace_id == trace_id)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one `{route}` span in {trace_id}: {spans:#?}"
    );
    found[0]
}

#[test]
fn an_http_call_through_two_routes_is_one_trace() {
    let receiver = otlp::receiver();
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, routes(port)).unwrap();
    let file = file.display().to_string();
    let port_arg = port.to_string();
    let (mut child, log) = spawn(&[
        "--log-format",
        "json",
        "run",
        &file,
        "--port",
        &port_arg,
        "--otel-endpoint",
        &receiver.endpoint,
        "--max-messages",
        "4",
    ]);
    wait_line(&log, "/back");
    let base = format!("http://127.0.0.1:{port}");
    let traceparent = format!("traceparent: 00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    assert_eq!(
        curl(&format!("{base}/front"), &[&traceparent, "tracestate: a=1"]),
        "done"
    );
    // A malformed context is ignored: the call starts a trace of its own.
    assert_eq!(
        curl(&format!("{base}/front"), &["traceparent: 00-zz-nope-01"]),
        "done"
    );

    let logged = wait_line(&log, "back got a call");
    assert!(
        logged.contains(&format!("\"trace_id\":\"{CALLER_TRACE}\"")),
        "{logged}"
    );
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("camel run stops after its four exchanges")
        .unwrap();
    assert!(status.success(), "{status:?}");

    let spans = receiver.collect(|s| s.len() >= 4);
    assert_eq!(spans.len(), 4, "{spans:#?}");
    let front = one(&spans, "front", CALLER_TRACE);
    let back = one(&spans, "back", CALLER_TRACE);
    assert_eq!(
        front.parent_span_id, CALLER_SPAN,
        "the caller's span is the parent"
    );
    assert_eq!(
        back.parent_span_id, front.span_id,
        "the producer injected front's span"
    );
    assert_eq!(front.kind, 2, "a server span");
    assert_eq!(front.service, "camel");
    assert_eq!(front.attribute("camel.route.id"), Some("front"));
    assert_eq!(front.attribute("camel.uri"), Some("platform-http:/front"));
    assert_eq!(front.attribute("component"), Some("camel-platform-http"));
    assert_eq!(front.attribute("camel.outcome"), Some("completed"));
    assert!(front
        .attribute("camel.exchange.id")
        .is_some_and(|id| id.starts_with("ID-")));

    let fresh: Vec<&Received> = spans
        .iter()
        .filter(|s| s.trace_id != CALLER_TRACE)
        .collect();
    assert_eq!(fresh.len(), 2, "{spans:#?}");
    let fresh_front = fresh.iter().find(|s| s.name == "front").unwrap();
    let fresh_back = fresh.iter().find(|s| s.name == "back").unwrap();
    assert_eq!(fresh_front.parent_span_id, "", "a new trace's root");
    assert_eq!(fresh_back.trace_id, fresh_front.trace_id);
    assert_eq!(fresh_back.parent_span_id, fresh_front.span_id);
}

/// HTTP → `direct:` → outbox publish; the relay → `seda:` → a sink route: the relay's
/// span continues the publishing trace (its context was stored with the message), the
/// `seda:` consumer starts its own trace linked to the relay's span.
#[test]
fn the_outbox_relay_continues_the_publishing_trace() {
    let receiver = otlp::receiver();
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("outbox.db").display());
    let routes = format!(
        "\
- route:
    id: front
    from:
      uri: platform-http:/order
      steps:
        - to: direct:publish
- route:
    id: publish
    from:
      uri: direct:publish
      steps:
        - to:
            uri: outbox:events
            parameters: {{datasource: '{db}'}}
- route:
    id: relay
    from:
      uri: outbox:events
      parameters: {{datasource: '{db}', poll_interval: 50ms}}
      steps:
        - to: seda:sink
- route:
    id: sink
    from:
      uri: seda:sink
      steps:
        - log: 'sink got ${{body}}'
"
    );
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, routes).unwrap();
    let file = file.display().to_string();
    let port_arg = port.to_string();
    let (mut child, log) = spawn(&[
        "run",
        &file,
        "--port",
        &port_arg,
        "--otel-endpoint",
        &receiver.endpoint,
    ]);
    wait_line(&log, "/order");
    let traceparent = format!("traceparent: 00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    let _ = curl(&format!("http://127.0.0.1:{port}/order"), &[&traceparent]);
    wait_line(&log, "sink got");
    // The batch export sends within its delay (5 s); no stop is needed for it.
    let spans = receiver.collect(|s| s.len() >= 4);
    let _ = child.kill();
    let _ = child.wait();

    let front = one(&spans, "front", CALLER_TRACE);
    let publish = one(&spans, "publish", CALLER_TRACE);
    let relay = one(&spans, "relay", CALLER_TRACE);
    assert_eq!(front.parent_span_id, CALLER_SPAN);
    assert_eq!(publish.parent_span_id, front.span_id, "direct: is a child");
    assert_eq!(publish.kind, 1, "an internal span");
    assert_eq!(relay.parent_span_id, publish.span_id, "the stored context");
    assert_eq!(relay.kind, 5, "a consumer span");
    let sink: Vec<&Received> = spans.iter().filter(|s| s.name == "sink").collect();
    assert_eq!(sink.len(), 1, "{spans:#?}");
    assert_ne!(
        sink[0].trace_id, CALLER_TRACE,
        "seda: starts a trace of its own"
    );
    assert_eq!(
        sink[0].links,
        [format!("{}-{}", relay.trace_id, relay.span_id)],
        "linked to the relay's span"
    );
}

/// HTTP → a RabbitMQ producer; a RabbitMQ consumer route in the same process: the
/// consumer's span is the child of the publishing route's span (the context went in the
/// message's headers), against the real broker.
#[test]
fn rabbitmq_carries_the_trace_from_producer_to_consumer() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_RABBITMQ_URL") else {
        return;
    };
    let receiver = otlp::receiver();
    let port = free_port();
    let exchange = format!("camel.trace.{}", std::process::id());
    let routes = format!(
        "\
- route:
    id: front
    from:
      uri: platform-http:/mq
      steps:
        - to: 'rabbitmq:{exchange}?addresses={url}&routing_key=k'
- route:
    id: consume
    from:
      uri: 'rabbitmq:{exchange}?addresses={url}&queue={exchange}.q&routing_key=k'
      steps:
        - log: 'consumed ${{body}}'
"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, routes).unwrap();
    let file = file.display().to_string();
    let port_arg = port.to_string();
    let (mut child, log) = spawn(&[
        "run",
        &file,
        "--port",
        &port_arg,
        "--otel-endpoint",
        &receiver.endpoint,
    ]);
    wait_line(&log, "/mq");
    let traceparent = format!("traceparent: 00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    // The consumer's queue may not be bound yet when the first call publishes: call until
    // one message arrives.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut calls = 0;
    let mut seen = Vec::new();
    let consumed = loop {
        let answer = curl(&format!("http://127.0.0.1:{port}/mq"), &[&traceparent]);
        calls += 1;
        match log.recv_timeout(Duration::from_millis(500)) {
            Ok(line) if line.contains("consumed") => break true,
            Ok(line) => seen.push(line),
            Err(_) => seen.push(format!("answer: {answer}")),
        }
        if std::time::Instant::now() > deadline {
            break false;
        }
    };
    assert!(consumed, "a message reached the consumer: {seen:#?}");
    // The consumer's span may end (and be sent) before the publishing one.
    let spans = receiver.collect(|s| {
        s.iter().filter(|s| s.name == "consume").any(|c| {
            s.iter()
                .any(|f| f.name == "front" && f.span_id == c.parent_span_id)
        })
    });
    let _ = child.kill();
    let _ = child.wait();
    let consume = spans
        .iter()
        .find(|s| s.name == "consume")
        .unwrap_or_else(|| panic!("a consume span after {calls} calls: {spans:#?}"));
    assert_eq!(consume.trace_id, CALLER_TRACE);
    assert_eq!(consume.kind, 5, "a consumer span");
    assert!(
        spans
            .iter()
            .any(|s| s.name == "front" && s.span_id == consume.parent_span_id),
        "the consumer's parent is a publishing span: {spans:#?}"
    );
}

/// HTTP → a Kafka producer; a Kafka consumer route in the same process: the record's
/// headers carry the context, so the consumer's span is the publishing span's child.
#[test]
fn kafka_carries_the_trace_from_producer_to_consumer() {
    use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
    let Some(brokers) = camel_api::test_support::service_from_env("CAMEL_TEST_KAFKA_BROKERS")
    else {
        return;
    };
    let topic = format!("camel-trace-{}", std::process::id());
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let admin: AdminClient<_> = rdkafka::ClientConfig::new()
            .set("bootstrap.servers", &brokers)
            .create()
            .unwrap();
        let topics = [NewTopic::new(&topic, 1, TopicReplication::Fixed(1))];
        for r in admin
            .create_topics(&topics, &AdminOptions::new())
            .await
            .unwrap()
        {
            r.unwrap();
        }
    });
    let receiver = otlp::receiver();
    let port = free_port();
    let routes = format!(
        "\
- route:
    id: front
    from:
      uri: platform-http:/kafka
      steps:
        - to:
            uri: 'kafka:{topic}'
            parameters: {{brokers: '{brokers}'}}
- route:
    id: consume
    from:
      uri: 'kafka:{topic}'
      parameters:
        brokers: '{brokers}'
        group_id: '{topic}-g'
        auto_offset_reset: earliest
        session_timeout_ms: 6000
        heartbeat_interval_ms: 500
      steps:
        - log: 'consumed ${{body}}'
"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, routes).unwrap();
    let file = file.display().to_string();
    let port_arg = port.to_string();
    let (mut child, log) = spawn(&[
        "run",
        &file,
        "--port",
        &port_arg,
        "--otel-endpoint",
        &receiver.endpoint,
    ]);
    wait_line(&log, "/kafka");
    let traceparent = format!("traceparent: 00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    let _ = curl(&format!("http://127.0.0.1:{port}/kafka"), &[&traceparent]);
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    let consumed = loop {
        match log.recv_timeout(Duration::from_millis(500)) {
            Ok(line) if line.contains("consumed") => break true,
            Ok(line) => seen.push(line),
            Err(_) => {}
        }
        if std::time::Instant::now() > deadline {
            break false;
        }
    };
    assert!(consumed, "the record reached the consumer: {seen:#?}");
    let spans = receiver.collect(|s| s.len() >= 2);
    let _ = child.kill();
    let _ = child.wait();
    let front = one(&spans, "front", CALLER_TRACE);
    let consume = one(&spans, "consume", CALLER_TRACE);
    assert_eq!(consume.parent_span_id, front.span_id, "{spans:#?}");
    assert_eq!(consume.kind, 5, "a consumer span");
}
