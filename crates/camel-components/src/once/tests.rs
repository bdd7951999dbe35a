use std::sync::Mutex;

use camel_api::Value;
use tokio::time::Instant;

use super::*;
use crate::testing::{endpoint, FakeContext};

/// Runs the consumer of `uri` to its end; the exchanges it sent and when (ms).
async fn fire(uri: &str) -> Vec<(u128, Exchange)> {
    let start = Instant::now();
    let seen: Arc<Mutex<Vec<(u128, Exchange)>>> = Arc::default();
    let sink = seen.clone();
    let pipeline = BoxProcessor::sync(move |ex: Exchange| {
        sink.lock()
            .unwrap()
            .push((start.elapsed().as_millis(), ex.clone()));
        Ok(ex)
    });
    let ep = endpoint(&OnceComponent, uri).unwrap();
    let ctx = ConsumerContext::for_pipeline("once", pipeline);
    ep.consumer().unwrap().run(ctx).await.unwrap();
    let seen = seen.lock().unwrap();
    seen.clone()
}

fn int(v: Option<&Value>) -> Option<i64> {
    v.and_then(Value::as_i64)
}

#[tokio::test(start_paused = true)]
async fn fires_exactly_once_after_the_default_second() {
    let fired = fire("once:tick").await;
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].0, 1000);
    assert!(fired[0].1.message.body.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_negative_or_zero_delay_fires_at_once() {
    assert_eq!(fire("once:a?delay=-1").await[0].0, 0);
    assert_eq!(fire("once:a?delay=0").await[0].0, 0);
    assert_eq!(fire("once:a?delay=250").await[0].0, 250);
    assert_eq!(fire("once:a?delay=2s").await[0].0, 2000);
}

#[tokio::test(start_paused = true)]
async fn body_headers_properties_and_variables_from_the_uri() {
    let fired = fire(
        "once:tick?delay=0&body=world&header.foo=abc&header.orderId=123&header.ok=true\
         &exchangeProperty.source=test&variable.amount=7",
    )
    .await;
    let ex = &fired[0].1;
    assert_eq!(ex.message.body.as_text().as_deref(), Some("world"));
    assert_eq!(ex.header("foo").unwrap().to_string(), "abc");
    // Numbers and booleans are converted, and the key keeps its case.
    assert_eq!(int(ex.header("orderId")), Some(123));
    assert_eq!(ex.header("ok"), Some(&Value::Bool(true)));
    assert_eq!(ex.property("source").unwrap().to_string(), "test");
    assert_eq!(int(ex.variable("amount")), Some(7));
}

#[tokio::test(start_paused = true)]
async fn a_numeric_body_stays_text() {
    let fired = fire("once:n?delay=0&body=123").await;
    assert_eq!(fired[0].1.message.body.as_text().as_deref(), Some("123"));
}

#[tokio::test(start_paused = true)]
async fn yaml_maps_of_headers_and_the_name_in_parameters() {
    // camel-core turns `uri: once` + `name` into `once:hello`; `once:` + `name` works too.
    let uri = EndpointUri::parse("once:").unwrap().with_parameters([
        ("name", "hello".to_string()),
        ("body", "Hello World".to_string()),
        ("headers", r#"{"foo":"foolish","bar":456}"#.to_string()),
        ("delay", "0".to_string()),
    ]);
    let ep = OnceComponent.endpoint(uri, &FakeContext).unwrap();
    let seen: Arc<Mutex<Option<Exchange>>> = Arc::default();
    let sink = seen.clone();
    let pipeline = BoxProcessor::sync(move |ex: Exchange| {
        *sink.lock().unwrap() = Some(ex.clone());
        Ok(ex)
    });
    let ctx = ConsumerContext::for_pipeline("once", pipeline);
    ep.consumer().unwrap().run(ctx).await.unwrap();
    let ex = seen.lock().unwrap().take().unwrap();
    assert_eq!(ex.message.body.as_text().as_deref(), Some("Hello World"));
    assert_eq!(ex.header("foo").unwrap().to_string(), "foolish");
    assert_eq!(int(ex.header("bar")), Some(456));
}

#[tokio::test(start_paused = true)]
async fn languages_see_what_was_set_before_them() {
    let fired = fire(
        "once:calc?delay=0&variable.amount=123\
         &header.total=language:simple:${variable.amount}\
         &body=language:simple:total%20${header.total}",
    )
    .await;
    let ex = &fired[0].1;
    assert_eq!(ex.header("total").unwrap().to_string(), "123");
    assert_eq!(ex.message.body.as_text().as_deref(), Some("total 123"));
}

#[tokio::test(start_paused = true)]
async fn file_values_are_read_when_the_endpoint_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.json");
    std::fs::write(&data, r#"{"id":1}"#).unwrap();
    let fired = fire(&format!("once:f?delay=0&body=file:{}", data.display())).await;
    assert_eq!(
        fired[0].1.message.body.as_text().as_deref(),
        Some(r#"{"id":1}"#)
    );

    let missing = dir.path().join("missing.json");
    let err = endpoint(
        &OnceComponent,
        &format!("once:f?body=file:{}", missing.display()),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("parameter `body`") && err.contains("missing.json"),
        "{err}"
    );
    // A folder (or a FIFO) is refused without being opened.
    let err = endpoint(
        &OnceComponent,
        &format!("once:f?body=file:{}", dir.path().display()),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("not a regular file"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn a_stop_before_the_delay_sends_nothing() {
    let ep = endpoint(&OnceComponent, "once:late?delay=10s").unwrap();
    let ctx = ConsumerContext::for_pipeline("once", BoxProcessor::identity());
    let task = tokio::spawn(ep.consumer().unwrap().run(ctx.clone()));
    tokio::time::advance(Duration::from_secs(1)).await;
    ctx.cancellation().cancel();
    task.await.unwrap().unwrap();
    assert_eq!(ctx.stats().completed(), 0);
}

#[test]
fn mistakes_are_named() {
    let err = |uri: &str| endpoint(&OnceComponent, uri).unwrap_err().to_string();
    assert!(err("once:").contains("needs a name"));
    assert!(err("once:x?delay=soon").contains("`delay`"));
    assert!(err("once:x?bdy=1").contains("did you mean `body`"));
    assert!(err("once:x?body=language:simple").contains("language:NAME:EXPRESSION"));
    assert!(err("once:x?body=classpath:a.txt").contains("file:PATH"));
    assert!(err("once:x?header.=1").contains("needs a name"));
    assert!(err("once:x?body=language:groovy:1").contains("parameter `body`"));
    assert!(endpoint(&OnceComponent, "once:x")
        .unwrap()
        .producer()
        .is_err());
}

#[test]
fn a_prefixed_key_in_parameters_is_pointed_to_where_it_works() {
    let uri = EndpointUri::parse("once:x")
        .unwrap()
        .with_parameters([("header.orderId", "1".to_string())]);
    let err = OnceComponent
        .endpoint(uri, &FakeContext)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`headers`") && err.contains("URI's query"),
        "{err}"
    );
    // Other unknown options keep the plain message.
    let err = endpoint(&OnceComponent, "once:x?bdy=1")
        .unwrap_err()
        .to_string();
    assert!(!err.contains("URI's query"), "{err}");
}
