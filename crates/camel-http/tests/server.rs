//! The `platform-http:` consumer on real sockets: mapping and status codes.

mod support;

use std::time::Duration;

use camel_api::{Body, CamelError, Exchange, Value};
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
