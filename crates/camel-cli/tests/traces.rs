//! Traces through the binary: spans sent over OTLP/HTTP to an in-process receiver, one
//! trace from an HTTP caller through a route, the http producer and a second route.

mod support;

use std::process::Command;
use std::time::Duration;

use support::otlp::{self, Received};
use support::{spawn, spawn_with_env, wait_line};

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
/// A `front` route on `platform-http:PATH` sending to `to` (with a text body first when
/// `body`), and a `consume` route from `from` that logs `consumed`.
fn front_and_consume(path: &str, body: bool, to: &str, from: &str) -> String {
    let set_body = if body {
        "        - set_body:\n            constant: order\n"
    } else {
        ""
    };
    format!(
        "\
- route:
    id: front
    from:
      uri: platform-http:{path}
      steps:
{set_body}        - to: '{to}'
- route:
    id: consume
    from:
      uri: '{from}'
      steps:
        - log: 'consumed ${{body}}'
"
    )
}

/// Starts `camel run` on `routes` with spans exported to `receiver`, once `ready` is
/// logged; the folder holding the file lives as long as the returned guard.
fn run_traced(
    routes: &str,
    port: u16,
    receiver: &otlp::OtlpReceiver,
    ready: &str,
) -> (
    tempfile::TempDir,
    std::process::Child,
    std::sync::mpsc::Receiver<String>,
) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, routes).unwrap();
    let file = file.display().to_string();
    let port_arg = port.to_string();
    let (child, log) = spawn(&[
        "run",
        &file,
        "--port",
        &port_arg,
        "--otel-endpoint",
        &receiver.endpoint,
    ]);
    wait_line(&log, ready);
    (dir, child, log)
}

/// Runs `routes` (a `front` route on `platform-http:PATH` that publishes, a `consume` route
/// that logs `consumed`) with spans exported to `receiver`, calls PATH with the caller's
/// `traceparent` until the consumer logs (its subscription may not be ready for the first
/// message), and returns the spans once a `consume` span whose parent is a `front` span
/// has arrived and `more` holds.
fn call_until_consumed(
    routes: &str,
    port: u16,
    path: &str,
    receiver: &otlp::OtlpReceiver,
    more: impl Fn(&[Received]) -> bool,
) -> Vec<Received> {
    let (_dir, mut child, log) = run_traced(routes, port, receiver, path);
    let traceparent = format!("traceparent: 00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    let consumed = loop {
        let answer = curl(&format!("http://127.0.0.1:{port}{path}"), &[&traceparent]);
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
        more(s)
            && s.iter().filter(|s| s.name == "consume").any(|c| {
                s.iter()
                    .any(|f| f.name == "front" && f.span_id == c.parent_span_id)
            })
    });
    let _ = child.kill();
    let _ = child.wait();
    spans
}

/// The consumer continued a publishing `front` span of the caller's trace, and a batch
/// request span named `request` is linked to that `front` span (a sink's batch request
/// is a trace of its own that links every caller it carries).
fn assert_sink_trace(spans: &[Received], request: &str) {
    let consume = spans
        .iter()
        .find(|s| s.name == "consume")
        .unwrap_or_else(|| panic!("a consume span: {spans:#?}"));
    assert_eq!(consume.trace_id, CALLER_TRACE);
    assert_eq!(consume.kind, 5, "a consumer span");
    let front = spans
        .iter()
        .find(|s| s.name == "front" && s.span_id == consume.parent_span_id)
        .unwrap_or_else(|| panic!("the consumer's parent is a publishing span: {spans:#?}"));
    let link = format!("{}-{}", front.trace_id, front.span_id);
    assert!(
        spans
            .iter()
            .any(|s| s.name == request && s.kind == 4 && s.links.contains(&link)),
        "a `{request}` producer span linked to {link}: {spans:#?}"
    );
}

/// A `{request}` span linked to a `front` span of the caller's trace has arrived.
fn has_linked_request(request: &'static str) -> impl Fn(&[Received]) -> bool {
    move |s: &[Received]| {
        s.iter().filter(|r| r.name == request).any(|r| {
            s.iter().any(|f| {
                f.name == "front"
                    && f.trace_id == CALLER_TRACE
                    && r.links.contains(&format!("{}-{}", f.trace_id, f.span_id))
            })
        })
    }
}

#[test]
fn rabbitmq_carries_the_trace_from_producer_to_consumer() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_RABBITMQ_URL") else {
        return;
    };
    let receiver = otlp::receiver();
    let port = free_port();
    let exchange = format!("camel.trace.{}", std::process::id());
    let routes = front_and_consume(
        "/mq",
        false,
        &format!("rabbitmq:{exchange}?addresses={url}&routing_key=k"),
        &format!("rabbitmq:{exchange}?addresses={url}&queue={exchange}.q&routing_key=k"),
    );
    let spans = call_until_consumed(&routes, port, "/mq", &receiver, |_| true);
    let consume = spans
        .iter()
        .find(|s| s.name == "consume")
        .unwrap_or_else(|| panic!("a consume span: {spans:#?}"));
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
    let (_dir, mut child, log) = run_traced(&routes, port, &receiver, "/kafka");
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

/// A JetStream context on `url` with a fresh in-memory `stream` for `subject`.
async fn memory_stream(url: &str, stream: &str, subject: &str) -> async_nats::jetstream::Context {
    let client = async_nats::connect(url).await.expect("connect to NATS");
    let js = async_nats::jetstream::new(client);
    let _ = js.delete_stream(stream).await;
    js.create_stream(async_nats::jetstream::stream::Config {
        name: stream.to_string(),
        subjects: vec![subject.to_string()],
        storage: async_nats::jetstream::stream::StorageType::Memory,
        ..Default::default()
    })
    .await
    .expect("a stream");
    js
}

/// HTTP → the `nats:` sink (JetStream publish) → a durable JetStream consumer route: the
/// message's NATS headers carry the caller's context, and the sink's request span links it.
#[test]
fn nats_carries_the_trace_from_sink_to_consumer() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let id = std::process::id();
    let (stream, subject) = (format!("CAMEL_TRACE_{id}"), format!("camel.trace.{id}"));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let js = rt.block_on(memory_stream(&url, &stream, &subject));
    let receiver = otlp::receiver();
    let port = free_port();
    let routes = front_and_consume(
        "/nats",
        false,
        &format!("nats:{subject}?servers={url}&linger_ms=1"),
        &format!("nats:{subject}?servers={url}&durable_name=trace&jetstream_name={stream}"),
    );
    let spans = call_until_consumed(
        &routes,
        port,
        "/nats",
        &receiver,
        has_linked_request("nats send"),
    );
    rt.block_on(async {
        let _ = js.delete_stream(&stream).await;
    });
    assert_sink_trace(&spans, "nats send");
}

/// `curl` with a method and a body, for the emulators' APIs; the answer's body.
fn curl_call(method: &str, url: &str, body: &str) -> String {
    let out = Command::new("curl")
        .args(["-s", "--max-time", "10", "-X", method, url, "-d", body])
        .args(["-H", "content-type: application/json"])
        .output()
        .expect("curl runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// HTTP → the `sqs:` sink → an `sqs:` consumer route, on moto: the message attributes carry
/// the caller's context, and the sink's request span links it.
#[test]
fn sqs_carries_the_trace_from_sink_to_consumer() {
    let Some(endpoint) = camel_api::test_support::service_from_env("CAMEL_TEST_SQS_ENDPOINT")
    else {
        return;
    };
    let queue = format!("camel-trace-{}", std::process::id());
    support::create_sqs_queue(&endpoint, &queue);
    let receiver = otlp::receiver();
    let port = free_port();
    let aws = format!("region=us-east-1&endpoint={endpoint}&access_key=test&secret_key=test");
    let routes = front_and_consume(
        "/sqs",
        true,
        &format!("sqs:{queue}?{aws}&linger_ms=1"),
        &format!("sqs:{queue}?{aws}&wait_time_seconds=1"),
    );
    let spans = call_until_consumed(
        &routes,
        port,
        "/sqs",
        &receiver,
        has_linked_request("sqs send"),
    );
    assert_sink_trace(&spans, "sqs send");
    let request = spans.iter().find(|s| s.name == "sqs send").unwrap();
    assert_eq!(request.attribute("messaging.system"), Some("aws_sqs"));
}

/// HTTP → the `pubsub:` sink, on Google's emulator (there is no Pub/Sub consumer yet): the
/// pulled message's attributes hold the publishing span's `traceparent`, and the sink's
/// request span links that span.
#[test]
fn pubsub_carries_the_trace_in_its_attributes() {
    let Some(emulator) = camel_api::test_support::service_from_env("CAMEL_TEST_PUBSUB_EMULATOR")
    else {
        return;
    };
    let id = std::process::id();
    let api = format!("http://{emulator}/v1/projects/camel-trace");
    let topic = format!("projects/camel-trace/topics/t{id}");
    let _ = curl_call("PUT", &format!("{api}/topics/t{id}"), "{}");
    let sub = curl_call(
        "PUT",
        &format!("{api}/subscriptions/s{id}"),
        &format!("{{\"topic\": \"{topic}\"}}"),
    );
    assert!(sub.contains(&topic), "a subscription: {sub}");
    let receiver = otlp::receiver();
    let port = free_port();
    let routes = format!(
        "\
- route:
    id: front
    from:
      uri: platform-http:/pubsub
      steps:
        - to: 'pubsub:{topic}?emulator_host={emulator}&linger_ms=1'
"
    );
    let (_dir, mut child, _log) = run_traced(&routes, port, &receiver, "/pubsub");
    let traceparent = format!("traceparent: 00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    let _ = curl(&format!("http://127.0.0.1:{port}/pubsub"), &[&traceparent]);
    let spans = receiver.collect(has_linked_request("pubsub send"));
    let _ = child.kill();
    let _ = child.wait();
    let front = one(&spans, "front", CALLER_TRACE);
    assert!(
        has_linked_request("pubsub send")(&spans),
        "a pubsub send span linked to the front span: {spans:#?}"
    );
    let pulled = curl_call(
        "POST",
        &format!("{api}/subscriptions/s{id}:pull"),
        r#"{"maxMessages": 10, "returnImmediately": true}"#,
    );
    let _ = curl_call("DELETE", &format!("{api}/subscriptions/s{id}"), "");
    let _ = curl_call("DELETE", &format!("{api}/topics/t{id}"), "");
    let want = format!("00-{}-{}-01", front.trace_id, front.span_id);
    assert!(
        pulled.contains(&format!("\"traceparent\": \"{want}\""))
            || pulled.contains(&format!("\"traceparent\":\"{want}\"")),
        "the message's attributes carry the publishing span: {pulled}"
    );
}

/// Kills a `camel` process when the test ends, passed or not.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Issue 26's whole path, in three processes: an HTTP call writes a row and publishes to
/// the outbox in one transaction (PostgreSQL) in `orders`; `relay` relays the message to a
/// NATS sink; `consumer` takes it from a JetStream durable. One trace: the relay's span is
/// the child of the publishing route's span (the context stored with the message), the
/// consumer's span the child of the relay's; the sink's request span links the relay's.
#[test]
fn one_trace_through_three_processes_the_outbox_and_nats() {
    let (Some(pg), Some(nats)) = (
        camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL"),
        camel_api::test_support::service_from_env("CAMEL_TEST_NATS_URL"),
    ) else {
        return;
    };
    let id = std::process::id();
    let (outbox, table) = (format!("trace3_{id}"), format!("trace3_orders_{id}"));
    let (stream, subject) = (format!("CAMEL_TRACE3_{id}"), format!("camel.trace3.{id}"));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let js = rt.block_on(async {
        let pool = sqlx::PgPool::connect(&pg).await.expect("PostgreSQL");
        sqlx::query(&format!("CREATE TABLE IF NOT EXISTS {table} (body text)"))
            .execute(&pool)
            .await
            .expect("a table");
        memory_stream(&nats, &stream, &subject).await
    });
    let receiver = otlp::receiver();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, yaml: String| {
        let file = dir.path().join(name);
        std::fs::write(&file, yaml).unwrap();
        file.display().to_string()
    };
    let orders = write(
        "orders.yaml",
        format!(
            "\
- route:
    id: order
    from:
      uri: platform-http:/order
      steps:
        - set_body:
            constant: order-1
        - transacted:
            datasource: '{pg}'
            steps:
              - to:
                  uri: 'sql:insert into {table} (body) values (:#${{body}})'
                  parameters: {{datasource: '{pg}'}}
              - to:
                  uri: 'outbox:{outbox}'
                  parameters: {{datasource: '{pg}'}}
"
        ),
    );
    let relay = write(
        "relay.yaml",
        format!(
            "\
- route:
    id: relay
    from:
      uri: 'outbox:{outbox}'
      parameters: {{datasource: '{pg}', poll_interval: 50ms}}
      steps:
        - to: 'nats:{subject}?servers={nats}&linger_ms=1'
"
        ),
    );
    let consumer = write(
        "consumer.yaml",
        format!(
            "\
- route:
    id: consume
    from:
      uri: 'nats:{subject}?servers={nats}&durable_name=trace3&jetstream_name={stream}'
      steps:
        - log: 'consumed ${{body}}'
"
        ),
    );
    let start = |file: &str, service: &str, extra: &[&str]| {
        let mut args = vec!["run", file, "--otel-endpoint", &receiver.endpoint];
        args.extend_from_slice(extra);
        let (child, log) = spawn_with_env(&args, &[("OTEL_SERVICE_NAME", service)]);
        (Killed(child), log)
    };
    let (_consumer, consumer_log) = start(&consumer, "consumer", &[]);
    let (_relay, _relay_log) = start(&relay, "relay", &[]);
    let port = free_port();
    let port_arg = port.to_string();
    let (_orders, orders_log) = start(&orders, "orders", &["--port", &port_arg]);
    wait_line(&orders_log, "/order");
    let traceparent = format!("traceparent: 00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    let answer = curl(&format!("http://127.0.0.1:{port}/order"), &[&traceparent]);
    assert_eq!(answer, "order-1", "the order route answered");
    wait_line(&consumer_log, "consumed order-1");
    let spans = receiver.collect(|s| {
        s.iter().any(|c| c.name == "consume")
            && s.iter().any(|r| r.name == "relay")
            && s.iter().any(|o| o.name == "order")
            && s.iter().any(|n| n.name == "nats send")
    });
    rt.block_on(async {
        let _ = js.delete_stream(&stream).await;
        if let Ok(pool) = sqlx::PgPool::connect(&pg).await {
            for t in [
                table.clone(),
                outbox.clone(),
                format!("{outbox}_dead"),
                format!("{outbox}_meta"),
            ] {
                let _ = sqlx::query(&format!("DROP TABLE IF EXISTS {t}"))
                    .execute(&pool)
                    .await;
            }
        }
    });
    let order = one(&spans, "order", CALLER_TRACE);
    let relayed = one(&spans, "relay", CALLER_TRACE);
    let consume = one(&spans, "consume", CALLER_TRACE);
    assert_eq!(
        (
            order.service.as_str(),
            relayed.service.as_str(),
            consume.service.as_str()
        ),
        ("orders", "relay", "consumer"),
        "three processes"
    );
    assert_eq!(order.parent_span_id, CALLER_SPAN, "the HTTP caller's child");
    assert_eq!(
        relayed.parent_span_id, order.span_id,
        "the context stored in the outbox"
    );
    assert_eq!(
        consume.parent_span_id, relayed.span_id,
        "carried by the NATS headers"
    );
    let link = format!("{}-{}", relayed.trace_id, relayed.span_id);
    assert!(
        spans
            .iter()
            .any(|s| s.name == "nats send" && s.service == "relay" && s.links.contains(&link)),
        "the sink's request span links the relay's: {spans:#?}"
    );
}

/// `OTEL_EXPORTER_OTLP_PROTOCOL=grpc`: the spans reach an OTLP/gRPC receiver (HTTP/2,
/// `TraceService/Export`) with the caller's trace.
#[test]
fn spans_go_over_grpc_when_the_protocol_says_so() {
    let receiver = otlp::grpc_receiver();
    traced_call(
        &receiver,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint.as_str()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_SERVICE_NAME", "grpc-check"),
        ],
        "grpc-check",
    );
}

/// An `https://` endpoint whose certificate comes from a private CA: with the CA file in
/// `OTEL_EXPORTER_OTLP_CERTIFICATE`, the spans arrive over OTLP/HTTP.
#[test]
fn spans_go_over_https_to_a_collector_with_a_private_ca() {
    let pki = otlp::Pki::new();
    let receiver = otlp::https_receiver(pki.server(false, &[b"http/1.1"]));
    assert!(receiver.endpoint.starts_with("https://"));
    let ca = pki.ca_file.display().to_string();
    traced_call(
        &receiver,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint.as_str()),
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", ca.as_str()),
            ("OTEL_SERVICE_NAME", "https-check"),
        ],
        "https-check",
    );
}

/// OTLP/gRPC over TLS to a collector that asks for a client certificate: the CA file and
/// the client certificate and key from the standard variables.
#[test]
fn spans_go_over_grpc_with_tls_and_a_client_certificate() {
    let pki = otlp::Pki::new();
    let receiver = otlp::grpc_tls_receiver(pki.server(true, &[b"h2"]));
    let ca = pki.ca_file.display().to_string();
    let cert = pki.client_cert_file.display().to_string();
    let key = pki.client_key_file.display().to_string();
    traced_call(
        &receiver,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint.as_str()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", ca.as_str()),
            ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", cert.as_str()),
            ("OTEL_EXPORTER_OTLP_CLIENT_KEY", key.as_str()),
            ("OTEL_SERVICE_NAME", "mtls-check"),
        ],
        "mtls-check",
    );
}

/// Runs the two HTTP routes with `env`, calls the front with the caller's trace, and
/// checks both routes' spans reached `receiver` under `service`.
fn traced_call(receiver: &otlp::OtlpReceiver, env: &[(&str, &str)], service: &str) {
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("routes.yaml");
    std::fs::write(&file, routes(port)).unwrap();
    let file = file.display().to_string();
    let port_arg = port.to_string();
    let (child, log) = spawn_with_env(&["run", &file, "--port", &port_arg], env);
    let _child = Killed(child);
    wait_line(&log, "/back");
    let traceparent = format!("traceparent: 00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    assert_eq!(
        curl(&format!("http://127.0.0.1:{port}/front"), &[&traceparent]),
        "done"
    );
    let spans = receiver.collect(|s| s.iter().filter(|s| s.trace_id == CALLER_TRACE).count() >= 2);
    let front = one(&spans, "front", CALLER_TRACE);
    let back = one(&spans, "back", CALLER_TRACE);
    assert_eq!(front.parent_span_id, CALLER_SPAN);
    assert_eq!(front.service, service);
    assert!(!back.parent_span_id.is_empty(), "{spans:#?}");
}
