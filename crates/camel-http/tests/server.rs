//! The `platform-http:` consumer on real sockets: mapping, status codes, backpressure.

mod support;

use std::sync::Arc;
use std::time::Duration;

use camel_api::{Body, BoxProcessor, CamelError, Exchange, Value};
use camel_core::builder::simple;
use camel_core::RouteBuilder;
use camel_http::headers as h;
use serde_json::json;
use support::{client, local, start};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn echo() -> impl Fn(Exchange) -> Result<Exchange, CamelError> + Send + Sync + 'static {
    |mut ex: Exchange| {
        let get = |name: &str| ex.header(name).map(Value::to_json);
        let doc = json!({
            "id": get("id"),
            "q": get("q"),
            "page_size": get("pageSize"),
            "trace": get("X-Trace"),
            "method": get(h::HTTP_METHOD),
            "path": get(h::HTTP_PATH),
            "uri": get(h::HTTP_URI),
            "query": get(h::HTTP_QUERY),
            "content_type": get(h::CONTENT_TYPE),
            "camel_leak": get("CamelSecret"),
            "body": ex.message.body.as_text().map(|t| t.into_owned()),
        });
        ex.message.body = Body::from(doc);
        ex.message.headers.insert(h::HTTP_RESPONSE_CODE, 201);
        ex.message.headers.insert("X-Reply", "yes");
        Ok(ex)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn producer_and_consumer_map_path_query_and_headers() {
    let route = RouteBuilder::from("platform-http:/orders/{id}?httpMethodRestrict=GET,POST")
        .process(echo())
        .build();
    let run = start(local(), vec![route], "/orders/{id}").await;
    let request = Exchange::new("hello")
        .with_header(h::HTTP_METHOD, "POST")
        .with_header("X-Trace", "t-1")
        .with_header("CamelSecret", "internal")
        .with_header(h::CONTENT_TYPE, "text/plain");
    let reply = run
        .ctx
        .request(&run.url("/orders/42?q=a+b&pageSize=2"), request)
        .await
        .expect("the call succeeds");
    assert_eq!(reply.header(h::HTTP_RESPONSE_CODE), Some(&Value::Int(201)));
    assert_eq!(reply.header("X-Reply"), Some(&Value::from("yes")));
    assert_eq!(
        reply.header(h::CONTENT_TYPE),
        Some(&Value::from("application/json"))
    );
    let doc = reply.message.body.to_json().expect("a JSON reply");
    assert_eq!(
        doc,
        json!({
            "id": "42",
            "q": "a b",
            "page_size": "2",
            "trace": "t-1",
            "method": "POST",
            "path": "/orders/42",
            "uri": "/orders/42?q=a+b&pageSize=2",
            "query": "q=a+b&pageSize=2",
            "content_type": "text/plain",
            "camel_leak": null,
            "body": "hello",
        })
    );
    run.ctx.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_path_is_404_and_wrong_method_405_with_allow() {
    let route = RouteBuilder::from("platform-http:/only-get?httpMethodRestrict=GET")
        .set_body(simple("ok"))
        .build();
    let run = start(local(), vec![route], "/only-get").await;
    let c = client();
    let r = c.get(run.url("/nowhere")).send().await.unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(r.headers()["content-type"], "application/problem+json");
    let doc: serde_json::Value = r.json().await.unwrap();
    assert_eq!(doc["status"], 404);
    let r = c.delete(run.url("/only-get")).send().await.unwrap();
    assert_eq!(r.status(), 405);
    assert_eq!(r.headers()["allow"], "GET");
    let r = c.get(run.url("/only-get")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/plain; charset=utf-8");
    assert_eq!(r.text().await.unwrap(), "ok");
    run.ctx.stop().await;
}

/// Sends `head` on a raw connection and returns what the server answers.
async fn raw(addr: std::net::SocketAddr, head: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(head).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf))
        .await
        .expect("an answer before the body is complete")
        .unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_limit_is_413_before_it_is_all_sent() {
    let route = RouteBuilder::from("platform-http:/upload?maxBodySize=16")
        .set_body(simple("stored"))
        .build();
    let run = start(local(), vec![route], "/upload").await;
    // Declared too large: answered at once, although no byte of the body was sent.
    let answer = raw(
        run.addr,
        b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
    // Chunked, with no length: answered once the first chunk passes the bound, while the
    // client has not finished the body.
    let mut head =
        b"POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n".to_vec();
    head.extend_from_slice(&[b'a'; 64]);
    head.extend_from_slice(b"\r\n");
    let answer = raw(run.addr, &head).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    // Within the bound, it is read.
    let r = client()
        .post(run.url("/upload"))
        .body("small")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    run.ctx.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_route_error_is_500_with_a_problem_body_and_no_internals() {
    let route = RouteBuilder::from("platform-http:/fail")
        .process(|_| {
            Err(CamelError::processor(
                "connection to db-internal.corp:5432 refused",
            ))
        })
        .build();
    let run = start(local(), vec![route], "/fail").await;
    let r = client().get(run.url("/fail")).send().await.unwrap();
    assert_eq!(r.status(), 500);
    assert_eq!(r.headers()["content-type"], "application/problem+json");
    let text = r.text().await.unwrap();
    assert!(!text.contains("db-internal"), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["title"], "Internal Server Error");
    run.ctx.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suspended_route_is_503_and_a_stopped_one_leaves_the_server_to_the_others() {
    let a = RouteBuilder::from("platform-http:/a")
        .id("a")
        .set_body(simple("A"))
        .build();
    let b = RouteBuilder::from("platform-http:/b")
        .id("b")
        .set_body(simple("B"))
        .build();
    let run = start(local(), vec![a, b], "/a").await;
    run.server.serving("/b").await.unwrap();
    let c = client();
    let routes = run.ctx.route_controller();
    routes.suspend_route("a").await.unwrap();
    let r = c.get(run.url("/a")).send().await.unwrap();
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "1");
    assert_eq!(c.get(run.url("/b")).send().await.unwrap().status(), 200);
    routes.resume_route("a").await.unwrap();
    assert_eq!(
        c.get(run.url("/a"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
        "A"
    );

    routes.stop_route("a").await.unwrap();
    assert_eq!(c.get(run.url("/a")).send().await.unwrap().status(), 404);
    let r = c.get(run.url("/b")).send().await.unwrap();
    assert_eq!(r.text().await.unwrap(), "B", "the server outlives route a");
    // Started again, the route takes its path back on the same server.
    routes.start_route("a").await.unwrap();
    let again = run.server.serving("/a").await.unwrap();
    assert_eq!(again, run.addr);
    assert_eq!(
        c.get(run.url("/a"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
        "A"
    );
    run.ctx.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_finishes_the_request_in_flight_and_refuses_new_ones() {
    let (entered_tx, mut entered) = tokio::sync::mpsc::channel::<()>(1);
    let release = Arc::new(tokio::sync::Notify::new());
    let gate = release.clone();
    let slow = BoxProcessor::from_fn(move |mut ex: Exchange| {
        let entered_tx = entered_tx.clone();
        let gate = gate.clone();
        async move {
            let released = gate.notified();
            let _ = entered_tx.send(()).await;
            released.await;
            ex.message.body = Body::from("finished");
            Ok(ex)
        }
    });
    let route = RouteBuilder::from("platform-http:/slow")
        .process_with(slow)
        .build();
    let run = start(local(), vec![route], "/slow").await;
    let url = run.url("/slow");
    let first = tokio::spawn({
        let c = client();
        let url = url.clone();
        async move { c.get(url).send().await }
    });
    entered.recv().await.expect("the request reached the route");

    // The first poll of the stop announces it (synchronously) before any route stops.
    let ctx = run.ctx.clone();
    let mut stop = Box::pin(async move { ctx.stop().await });
    assert!(futures::poll!(stop.as_mut()).is_pending());
    let stopping = tokio::spawn(stop);

    let refused = client().get(&url).send().await.unwrap();
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "1");

    release.notify_one();
    let done = first
        .await
        .unwrap()
        .expect("the request in flight is answered");
    assert_eq!(done.status(), 200);
    assert_eq!(done.text().await.unwrap(), "finished");
    let report = stopping.await.unwrap();
    assert!(report.cut_off.is_empty(), "{report:?}");
    assert_eq!(report.routes_stopped, 1);
    let after = client().get(&url).send().await;
    assert!(
        after.as_ref().is_err_and(|e| e.is_connect()),
        "the listener is closed after the stop: {after:?}"
    );
    assert_eq!(run.server.local_addr(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_route_cut_off_at_its_stop_deadline_can_start_again_on_its_path() {
    let (entered_tx, mut entered) = tokio::sync::mpsc::channel::<()>(1);
    let release = Arc::new(tokio::sync::Notify::new());
    let gate = release.clone();
    let first = Arc::new(std::sync::atomic::AtomicBool::new(true));
    // The first request hangs until released; later ones pass.
    let stuck = BoxProcessor::from_fn(move |ex: Exchange| {
        let entered_tx = entered_tx.clone();
        let gate = gate.clone();
        let hang = first.swap(false, std::sync::atomic::Ordering::SeqCst);
        async move {
            if hang {
                let released = gate.notified();
                let _ = entered_tx.send(()).await;
                released.await;
            }
            Ok(ex)
        }
    });
    let route = RouteBuilder::from("platform-http:/stuck")
        .id("stuck")
        .process_with(stuck)
        .build();
    let run = start(local(), vec![route], "/stuck").await;
    run.ctx.set_shutdown_timeout(Duration::from_millis(200));
    let url = run.url("/stuck");
    let held = tokio::spawn({
        let c = client();
        let url = url.clone();
        async move { c.get(url).send().await }
    });
    entered.recv().await.unwrap();
    let routes = run.ctx.route_controller();
    let outcome = routes.stop_route("stuck").await.unwrap();
    assert_eq!(outcome.cut_off, 1, "{outcome:?}");
    // The consumer was aborted at the deadline; its path went with it, so it starts again.
    routes.start_route("stuck").await.unwrap();
    run.server.serving("/stuck").await.unwrap();
    let r = client().get(&url).send().await.unwrap();
    assert_eq!(r.status(), 204);
    release.notify_waiters();
    let _ = held.await.unwrap();
    run.ctx.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swapping_a_route_keeps_the_server_for_it_and_the_others() {
    let a = RouteBuilder::from("platform-http:/a")
        .id("a")
        .set_body(simple("A1"))
        .build();
    let b = RouteBuilder::from("platform-http:/b")
        .id("b")
        .set_body(simple("B"))
        .build();
    let run = start(local(), vec![a, b], "/a").await;
    run.server.serving("/b").await.unwrap();
    let c = client();
    let routes = run.ctx.route_controller();
    // Same source: the pipeline is replaced under the running consumer.
    let same = RouteBuilder::from("platform-http:/a")
        .set_body(simple("A2"))
        .build();
    routes.swap("a", same).await.unwrap();
    assert_eq!(
        c.get(run.url("/a"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
        "A2"
    );
    // A new source: the consumer restarts on the new path, on the same server.
    let moved = RouteBuilder::from("platform-http:/a2")
        .set_body(simple("A3"))
        .build();
    routes.swap("a", moved).await.unwrap();
    assert_eq!(run.server.serving("/a2").await, Some(run.addr));
    assert_eq!(
        c.get(run.url("/a2"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
        "A3"
    );
    assert_eq!(c.get(run.url("/a")).send().await.unwrap().status(), 404);
    assert_eq!(
        c.get(run.url("/b"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
        "B"
    );
    run.ctx.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_in_use_fails_the_route_start() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let config = camel_http::ServerConfig::new(taken.local_addr().unwrap());
    let ctx = camel_core::CamelContext::new();
    ctx.add_component(Arc::new(camel_http::PlatformHttpComponent::new(config)));
    let route = RouteBuilder::from("platform-http:/x")
        .set_body(simple("x"))
        .build();
    ctx.add_routes(vec![route]).await.unwrap();
    let err = ctx.start().await.expect_err("the port is taken");
    assert!(err.to_string().contains("cannot listen on"), "{err}");
    ctx.stop().await;
}
