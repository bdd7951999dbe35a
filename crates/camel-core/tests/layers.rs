//! Tower layers in builder routes: a concurrency limit really holds callers back, a
//! timeout fails a slow step with a typed error, middleware and EIP layers wrap nested
//! blocks.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::{Body, BoxProcessor, CamelError, Exchange};
use camel_core::builder::{constant, simple, RouteBuilder};
use camel_core::CamelContext;
use camel_eip::middleware::{from_fn, Next};
use tokio::sync::{mpsc, oneshot};
use tower::limit::ConcurrencyLimitLayer;
use tower::timeout::TimeoutLayer;

async fn started(route: camel_core::RouteDefinition) -> CamelContext {
    let ctx = CamelContext::new();
    ctx.add_routes(vec![route]).await.unwrap();
    ctx.start().await.unwrap();
    ctx
}

fn text(ex: &Exchange) -> String {
    ex.message.body.as_text().unwrap_or_default().into_owned()
}

/// A step that reports each exchange as it enters, then waits for its own release.
fn gate(
    entered: mpsc::UnboundedSender<String>,
    releases: Vec<oneshot::Receiver<()>>,
) -> BoxProcessor {
    let releases = Arc::new(Mutex::new(VecDeque::from(releases)));
    BoxProcessor::from_fn(move |ex: Exchange| {
        let release = releases.lock().unwrap().pop_front();
        let _ = entered.send(text(&ex));
        async move {
            match release {
                Some(release) => release
                    .await
                    .map_err(|_| CamelError::processor("release dropped"))?,
                None => return Err(CamelError::processor("more callers than releases")),
            }
            Ok(ex)
        }
    })
}

#[tokio::test(start_paused = true)]
async fn a_concurrency_limit_of_two_holds_the_third_caller_until_one_finishes() {
    let (entered_tx, mut entered) = mpsc::unbounded_channel();
    let (release_tx, release_rx): (Vec<_>, Vec<_>) = (0..3).map(|_| oneshot::channel()).unzip();
    let route = RouteBuilder::from("direct:in")
        .layer(ConcurrencyLimitLayer::new(2))
        .process_with(gate(entered_tx, release_rx))
        .build();
    let ctx = started(route).await;

    let mut calls = Vec::new();
    for name in ["a", "b", "c"] {
        let ctx = ctx.clone();
        calls.push(tokio::spawn(async move {
            ctx.request("direct:in", Exchange::new(name)).await
        }));
    }
    let first = entered.recv().await.unwrap();
    let second = entered.recv().await.unwrap();
    // With time paused, the clock only moves once every task is blocked: if the third
    // caller could enter, it would have before this timeout fires.
    let third = tokio::time::timeout(Duration::from_secs(5), entered.recv()).await;
    assert!(third.is_err(), "a third caller got past the limit of two");

    let mut releases = release_tx.into_iter();
    releases.next().unwrap().send(()).unwrap();
    let third = entered.recv().await.unwrap();
    let mut names = vec![first, second, third];
    names.sort();
    assert_eq!(names, ["a", "b", "c"]);
    for release in releases {
        release.send(()).unwrap();
    }
    for call in calls {
        call.await.unwrap().unwrap();
    }
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_timeout_layer_fails_a_slow_step_with_a_typed_timeout() {
    let slow = BoxProcessor::from_fn(|ex: Exchange| async move {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok(ex)
    });
    let route = RouteBuilder::from("direct:in")
        .set_header("before", constant("ran"))
        .layer(TimeoutLayer::new(Duration::from_secs(1)))
        .process_with(slow)
        .build();
    let ctx = started(route).await;
    let started_at = tokio::time::Instant::now();
    let err = ctx
        .request("direct:in", Exchange::new("x"))
        .await
        .unwrap_err();
    assert!(matches!(err, CamelError::Timeout(_)), "{err:?}");
    assert_eq!(started_at.elapsed(), Duration::from_secs(1));
    ctx.stop().await;
}

#[tokio::test]
async fn layer_around_wraps_only_its_block_and_nests_inside_other_steps() {
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let log = seen.clone();
    let middleware = from_fn(move |ex: Exchange, next: Next| {
        let log = log.clone();
        async move {
            log.lock().unwrap().push(format!("before {}", text(&ex)));
            let out = next.call(ex).await?;
            log.lock().unwrap().push(format!("after {}", text(&out)));
            Ok(out)
        }
    });
    let route = RouteBuilder::from("direct:in")
        .filter(simple("${body} == 'go'"), |b| {
            b.layer_around(middleware, |b| b.set_body(constant("inside")))
                .set_body(constant("outside"))
        })
        .build();
    assert_eq!(route.layers.len(), 1, "the nested layer reaches the route");
    let ctx = started(route).await;
    let out = ctx.request("direct:in", Exchange::new("go")).await.unwrap();
    assert_eq!(out.message.body, Body::from("outside"));
    assert_eq!(*seen.lock().unwrap(), ["before go", "after inside"]);
    let skipped = ctx.request("direct:in", Exchange::new("no")).await.unwrap();
    assert_eq!(skipped.message.body, Body::from("no"));
    assert_eq!(seen.lock().unwrap().len(), 2);
    ctx.stop().await;
}

#[tokio::test]
async fn an_unknown_layer_reference_is_a_route_error() {
    let route = RouteBuilder::from("direct:in")
        .step(
            "layer",
            serde_json::json!({ "ref": "missing", "steps": [] }),
        )
        .build();
    let ctx = CamelContext::new();
    let err = ctx.add_routes(vec![route]).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("no tower layer is registered under `missing`"),
        "{err}"
    );
}

/// Retries a failed exchange up to `left` more times.
#[derive(Clone)]
struct RetryTimes {
    left: usize,
}

impl tower::retry::Policy<Exchange, Exchange, CamelError> for RetryTimes {
    type Future = std::future::Ready<()>;

    fn retry(
        &mut self,
        _: &mut Exchange,
        result: &mut Result<Exchange, CamelError>,
    ) -> Option<Self::Future> {
        if result.is_ok() || self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(std::future::ready(()))
    }

    fn clone_request(&mut self, exchange: &Exchange) -> Option<Exchange> {
        Some(exchange.clone())
    }
}

#[tokio::test]
async fn a_retry_layer_runs_the_wrapped_steps_again_after_a_failure() {
    let attempts = Arc::new(Mutex::new(0));
    let counted = attempts.clone();
    let flaky = BoxProcessor::sync(move |ex: Exchange| {
        let mut n = counted.lock().unwrap();
        *n += 1;
        if *n < 3 {
            return Err(CamelError::processor(format!("attempt {n} failed")));
        }
        Ok(ex)
    });
    let route = RouteBuilder::from("direct:in")
        .layer(tower::retry::RetryLayer::new(RetryTimes { left: 2 }))
        .process_with(flaky)
        .build();
    let ctx = started(route).await;
    ctx.request("direct:in", Exchange::new("x")).await.unwrap();
    assert_eq!(*attempts.lock().unwrap(), 3);
    *attempts.lock().unwrap() = -10;
    let err = ctx
        .request("direct:in", Exchange::new("x"))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "attempt -7 failed",
        "two retries, then the error as it was"
    );
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_buffered_rate_limit_spaces_the_exchanges_of_the_route() {
    let route = RouteBuilder::from("direct:in")
        .layer(camel_eip::layer::ProcessorLayer::buffered(
            tower::limit::RateLimitLayer::new(1, Duration::from_secs(1)),
            8,
        ))
        .set_body(constant("limited"))
        .build();
    let ctx = started(route).await;
    let start = tokio::time::Instant::now();
    for _ in 0..3 {
        let out = ctx.request("direct:in", Exchange::new("x")).await.unwrap();
        assert_eq!(out.message.body, Body::from("limited"));
    }
    assert_eq!(start.elapsed(), Duration::from_secs(2), "one per second");
    ctx.stop().await;
}
