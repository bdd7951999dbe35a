//! The server's bounds on request bodies, on real sockets: the body read timeout (408)
//! and the budget of body bytes buffered across connections (503).

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use camel_api::{BoxProcessor, Exchange};
use camel_core::builder::simple;
use camel_core::RouteBuilder;
use support::{local, start};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

/// Reads what the server sends until it closes or `guard` passes.
async fn read_answer(s: &mut (impl AsyncReadExt + Unpin), guard: Duration) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + guard;
    loop {
        match tokio::time::timeout_at(deadline, s.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => buf.extend_from_slice(&chunk[..n]),
            Err(_) if buf.is_empty() => return None,
            Err(_) => break,
        }
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trickled_body_is_answered_408_within_the_timeout_and_frees_its_connection() {
    const LIMIT: usize = 4;
    let timeout = Duration::from_millis(600);
    let config = local()
        .with_max_connections(LIMIT)
        .with_body_read_timeout(timeout);
    let route = RouteBuilder::from("platform-http:/upload")
        .set_body(simple("got it"))
        .build();
    let run = start(config, vec![route], "/upload").await;

    // Every connection the server has, each sending its body a byte every 100 ms: well
    // inside any per-read timeout, never finished.
    let started = Instant::now();
    let mut tricklers = Vec::new();
    for _ in 0..LIMIT {
        let s = TcpStream::connect(run.addr).await.unwrap();
        let (mut rd, mut wr) = s.into_split();
        wr.write_all(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
            .await
            .unwrap();
        let writer = tokio::spawn(async move {
            for _ in 0..100 {
                if wr.write_all(b"x").await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        tricklers.push(tokio::spawn(async move {
            let answer = read_answer(&mut rd, Duration::from_secs(8)).await;
            writer.abort();
            (answer, started.elapsed())
        }));
    }
    for t in tricklers {
        let (answer, took) = t.await.unwrap();
        let answer = answer.expect("a trickling client is answered, not held");
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(
            took < timeout + Duration::from_secs(2),
            "answered after {took:?}"
        );
    }
    // Their connections are free again: another client is served at once.
    let r = support::client()
        .post(run.url("/upload"))
        .body("all of it")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "got it");
    run.ctx.stop().await;
}

const BODY: usize = 300 * 1024;
const BUDGET: usize = 1024 * 1024;

fn head(len: usize) -> String {
    format!("POST /hold HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {len}\r\n\r\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_beyond_the_servers_budget_are_answered_503_and_never_buffered() {
    let config = local().with_max_buffered_body_bytes(BUDGET);
    // The route holds every exchange until released, so the bodies it took stay buffered.
    let gate = Arc::new(Semaphore::new(0));
    let entered = Arc::new(AtomicUsize::new(0));
    let (g, e) = (gate.clone(), entered.clone());
    let route = RouteBuilder::from("platform-http:/hold")
        .process_with(BoxProcessor::from_fn(move |ex: Exchange| {
            let (g, e) = (g.clone(), e.clone());
            async move {
                e.fetch_add(1, Ordering::SeqCst);
                g.acquire().await.unwrap().forget();
                Ok(ex)
            }
        }))
        .set_body(simple("held"))
        .build();
    let run = start(config, vec![route], "/hold").await;

    // Six 300 KiB bodies at once against a 1 MiB budget: three fit. The three that do not
    // are refused on their headers, before a byte of their bodies is read.
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..6 {
        let mut s = TcpStream::connect(run.addr).await.unwrap();
        s.write_all(head(BODY).as_bytes()).await.unwrap();
        match read_answer(&mut s, Duration::from_millis(300)).await {
            None => held.push(s),
            Some(answer) => {
                assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
                assert!(answer.contains("retry-after: 1"), "{answer}");
                refused += 1;
            }
        }
    }
    assert_eq!((held.len(), refused), (3, 3));
    for s in &mut held {
        s.write_all(&vec![b'x'; BODY]).await.unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while entered.load(Ordering::SeqCst) < 3 {
        assert!(Instant::now() < deadline, "the held bodies reach the route");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(run.server.buffered_body_bytes(), 3 * BODY);

    // A chunked body is counted as it arrives: it passes the 124 KiB left, and is refused.
    let mut s = TcpStream::connect(run.addr).await.unwrap();
    s.write_all(b"POST /hold HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        .await
        .unwrap();
    let chunk = vec![b'y'; 64 * 1024];
    for _ in 0..3 {
        let _ = s
            .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
            .await;
        let _ = s.write_all(&chunk).await;
        let _ = s.write_all(b"\r\n").await;
    }
    let answer = read_answer(&mut s, Duration::from_secs(5)).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert_eq!(entered.load(Ordering::SeqCst), 3);

    // The server's own accounting never went past the budget.
    assert!(run.server.peak_buffered_body_bytes() <= BUDGET);
    gate.add_permits(3);
    for mut s in held {
        let answer = read_answer(&mut s, Duration::from_secs(5)).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
    assert_eq!(run.server.buffered_body_bytes(), 0);
    // With the budget free again, a body is taken.
    let r = support::client()
        .post(run.url("/hold"))
        .body(vec![b'z'; BODY])
        .send();
    gate.add_permits(1);
    assert_eq!(r.await.unwrap().status(), 200);
    run.ctx.stop().await;
}
