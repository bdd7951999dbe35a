//! Slow clients (slowloris) against the server's two bounds: the connection limit and the
//! header read timeout.

mod support;

use std::time::Duration;

use camel_core::builder::simple;
use camel_core::RouteBuilder;
use support::{local, start};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const LIMIT: usize = 4;

/// Reads until the server closes or answers; `Some(text)` when it did within the guard.
async fn outcome(s: &mut TcpStream, guard: Duration) -> Option<String> {
    let mut buf = Vec::new();
    match tokio::time::timeout(guard, s.read_to_end(&mut buf)).await {
        Ok(_) => Some(String::from_utf8_lossy(&buf).into_owned()),
        Err(_) => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_hold_at_most_the_connection_limit_and_only_for_the_header_timeout() {
    let config = local()
        .with_max_connections(LIMIT)
        .with_header_read_timeout(Duration::from_millis(300));
    let route = RouteBuilder::from("platform-http:/hello")
        .set_body(simple("hi"))
        .build();
    let run = start(config, vec![route], "/hello").await;

    // Slow clients: each sends the start of a request and never finishes the headers.
    let mut held = Vec::new();
    for _ in 0..LIMIT {
        let mut s = TcpStream::connect(run.addr).await.unwrap();
        s.write_all(b"GET /hello HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        held.push(s);
    }
    // Past the limit, a connection is answered 503 and closed at once.
    for _ in 0..LIMIT {
        let mut s = TcpStream::connect(run.addr).await.unwrap();
        let _ = s.write_all(b"GET /hello HTTP/1.1\r\nHost: x\r\n").await;
        let answer = outcome(&mut s, Duration::from_secs(5))
            .await
            .expect("a connection over the limit is closed at once");
        assert!(
            answer.is_empty() || answer.starts_with("HTTP/1.1 503"),
            "{answer}"
        );
    }
    // The slow ones are cut off by the header read timeout (well before the guard).
    for s in &mut held {
        let answer = outcome(s, Duration::from_secs(10))
            .await
            .expect("a slow client is disconnected after the header read timeout");
        assert!(!answer.contains("200 OK"), "{answer}");
    }
    // Their places are free again.
    let r = support::client()
        .get(run.url("/hello"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "hi");
    run.ctx.stop().await;
}
