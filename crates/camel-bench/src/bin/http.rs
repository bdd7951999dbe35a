//! Scenario `http`: the HTTP components against hand-written axum/reqwest code doing the
//! same work, in the same run, loaded by the same client loop.
//!
//! - `platform_http`: `platform-http:/bench` → 3 steps (`set_header` from a request
//!   header, `transform` building the reply text from it, `set_header` of the reply's
//!   `Content-Type`) → the reply; against an axum handler reading the same header and
//!   body and answering the same text. Both servers run in this process; the client is a
//!   pool of `HTTP_CALLERS` tasks on one keep-alive reqwest client, taking turns (rounds)
//!   between the two servers.
//! - `http_producer`: a route `direct:call` → `http://…/echo` against a bare reqwest loop
//!   calling the same axum echo server, both from `HTTP_CALLERS` tasks.
//!
//! ```text
//! cargo run --release -p camel-bench --bin http
//! ```
//! `HTTP_REQUESTS` (default 40,000 per side and case) and `HTTP_CALLERS` (default 16)
//! change the load; `HTTP_ONLY=platform_http|http_producer` runs one case.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{header, HeaderMap};
use axum::routing::post;
use axum::Router;
use camel_api::{Body, Exchange};
use camel_bench::{count_from_env, median, per_second, result_line};
use camel_core::builder::{constant, simple, RouteBuilder};
use camel_core::CamelContext;
use camel_http::{HttpComponent, PlatformHttpComponent, ServerConfig};

const ROUNDS: u64 = 8;

/// The axum baseline of the three steps: read the header, build the text, type it.
async fn bare_handler(
    headers: HeaderMap,
    _body: Bytes,
) -> ([(header::HeaderName, &'static str); 1], String) {
    let value = headers
        .get("x-in")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let mut text = String::with_capacity(4 + value.len());
    text.push_str("msg ");
    text.push_str(value);
    ([(header::CONTENT_TYPE, "text/plain")], text)
}

/// An echo server for the producer case: the request body back.
async fn echo(body: Bytes) -> Bytes {
    body
}

async fn serve(router: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("bound");
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            eprintln!("baseline server: {e}");
        }
    });
    addr
}

/// Runs `total` calls from `callers` tasks; returns the elapsed time.
async fn drive<F, Fut>(total: u64, callers: u64, call: F) -> Duration
where
    F: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send,
{
    let per_caller = (total / callers).max(1);
    let started = Instant::now();
    let tasks: Vec<_> = (0..callers)
        .map(|_| {
            let call = call.clone();
            tokio::spawn(async move {
                for _ in 0..per_caller {
                    call().await;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("a caller ends");
    }
    started.elapsed()
}

/// Interleaved rounds of `ours` and `base`; the rate of each, in calls per second.
async fn compare<A, FA, B, FB>(total: u64, callers: u64, ours: A, base: B) -> (f64, f64)
where
    A: Fn() -> FA + Clone + Send + Sync + 'static,
    FA: Future<Output = ()> + Send,
    B: Fn() -> FB + Clone + Send + Sync + 'static,
    FB: Future<Output = ()> + Send,
{
    // Warm both paths (connections, caches, the allocator).
    drive(total / 10, callers, ours.clone()).await;
    drive(total / 10, callers, base.clone()).await;
    let per_round = total / ROUNDS;
    let (mut ours_rates, mut base_rates) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let t = drive(per_round, callers, ours.clone()).await;
        ours_rates.push(per_second(per_round, t));
        let t = drive(per_round, callers, base.clone()).await;
        base_rates.push(per_second(per_round, t));
    }
    (median(ours_rates), median(base_rates))
}

fn print(case: &str, callers: u64, ours: f64, base: f64) {
    result_line(
        case,
        &[
            ("callers", callers.to_string()),
            ("ours_per_s", format!("{ours:.0}")),
            ("baseline_per_s", format!("{base:.0}")),
            ("ratio", format!("{:.2}", ours / base)),
        ],
    );
}

async fn platform_http(total: u64, callers: u64) {
    let server = PlatformHttpComponent::new(ServerConfig::new(([127, 0, 0, 1], 0).into()));
    let ctx = CamelContext::new();
    ctx.add_component(Arc::new(server.clone()));
    let route = RouteBuilder::from("platform-http:/bench?httpMethodRestrict=POST")
        .id("bench")
        .set_header("h", simple("${header.X-In}"))
        .transform(simple("msg ${header.h}"))
        .set_header("Content-Type", constant("text/plain"))
        .build();
    ctx.add_routes(vec![route])
        .await
        .expect("the route compiles");
    ctx.start().await.expect("the route starts");
    let ours_addr = server.serving("/bench").await.expect("bound");
    let base_addr = serve(Router::new().route("/bench", post(bare_handler))).await;

    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(callers as usize)
        .build()
        .expect("a client");
    let call = |client: reqwest::Client, url: String| {
        move || {
            let client = client.clone();
            let url = url.clone();
            async move {
                let resp = client
                    .post(&url)
                    .header("x-in", "value")
                    .body("payload")
                    .send()
                    .await
                    .expect("the server answers");
                assert!(resp.status().is_success(), "{}", resp.status());
                let text = resp.bytes().await.expect("a body");
                assert_eq!(&text[..], b"msg value");
            }
        }
    };
    let (ours, base) = compare(
        total,
        callers,
        call(client.clone(), format!("http://{ours_addr}/bench")),
        call(client.clone(), format!("http://{base_addr}/bench")),
    )
    .await;
    print("platform_http", callers, ours, base);
    ctx.stop().await;
}

async fn http_producer(total: u64, callers: u64) {
    let addr = serve(Router::new().route("/echo", post(echo))).await;
    let url = format!("http://{addr}/echo");
    let ctx = Arc::new(CamelContext::new());
    ctx.add_component(Arc::new(HttpComponent::http()));
    let route = RouteBuilder::from("direct:call").to(url.clone()).build();
    ctx.add_routes(vec![route])
        .await
        .expect("the route compiles");
    ctx.start().await.expect("the route starts");
    let ours = {
        let ctx = ctx.clone();
        move || {
            let ctx = ctx.clone();
            async move {
                let out = ctx
                    .request("direct:call", Exchange::new(Body::from("payload")))
                    .await
                    .expect("the call succeeds");
                assert_eq!(out.message.body.to_bytes().as_ref(), b"payload");
            }
        }
    };
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(callers as usize)
        .build()
        .expect("a client");
    let base = move || {
        let client = client.clone();
        let url = url.clone();
        async move {
            let resp = client
                .post(&url)
                .body("payload")
                .send()
                .await
                .expect("the server answers");
            assert!(resp.status().is_success());
            let body = resp.bytes().await.expect("a body");
            assert_eq!(&body[..], b"payload");
        }
    };
    let (ours, base) = compare(total, callers, ours, base).await;
    print("http_producer", callers, ours, base);
    ctx.stop().await;
}

fn main() {
    let total = count_from_env("HTTP_REQUESTS", 40_000);
    let callers = count_from_env("HTTP_CALLERS", 16).max(1);
    let only = std::env::var("HTTP_ONLY").ok();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        if only.as_deref().is_none_or(|o| o == "platform_http") {
            platform_http(total, callers).await;
        }
        if only.as_deref().is_none_or(|o| o == "http_producer") {
            http_producer(total, callers).await;
        }
    });
}
