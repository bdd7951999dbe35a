//! EIP layers in a plain `tower::ServiceBuilder` inside an axum app, with no
//! `CamelContext`: `POST /orders` turns the request into an [`Exchange`] and sends it
//! through the stack [`orders`] builds.
//!
//! | layer | what it does here |
//! |---|---|
//! | `map_err(into_camel_error)` | tower's errors (a timeout) become typed `CamelError`s |
//! | `TimeoutLayer` (1 s) | a slow order fails with `CamelError::Timeout` → 504 |
//! | `from_fn(reject_empty)` | middleware: an empty order is refused → 400 |
//! | `FilterLayer` | test orders (`X-Kind: test`) pass by unstored → 202 |
//! | `ChoiceLayer` | `X-Priority: high` takes the express branch |
//! | the inner service | the standard desk: stores the order (slow when it says so) |

use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use camel_api::{names, Body, BoxPredicate, BoxProcessor, CamelError, Exchange, Value};
use camel_eip::choice::ChoiceLayer;
use camel_eip::filter::FilterLayer;
use camel_eip::layer::into_camel_error;
use camel_eip::middleware::{from_fn, Next};
use tower::util::BoxCloneSyncService;
use tower::{service_fn, ServiceBuilder, ServiceExt};

/// The order-handling service: the EIP layers around the standard desk.
pub type Orders = BoxCloneSyncService<Exchange, Exchange, CamelError>;

/// How long an order may take before the caller gets a timeout.
pub const ORDER_TIMEOUT: Duration = Duration::from_secs(1);

fn predicate(text: &str) -> BoxPredicate {
    // The expressions are constants of this file: a parse error is a bug here.
    camel_language::simple_predicate(text).expect("the example's predicates parse")
}

fn body_text(ex: &Exchange) -> String {
    ex.message.body.as_text().unwrap_or_default().into_owned()
}

/// Builds the layered service.
pub fn orders() -> Orders {
    let express = BoxProcessor::sync(|mut ex: Exchange| {
        let order = body_text(&ex);
        ex.message.body = Body::from(format!("express: {order}"));
        Ok(ex)
    });
    let desk = service_fn(|mut ex: Exchange| async move {
        let order = body_text(&ex);
        if order.contains("slow") {
            tokio::time::sleep(ORDER_TIMEOUT * 10).await;
        }
        ex.message.body = Body::from(format!("standard: {order}"));
        Ok::<_, CamelError>(ex)
    });
    let stack = ServiceBuilder::new()
        .map_err(into_camel_error)
        .timeout(ORDER_TIMEOUT)
        .layer(from_fn(reject_empty))
        .layer(FilterLayer::new(predicate("${header.kind} != 'test'")))
        .layer(ChoiceLayer::new().when(predicate("${header.priority} == 'high'"), express))
        .service(desk);
    BoxCloneSyncService::new(stack)
}

/// Middleware: an order with no text is refused before any EIP sees it.
async fn reject_empty(ex: Exchange, next: Next) -> Result<Exchange, CamelError> {
    if body_text(&ex).trim().is_empty() {
        return Err(CamelError::processor("an order needs a body"));
    }
    next.call(ex).await
}

/// The axum app.
pub fn app() -> Router {
    Router::new()
        .route("/orders", post(take_order))
        .with_state(orders())
}

async fn take_order(
    State(orders): State<Orders>,
    headers: HeaderMap,
    body: String,
) -> (StatusCode, String) {
    let mut ex = Exchange::new(body);
    for (name, header) in [("kind", "x-kind"), ("priority", "x-priority")] {
        if let Some(value) = headers.get(header).and_then(|v| v.to_str().ok()) {
            ex.message.headers.insert(name, value.to_string());
        }
    }
    match orders.oneshot(ex).await {
        Ok(out) if out.properties.get(names::FILTER_MATCHED) == Some(&Value::from(false)) => {
            (StatusCode::ACCEPTED, "test order, not stored".into())
        }
        Ok(out) => (StatusCode::OK, body_text(&out)),
        Err(CamelError::Timeout(_)) => (
            StatusCode::GATEWAY_TIMEOUT,
            "the order took too long".into(),
        ),
        Err(CamelError::Processor(why)) => (StatusCode::BAD_REQUEST, why.to_string()),
        Err(other) => (StatusCode::INTERNAL_SERVER_ERROR, other.to_string()),
    }
}
