//! The outbox relayed to the batching sinks, end to end: `from: outbox:…` → `to:
//! aws2-sqs:….fifo` (moto) and `to: nats:…` (a real JetStream), read back by a plain
//! client that must see every group in publish order; and the warning a relay route gets
//! at start when its destination does not keep order.
//!
//! Publishing happens in transactions (a `transacted` step publishing one message of every
//! group), on SQLite and, with `CAMEL_TEST_PG_URL`, on PostgreSQL.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sqs::types::{MessageSystemAttributeName, QueueAttributeName};
use camel_api::test_support::service_from_env;
use camel_core::CamelContext;
use camel_outbox::OutboxComponent;
use camel_sinks::nats::{NatsComponent, GROUP_KEY_HEADER};
use camel_sinks::sqs::{Aws2SqsComponent, SqsComponent};
use camel_sinks::BatcherRegistry;
use futures::StreamExt;

const GROUPS: usize = 8;
const PER_GROUP: usize = 12;

/// A name no other run uses (outbox tables on a shared PostgreSQL, queues, subjects).
fn unique(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{prefix}_{}_{nanos}", std::process::id())
}

/// The publishing route: each exchange is one transaction that publishes message `i` of
/// every group, in group order.
fn publish_route(outbox: &str, datasource: &str) -> String {
    let mut steps = String::new();
    for g in 0..GROUPS {
        steps.push_str(&format!(
            "
              - set_body:
                  simple: 'g{g}-${{header.i}}'
              - to:
                  uri: outbox:{outbox}
                  parameters: {{ datasource: '{datasource}', group_key: 'g{g}' }}"
        ));
    }
    format!(
        "
- route:
    id: publish
    from:
      uri: direct:publish
      steps:
        - transacted:
            datasource: '{datasource}'
            steps:{steps}
"
    )
}

async fn context(yaml: &str) -> CamelContext {
    let ctx = CamelContext::new();
    let registry = BatcherRegistry::new();
    ctx.add_component(Arc::new(OutboxComponent::new()));
    ctx.add_component(Arc::new(SqsComponent::with_registry(registry.clone())));
    ctx.add_component(Arc::new(Aws2SqsComponent(SqsComponent::with_registry(
        registry.clone(),
    ))));
    ctx.add_component(Arc::new(NatsComponent::with_registry(registry)));
    let defs = camel_core::yaml::load_str(yaml, "outbox-relay-test.yaml").unwrap();
    ctx.add_routes(defs).await.unwrap();
    ctx.start().await.unwrap();
    ctx
}

async fn publish_all(ctx: &CamelContext) {
    for i in 0..PER_GROUP {
        let ex = camel_api::Exchange::new("").with_header("i", i as i64);
        ctx.request("direct:publish", ex).await.unwrap();
    }
}

/// Checks that every group arrived complete and in publish order.
fn assert_in_publish_order(per_group: &HashMap<String, Vec<String>>) {
    assert_eq!(per_group.len(), GROUPS, "{per_group:?}");
    for g in 0..GROUPS {
        let expected: Vec<String> = (0..PER_GROUP).map(|i| format!("g{g}-{i}")).collect();
        assert_eq!(
            per_group[&format!("g{g}")],
            expected,
            "group g{g} arrives in publish order"
        );
    }
}

/// The datasources to run on: a fresh SQLite file, and PostgreSQL when configured.
fn datasources(dir: &tempfile::TempDir) -> Vec<String> {
    let mut out = vec![format!("sqlite:{}", dir.path().join("outbox.db").display())];
    match std::env::var("CAMEL_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => out.push(url),
        _ => eprintln!("PostgreSQL part skipped: CAMEL_TEST_PG_URL is not set"),
    }
    out
}

fn sqs_client(endpoint: &str) -> aws_sdk_sqs::Client {
    let config = aws_sdk_sqs::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "test"))
        .endpoint_url(endpoint)
        .build();
    aws_sdk_sqs::Client::from_conf(config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outbox_relayed_to_an_sqs_fifo_queue_keeps_every_group_in_publish_order() {
    let Some(endpoint) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for datasource in datasources(&dir) {
        let client = sqs_client(&endpoint);
        // No content-based deduplication: the sink must bring a deduplication id, and
        // messages with equal bodies must not be taken for duplicates.
        let queue = format!("{}.fifo", unique("relay"));
        let url = client
            .create_queue()
            .queue_name(&queue)
            .attributes(QueueAttributeName::FifoQueue, "true")
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap();
        let outbox = unique("sqs");
        let yaml = format!(
            "{publish}
- route:
    id: relay
    from:
      uri: outbox:{outbox}
      parameters: {{ datasource: '{datasource}', partitions: 4 }}
      steps:
        - to:
            uri: 'aws2-sqs:{queue}'
            parameters: {{ endpoint: '{endpoint}', access_key: test, secret_key: test }}
",
            publish = publish_route(&outbox, &datasource)
        );
        let ctx = context(&yaml).await;
        publish_all(&ctx).await;

        let mut per_group: HashMap<String, Vec<String>> = HashMap::new();
        let mut dedup_ids = std::collections::HashSet::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut received = 0;
        while received < GROUPS * PER_GROUP {
            assert!(
                Instant::now() < deadline,
                "only {received} arrived: {per_group:?}"
            );
            let out = client
                .receive_message()
                .queue_url(&url)
                .max_number_of_messages(10)
                .wait_time_seconds(1)
                .message_system_attribute_names(MessageSystemAttributeName::All)
                .send()
                .await
                .unwrap();
            for m in out.messages.unwrap_or_default() {
                let attributes = m.attributes.clone().unwrap_or_default();
                let group = attributes[&MessageSystemAttributeName::MessageGroupId].clone();
                let dedup = attributes[&MessageSystemAttributeName::MessageDeduplicationId].clone();
                assert!(
                    dedup.starts_with(&format!("outbox-{outbox}-")),
                    "the deduplication id is the outbox message: {dedup}"
                );
                assert!(dedup_ids.insert(dedup), "each message has its own id");
                let body = m.body.clone().unwrap_or_default();
                assert!(body.starts_with(&format!("{group}-")), "{body} in {group}");
                per_group.entry(group).or_default().push(body);
                received += 1;
                client
                    .delete_message()
                    .queue_url(&url)
                    .receipt_handle(m.receipt_handle.unwrap())
                    .send()
                    .await
                    .unwrap();
            }
        }
        ctx.stop().await;
        assert_in_publish_order(&per_group);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outbox_relayed_to_jetstream_carries_the_group_key_and_keeps_publish_order() {
    let Some(servers) = service_from_env("CAMEL_TEST_NATS_URL") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for datasource in datasources(&dir) {
        let subject = unique("relay.orders").replace('_', ".");
        let stream = unique("RELAY");
        let outbox = unique("nats");
        let yaml = format!(
            "{publish}
- route:
    id: relay
    from:
      uri: outbox:{outbox}
      parameters: {{ datasource: '{datasource}', partitions: 4 }}
      steps:
        - to:
            uri: 'nats:{subject}'
            parameters: {{ servers: '{servers}', stream: '{stream}' }}
",
            publish = publish_route(&outbox, &datasource)
        );
        let client = async_nats::connect(servers.as_str()).await.unwrap();
        let js = async_nats::jetstream::new(client);
        let stream_handle = js
            .create_stream(async_nats::jetstream::stream::Config {
                name: stream.clone(),
                subjects: vec![subject.clone()],
                storage: async_nats::jetstream::stream::StorageType::Memory,
                ..Default::default()
            })
            .await
            .unwrap();
        let ctx = context(&yaml).await;
        publish_all(&ctx).await;

        let consumer: async_nats::jetstream::consumer::PullConsumer = stream_handle
            .create_consumer(async_nats::jetstream::consumer::pull::Config::default())
            .await
            .unwrap();
        let mut messages = consumer.messages().await.unwrap();
        let mut per_group: HashMap<String, Vec<String>> = HashMap::new();
        for _ in 0..GROUPS * PER_GROUP {
            let m = tokio::time::timeout(Duration::from_secs(30), messages.next())
                .await
                .expect("every message arrives")
                .unwrap()
                .unwrap();
            let headers = m.headers.clone().unwrap_or_default();
            let group = headers
                .get(GROUP_KEY_HEADER)
                .map(|v| v.as_str().to_string())
                .expect("the group key travels as a header");
            let body = String::from_utf8_lossy(&m.payload).into_owned();
            assert!(body.starts_with(&format!("{group}-")), "{body} in {group}");
            per_group.entry(group).or_default().push(body);
            m.ack().await.unwrap();
        }
        ctx.stop().await;
        js.delete_stream(&stream).await.unwrap();
        assert_in_publish_order(&per_group);
    }
}

/// Log lines of this test binary, captured once for every test in it.
fn captured_logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = logs.clone();
        tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .with_writer(move || Capture(sink.clone()))
            .init();
        logs
    })
    .clone()
}

struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_relay_into_a_standard_queue_is_warned_about_at_start_and_a_fifo_one_is_not() {
    let logs = captured_logs();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("outbox.db").display());
    let tag = unique("warn");
    let route = |id: &str, outbox: &str, extra: &str, to: &str| {
        format!(
            "
- route:
    id: {id}_{tag}
    from:
      uri: outbox:{outbox}
      parameters: {{ datasource: '{db}'{extra} }}
      steps:
        - filter:
            simple: '${{body}} != null'
            steps:
              - to: '{to}'
"
        )
    };
    let yaml = [
        route("standard", "a", "", "aws2-sqs:orders?region=eu-west-1"),
        route("fifo", "b", "", "sqs:orders.fifo"),
        route("unordered", "c", ", ordering: none", "sqs:orders"),
        route(
            "url",
            "d",
            "",
            "sqs:https://sqs.eu-west-1.amazonaws.com/123456789012/audit",
        ),
    ]
    .concat();
    let ctx = context(&yaml).await;
    ctx.stop().await;
    let text = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    let warnings: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(&tag) && l.contains("does not keep order"))
        .collect();
    let named = |id: &str| {
        warnings
            .iter()
            .filter(|l| l.contains(&format!("route_id={id}_{tag}")))
            .count()
    };
    assert_eq!(named("standard"), 1, "{warnings:#?}");
    assert!(
        warnings
            .iter()
            .any(|l| l.contains("destination=aws2-sqs:orders") && l.contains("WARN")),
        "the warning names the destination: {warnings:#?}"
    );
    assert_eq!(named("url"), 1, "a queue URL without .fifo: {warnings:#?}");
    assert_eq!(named("fifo"), 0, "a FIFO queue keeps each group's order");
    assert_eq!(
        named("unordered"),
        0,
        "an unordered outbox has no order to keep"
    );
}
