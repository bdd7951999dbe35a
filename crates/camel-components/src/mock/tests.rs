use std::time::Duration;

use camel_api::{Body, BoxProcessor, Exchange};
use tokio::time::Instant;

use super::*;
use crate::testing::endpoint;

const WAIT: Duration = Duration::from_secs(5);

fn producer(mock: &MockComponent, uri: &str) -> BoxProcessor {
    endpoint(mock, uri).unwrap().producer().unwrap()
}

async fn deliver(producer: &BoxProcessor, bodies: &[&str]) {
    for body in bodies {
        producer.process(Exchange::new(*body)).await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn satisfied_by_the_expected_count_bodies_and_headers() {
    let mock = MockComponent::new();
    let out = mock.endpoint("out");
    out.expected_message_count(2);
    out.expected_bodies_received(["a", "b"]);
    out.expected_header_received("kind", "x");
    let to = producer(&mock, "mock:out");
    for body in ["a", "b"] {
        to.process(Exchange::new(body).with_header("kind", "x"))
            .await
            .unwrap();
    }
    out.assert_is_satisfied(WAIT).await.unwrap();
    assert_eq!(out.received_count(), 2);
    assert_eq!(
        out.received()[1].message.body.as_text().as_deref(),
        Some("b")
    );
}

#[tokio::test(start_paused = true)]
async fn too_few_messages_fail_after_the_timeout_naming_both_counts() {
    let mock = MockComponent::new();
    let out = mock.endpoint("out");
    out.expected_message_count(2);
    deliver(&producer(&mock, "mock:out"), &["only"]).await;

    let start = Instant::now();
    let err = out.assert_is_satisfied(WAIT).await.unwrap_err();
    assert_eq!(start.elapsed(), WAIT);
    assert_eq!(
        err.to_string(),
        r#"mock:out: expected 2 message(s), received 1; bodies received: ["only"]"#
    );
}

#[tokio::test(start_paused = true)]
async fn too_many_messages_fail() {
    let mock = MockComponent::new();
    let out = mock.endpoint("out");
    out.expected_message_count(1);
    deliver(&producer(&mock, "mock:out"), &["a", "b"]).await;
    let err = out.assert_is_satisfied(WAIT).await.unwrap_err();
    assert!(matches!(
        err,
        MockAssertionError::MessageCount {
            expected: 1,
            received: 2,
            ..
        }
    ));
}

#[tokio::test(start_paused = true)]
async fn a_wrong_body_is_reported_with_its_position() {
    let mock = MockComponent::new();
    let out = mock.endpoint("out");
    out.expected_bodies_received(["a", "b"]);
    deliver(&producer(&mock, "mock:out"), &["a", "c"]).await;
    let err = out.assert_is_satisfied(WAIT).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"mock:out: message 2: expected body "b", received "c""#
    );
}

#[tokio::test(start_paused = true)]
async fn bodies_compare_by_bytes_and_headers_by_text() {
    let mock = MockComponent::new();
    let out = mock.endpoint("out");
    out.expected_bodies_received([Body::from(b"raw".to_vec())]);
    out.expected_header_received("n", 7);
    producer(&mock, "mock:out")
        .process(Exchange::new("raw").with_header("n", "7"))
        .await
        .unwrap();
    out.assert_is_satisfied(WAIT).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_missing_or_different_header_is_reported() {
    let mock = MockComponent::new();
    let out = mock.endpoint("out");
    out.expected_header_received("kind", "x");
    let to = producer(&mock, "mock:out");
    to.process(Exchange::new("1").with_header("kind", "x"))
        .await
        .unwrap();
    to.process(Exchange::new("2").with_header("kind", "y"))
        .await
        .unwrap();
    let err = out.assert_is_satisfied(WAIT).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "mock:out: message 2: expected header `kind` = `x`, received `y`"
    );

    out.reset();
    out.expected_header_received("kind", "x");
    deliver(&to, &["bare"]).await;
    let err = out.assert_is_satisfied(WAIT).await.unwrap_err();
    assert!(
        err.to_string().ends_with("received <no such header>"),
        "{err}"
    );
}

#[tokio::test(start_paused = true)]
async fn waits_for_late_arrivals_without_using_the_whole_timeout() {
    let mock = MockComponent::new();
    let out = mock.endpoint("late");
    out.expected_bodies_received(["x", "y"]);
    let to = producer(&mock, "mock:late");
    let sender = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        deliver(&to, &["x"]).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        deliver(&to, &["y"]).await;
    });
    let start = Instant::now();
    out.assert_is_satisfied(Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    sender.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn reset_forgets_messages_and_expectations() {
    let mock = MockComponent::new();
    let out = mock.endpoint("out");
    out.expected_message_count(5);
    deliver(&producer(&mock, "mock:out"), &["a"]).await;
    mock.reset();
    assert!(out.received().is_empty());
    out.assert_is_satisfied(WAIT).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn uri_options_and_clones_share_the_endpoint() {
    let mock = MockComponent::new();
    let registered = mock.clone();
    deliver(
        &producer(&registered, "mock:shared?expectedCount=1&log=true"),
        &["a"],
    )
    .await;
    mock.endpoint("shared")
        .assert_is_satisfied(WAIT)
        .await
        .unwrap();

    let err = endpoint(&mock, "mock:x?expectedCont=1")
        .unwrap_err()
        .to_string();
    assert!(err.contains("did you mean `expectedCount`"), "{err}");
    assert!(endpoint(&mock, "mock:x").unwrap().consumer().is_err());
}

#[tokio::test(start_paused = true)]
async fn minimum_count() {
    let mock = MockComponent::new();
    let out = mock.endpoint("min");
    out.expected_minimum_message_count(2);
    deliver(&producer(&mock, "mock:min"), &["a"]).await;
    let err = out.assert_is_satisfied(WAIT).await.unwrap_err();
    assert!(matches!(
        err,
        MockAssertionError::MinimumMessageCount {
            expected: 2,
            received: 1,
            ..
        }
    ));
    deliver(&producer(&mock, "mock:min"), &["b", "c"]).await;
    out.assert_is_satisfied(WAIT).await.unwrap();
}

#[tokio::test]
async fn a_reply_answers_or_fails_after_the_exchange_is_recorded() {
    let mock = MockComponent::new();
    let out = mock.endpoint("svc");
    out.when_any_exchange_received(|mut ex| {
        if ex.message.body.as_text().as_deref() == Some("bad") {
            return Err(camel_api::CamelError::user("ServiceDown", "no"));
        }
        ex.message.body = Body::from("answer");
        Ok(ex)
    });
    let to = producer(&mock, "mock:svc");
    let reply = to.process(Exchange::new("q")).await.unwrap();
    assert_eq!(reply.message.body.as_text().as_deref(), Some("answer"));
    let failed = to.process(Exchange::new("bad")).await.unwrap_err();
    assert_eq!(failed.kind_name(), "ServiceDown");
    // Both were recorded as they came in.
    let bodies: Vec<_> = out
        .received()
        .iter()
        .map(|ex| ex.message.body.as_text().unwrap_or_default().to_string())
        .collect();
    assert_eq!(bodies, ["q", "bad"]);
    out.reset();
    let plain = to.process(Exchange::new("q")).await.unwrap();
    assert_eq!(plain.message.body.as_text().as_deref(), Some("q"));
}
