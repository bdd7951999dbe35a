//! The `outbox:` component: a producer publishes exchanges, the consumer relays them into a
//! route pipeline, on the embedded SQLite default and on PostgreSQL via `datasource`.

mod common;

use std::any::Any;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::{
    BoxExpression, BoxPredicate, BoxProcessor, CamelError, Component, ComponentContext,
    ConsumerContext, EndpointUri, Exchange, Expression, Value,
};
use camel_outbox::{headers, OutboxComponent};
use tokio::sync::mpsc;

/// Just enough of the simple language for `${header.NAME}`.
#[derive(Debug)]
struct HeaderExpression(String);

impl Expression for HeaderExpression {
    fn evaluate(&self, exchange: &Exchange) -> Result<Value, CamelError> {
        Ok(exchange.header(&self.0).cloned().unwrap_or(Value::Null))
    }
}

struct TestContext;

impl ComponentContext for TestContext {
    fn expression(&self, language: &str, text: &str) -> Result<BoxExpression, CamelError> {
        assert_eq!(language, "simple");
        let name = text.trim_start_matches("${header.").trim_end_matches('}');
        Ok(Arc::new(HeaderExpression(name.to_string())))
    }
    fn predicate(&self, _: &str, _: &str) -> Result<BoxPredicate, CamelError> {
        Err(CamelError::processor("no predicates here"))
    }
    fn producer(&self, uri: &str) -> Result<BoxProcessor, CamelError> {
        Err(CamelError::processor(format!("no producer for {uri}")))
    }
    fn resource(&self, _: &str) -> Option<Arc<dyn Any + Send + Sync>> {
        None
    }
    fn route_id(&self) -> Option<&str> {
        Some("test")
    }
}

fn uri(text: &str, params: &[(&str, &str)]) -> EndpointUri {
    EndpointUri::parse(text)
        .unwrap()
        .with_parameters(params.iter().map(|(k, v)| (*k, v.to_string())))
}

/// Publishes 12 orders through the producer and relays them through the consumer; the
/// first delivery of one message fails. Returns (id, group, attempt, body) per delivery.
async fn round_trip(
    component: OutboxComponent,
    extra: &[(&str, &str)],
) -> Vec<(i64, String, i64, String)> {
    let mut producer_params = vec![("group_key", "${header.order_id}")];
    producer_params.extend_from_slice(extra);
    let producer = component
        .endpoint(uri("outbox:orders", &producer_params), &TestContext)
        .unwrap()
        .producer()
        .unwrap();
    let mut consumer_params = vec![
        ("backoff_min", "5ms"),
        ("backoff_max", "10ms"),
        ("poll_interval", "20ms"),
    ];
    consumer_params.extend_from_slice(extra);
    let consumer = component
        .endpoint(uri("outbox:orders", &consumer_params), &TestContext)
        .unwrap()
        .consumer()
        .unwrap();

    let seen = Arc::new(Mutex::new(Vec::new()));
    let (done_tx, mut done_rx) = mpsc::unbounded_channel();
    let failed_once = Arc::new(Mutex::new(false));
    let pipeline = {
        let seen = seen.clone();
        BoxProcessor::sync(move |ex: Exchange| {
            let id = ex.header(headers::ID).and_then(Value::as_i64).unwrap_or(-1);
            let group = ex
                .header(headers::GROUP_KEY)
                .map(|v| v.to_string())
                .unwrap_or_default();
            let attempt = ex
                .header(headers::ATTEMPT)
                .and_then(Value::as_i64)
                .unwrap_or(-1);
            let body = ex.message.body.as_text().unwrap_or_default().to_string();
            seen.lock()
                .unwrap()
                .push((id, group, attempt, body.clone()));
            let mut failed = failed_once.lock().unwrap();
            if body == "order 1 step 1" && !*failed {
                *failed = true;
                return Err(CamelError::processor("first try fails"));
            }
            let _ = done_tx.send(id);
            Ok(ex)
        })
    };
    let ctx = ConsumerContext::for_pipeline("relay", pipeline);
    let running = tokio::spawn(consumer.run(ctx.clone()));
    for step in 0..4 {
        for order in 0..3 {
            let ex =
                Exchange::new(format!("order {order} step {step}")).with_header("order_id", order);
            let out = producer.process(ex).await.unwrap();
            assert!(
                out.header(headers::ID).and_then(Value::as_i64).is_some(),
                "producer sets the id"
            );
        }
    }
    for _ in 0..12 {
        tokio::time::timeout(Duration::from_secs(20), done_rx.recv())
            .await
            .expect("all 12 relayed");
    }
    ctx.cancellation().cancel();
    running.await.unwrap().unwrap();
    let seen = seen.lock().unwrap().clone();
    seen
}

fn check(seen: &[(i64, String, i64, String)]) {
    assert_eq!(seen.len(), 13, "12 messages, one retried: {seen:?}");
    let retried: Vec<i64> = seen
        .iter()
        .filter(|s| s.3 == "order 1 step 1")
        .map(|s| s.2)
        .collect();
    assert_eq!(retried, vec![1, 2], "CamelOutboxAttempt counts up");
    for order in 0..3 {
        let firsts: Vec<&str> = seen
            .iter()
            .filter(|s| s.1 == order.to_string() && s.2 == 1)
            .map(|s| s.3.as_str())
            .collect();
        let expected: Vec<String> = (0..4)
            .map(|step| format!("order {order} step {step}"))
            .collect();
        assert_eq!(
            firsts, expected,
            "order {order}: steps in publish order, headers and body kept"
        );
    }
}

#[tokio::test]
async fn embedded_sqlite_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let seen = round_trip(
        OutboxComponent::with_data_dir(dir.path().join("camel-data")),
        &[],
    )
    .await;
    check(&seen);
    assert!(dir.path().join("camel-data/outbox.db").exists());
}

#[tokio::test]
async fn postgres_through_the_datasource_parameter() {
    let Some(url) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let table = common::unique("ob_comp");
    let seen = round_trip(
        OutboxComponent::new(),
        &[("datasource", &url), ("table", &table), ("partitions", "2")],
    )
    .await;
    check(&seen);
    common::drop_tables(&camel_outbox::Datasource::connect(&url).unwrap(), &table).await;
}

#[test]
fn endpoint_errors_are_clear() {
    let c = OutboxComponent::with_data_dir(std::env::temp_dir().join("camel-outbox-errors"));
    let err = c
        .endpoint(uri("outbox:orders", &[("partitons", "2")]), &TestContext)
        .unwrap_err();
    assert!(
        err.to_string().contains("partitions"),
        "suggests the nearest name: {err}"
    );
    let err = c
        .endpoint(uri("outbox:Bad-Name", &[]), &TestContext)
        .unwrap_err();
    assert!(err.to_string().contains("Bad-Name"), "{err}");
    c.endpoint(uri("outbox:o", &[("partitions", "2")]), &TestContext)
        .unwrap();
    let err = c
        .endpoint(uri("outbox:o", &[("partitions", "3")]), &TestContext)
        .unwrap_err();
    assert!(err.to_string().contains("contradicts"), "{err}");
    let err = c
        .endpoint(
            uri("outbox:o", &[("datasource", "mysql://x")]),
            &TestContext,
        )
        .unwrap_err();
    assert!(err.to_string().contains("unsupported datasource"), "{err}");
}

#[test]
fn group_key_on_a_consumer_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let c = OutboxComponent::with_data_dir(dir.path());
    let endpoint = c
        .endpoint(
            uri("outbox:o", &[("group_key", "${header.order_id}")]),
            &TestContext,
        )
        .unwrap();
    let err = endpoint.consumer().unwrap_err();
    assert!(err.to_string().contains("belongs on the producer"), "{err}");
}

#[test]
fn a_second_relay_on_one_sqlite_file_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    // Two components stand for two processes: each has its own handles on the file.
    let first = OutboxComponent::with_data_dir(dir.path());
    let second = OutboxComponent::with_data_dir(dir.path());
    let relay = first
        .endpoint(uri("outbox:o", &[]), &TestContext)
        .unwrap()
        .consumer()
        .unwrap();
    let other = second.endpoint(uri("outbox:o", &[]), &TestContext).unwrap();
    let err = other.consumer().unwrap_err().to_string();
    assert!(err.contains("another relay is already running"), "{err}");
    assert!(err.contains("outbox.db`"), "names the database file: {err}");
    // A producer of the same outbox is welcome; so is a relay of another outbox.
    other.producer().unwrap();
    second
        .endpoint(uri("outbox:audit", &[]), &TestContext)
        .unwrap()
        .consumer()
        .unwrap();
    drop(relay);
    other
        .consumer()
        .expect("the lock went with the first relay");
}

/// A database name of `url` replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let cut = base.rfind('/').expect("a database URL has a path");
    let query = if query.is_empty() {
        String::new()
    } else {
        format!("?{query}")
    };
    format!("{}/{name}{query}", &base[..cut])
}

#[tokio::test]
async fn a_relay_retries_until_its_database_exists_and_says_so_meanwhile() {
    let Some(base) = camel_api::test_support::service_from_env("CAMEL_TEST_PG_URL") else {
        return;
    };
    let name = common::unique("ob_late_db");
    let url = with_database(&base, &name);
    let c = OutboxComponent::new();
    let params = [("datasource", url.as_str()), ("poll_interval", "20ms")];
    let (ctx, running, mut rx) = run_into_channel(&c, "outbox:late", &params);
    let reason = failing_reason(&ctx).await;
    assert!(reason.contains("does not exist"), "{reason}");

    let admin = camel_outbox::Datasource::connect(&base).unwrap();
    let camel_outbox::Datasource::Postgres(admin_pool) = &admin else {
        unreachable!()
    };
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(admin_pool)
        .await
        .unwrap();
    let ds = camel_outbox::Datasource::connect(&url).unwrap();
    let outbox = camel_outbox::Outbox::open(ds.clone(), camel_outbox::OutboxConfig::new("late"))
        .await
        .unwrap();
    common::publish(&outbox, vec![camel_outbox::NewMessage::text("hello")]).await;
    let got = tokio::time::timeout(Duration::from_secs(20), rx.recv())
        .await
        .expect("relayed once the database exists");
    assert_eq!(got.as_deref(), Some("hello"));
    assert_eq!(ctx.health().failing(), None, "healthy again");

    ctx.cancellation().cancel();
    running.await.unwrap().unwrap();
    drop((outbox, ds, c));
    sqlx::query(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .execute(admin_pool)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_relay_refused_a_partition_change_retries_until_the_backlog_is_drained() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("outbox.db");
    // A backlog published with one partition.
    let ds = camel_outbox::Datasource::sqlite_file(&file).unwrap();
    let old = camel_outbox::Outbox::open(ds.clone(), common::fast_config("o"))
        .await
        .unwrap();
    let backlog = (0..3)
        .map(|i| camel_outbox::NewMessage::text(format!("old {i}")))
        .collect();
    common::publish(&old, backlog).await;

    let c = OutboxComponent::with_data_dir(dir.path());
    let params = [("partitions", "2"), ("poll_interval", "20ms")];
    let (ctx, running, mut rx) = run_into_channel(&c, "outbox:o", &params);
    let reason = failing_reason(&ctx).await;
    assert!(reason.contains("partitions = 1"), "{reason}");

    // The old count's relay drains the backlog (a bare `Relay` takes no lock file, so it
    // may run beside the component's); then the new relay opens by itself.
    let rec = common::Recorder::new();
    let drain = rec.spawn(old);
    rec.wait_for(Duration::from_secs(20), "the backlog drained", |l| {
        l.len() >= 3
    })
    .await;
    drain.shutdown().await.unwrap();
    wait_for_health(&ctx, |f| f.is_none()).await;
    let producer = c
        .endpoint(uri("outbox:o", &[]), &TestContext)
        .unwrap()
        .producer()
        .unwrap();
    producer.process(Exchange::new("new")).await.unwrap();
    let got = tokio::time::timeout(Duration::from_secs(20), rx.recv())
        .await
        .expect("relayed with the new count");
    assert_eq!(got.as_deref(), Some("new"));
    ctx.cancellation().cancel();
    running.await.unwrap().unwrap();
}

/// Runs the consumer of `endpoint` with a pipeline that sends each body to the returned
/// channel.
fn run_into_channel(
    c: &OutboxComponent,
    endpoint: &str,
    params: &[(&str, &str)],
) -> (
    ConsumerContext,
    tokio::task::JoinHandle<Result<(), CamelError>>,
    mpsc::UnboundedReceiver<String>,
) {
    let consumer = c
        .endpoint(uri(endpoint, params), &TestContext)
        .unwrap()
        .consumer()
        .unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    let pipeline = BoxProcessor::sync(move |ex: Exchange| {
        let _ = tx.send(ex.message.body.as_text().unwrap_or_default().to_string());
        Ok(ex)
    });
    let ctx = ConsumerContext::for_pipeline("relay", pipeline);
    let running = tokio::spawn(consumer.run(ctx.clone()));
    (ctx, running, rx)
}

/// Waits until the consumer reports failing; returns why.
async fn failing_reason(ctx: &ConsumerContext) -> String {
    wait_for_health(ctx, |f| f.is_some())
        .await
        .unwrap_or_default()
}

/// Polls the consumer's health until `cond` holds (at most 20 s); returns the reason.
async fn wait_for_health(
    ctx: &ConsumerContext,
    cond: impl Fn(Option<&str>) -> bool,
) -> Option<String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let failing = ctx.health().failing();
        if cond(failing.as_deref()) {
            return failing.map(|f| f.to_string());
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "health never changed: {failing:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
