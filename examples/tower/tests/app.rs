//! The axum app answers through the EIP layers: each layer's decision shows in the reply.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use tower::ServiceExt;

async fn post(body: &str, headers: &[(&str, &str)]) -> (StatusCode, String) {
    let mut request = Request::post("/orders");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = example_tower::app()
        .oneshot(request.body(Body::from(body.to_string())).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
        .await
        .unwrap();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

#[tokio::test]
async fn a_standard_order_reaches_the_inner_service() {
    assert_eq!(
        post("two apples", &[]).await,
        (StatusCode::OK, "standard: two apples".into())
    );
}

#[tokio::test]
async fn a_high_priority_order_takes_the_express_branch() {
    assert_eq!(
        post("one pear", &[("x-priority", "high")]).await,
        (StatusCode::OK, "express: one pear".into())
    );
}

#[tokio::test]
async fn a_test_order_is_filtered_out() {
    // Neither the express branch nor the desk sees it, even with a high priority.
    assert_eq!(
        post("a probe", &[("x-kind", "test"), ("x-priority", "high")]).await,
        (StatusCode::ACCEPTED, "test order, not stored".into())
    );
}

#[tokio::test]
async fn the_middleware_refuses_an_empty_order() {
    assert_eq!(
        post("  ", &[]).await,
        (StatusCode::BAD_REQUEST, "an order needs a body".into())
    );
}

#[tokio::test(start_paused = true)]
async fn a_slow_order_times_out_with_a_typed_error() {
    let started = tokio::time::Instant::now();
    let (status, text) = post("slow crate of melons", &[]).await;
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT, "{text}");
    assert_eq!(started.elapsed(), Duration::from_secs(1));
}

#[tokio::test]
async fn the_stack_is_a_plain_tower_service() {
    // The same layers, called directly without axum: `orders()` is an ordinary service.
    let out = example_tower::orders()
        .oneshot(camel_api::Exchange::new("three figs"))
        .await
        .unwrap();
    assert_eq!(
        out.message.body,
        camel_api::Body::from("standard: three figs")
    );
}
