//! Requests built to turn a route against its backends: dot segments that walk a bridge
//! proxy out of its base path, control headers smuggled in the query, and a response too
//! large for the producer to hold.

mod support;

use std::time::Duration;

use camel_api::{Body, CamelError, Exchange};
use camel_core::builder::simple;
use camel_core::RouteBuilder;
use camel_http::{headers as h, HttpProducerError};
use support::{local, start};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One raw request (as written, no client normalizing its path); the whole answer.
async fn raw(addr: std::net::SocketAddr, request: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut buf))
        .await
        .expect("answered")
        .unwrap();
    String::from_utf8_lossy(&buf).into_owned()
}

fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridge_proxy_cannot_be_walked_out_of_its_base_path() {
    let admin = RouteBuilder::from("platform-http:/api/admin")
        .set_body(simple("secret"))
        .build();
    let backend = RouteBuilder::from("platform-http:/api/v1/p/{a}/{b}/{c}")
        .set_body(simple("backend ${header.a}"))
        .build();
    let run = start(local(), vec![admin, backend], "/api/admin").await;
    let proxy = RouteBuilder::from("platform-http:/p/{a}/{b}/{c}")
        .to(format!("http://{}/api/v1?bridgeEndpoint=true", run.addr))
        .build();
    run.ctx.add_routes(vec![proxy]).await.unwrap();
    run.server.serving("/p/{a}/{b}/{c}").await.unwrap();

    let answer = raw(run.addr, &get("/p/x/y/z")).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("backend x"), "{answer}");
    // `/api/v1` + `/p/../../admin` would be `/api/admin`.
    for path in [
        "/p/../../admin",
        "/p/%2e%2e/%2e%2e/admin",
        "/p/%2E%2e/.%2e/admin",
        "/p/..%5c..%5cadmin/x/y",
    ] {
        let answer = raw(run.addr, &get(path)).await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{path}: {answer}");
        assert!(!answer.contains("secret"), "{path}: {answer}");
    }

    // A route that sets `CamelHttpPath` itself is held to the same rule by the producer.
    for path in ["../admin", "x/%2e%2e/%2e%2e/admin", "..\\admin"] {
        let err = run
            .ctx
            .request(
                &format!("http://{}/api/v1?bridgeEndpoint=true", run.addr),
                Exchange::default().with_header(h::HTTP_PATH, path),
            )
            .await
            .expect_err("a path leaving the base is refused");
        let CamelError::External { source, .. } = &err else {
            panic!("{err:?}");
        };
        assert!(
            matches!(
                source.downcast_ref::<HttpProducerError>(),
                Some(HttpProducerError::PathLeavesBase { .. })
            ),
            "{err:?}"
        );
    }
    run.ctx.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_headers_in_the_query_or_the_headers_never_reach_the_exchange() {
    let route = RouteBuilder::from("platform-http:/names")
        .process(|mut ex: Exchange| {
            let mut names: Vec<String> = ex
                .message
                .headers
                .iter()
                .map(|(n, _)| n.to_string())
                .collect();
            names.sort();
            ex.message.body = Body::from(names.join(","));
            Ok(ex)
        })
        .build();
    let run = start(local(), vec![route], "/names").await;
    let answer = raw(
        run.addr,
        "GET /names?CamelSqlQuery=DELETE%20FROM%20orders&kafka.OVERRIDE_TOPIC=elsewhere&camelhttpresponsecode=201&ok=1 HTTP/1.1\r\n\
         Host: x\r\nConnection: close\r\nCamelSqlQuery: DROP TABLE orders\r\n\
         kafka.OVERRIDE_TOPIC: elsewhere\r\nX-Fine: yes\r\n\r\n",
    )
    .await;
    // `CamelHttpResponseCode` from the query would have set the status.
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let (_, body) = answer.split_once("\r\n\r\n").unwrap();
    let names: Vec<&str> = body.split(',').collect();
    assert!(names.contains(&"ok") && names.contains(&"X-Fine"), "{body}");
    for smuggled in [
        "CamelSqlQuery",
        "kafka.OVERRIDE_TOPIC",
        "camelhttpresponsecode",
    ] {
        assert!(
            !names.iter().any(|n| n.eq_ignore_ascii_case(smuggled)),
            "{smuggled} became a header: {body}"
        );
    }
    run.ctx.stop().await;
}

/// A server answering every connection with `total` bytes, chunked (no length known in
/// advance) or with its `Content-Length`.
async fn big_server(total: usize, chunked: bool) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut req = [0u8; 1024];
                let _ = s.read(&mut req).await;
                let head = if chunked {
                    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_string()
                } else {
                    format!("HTTP/1.1 200 OK\r\nContent-Length: {total}\r\n\r\n")
                };
                if s.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = vec![b'x'; 64 * 1024];
                let mut sent = 0;
                while sent < total {
                    let framed = if chunked {
                        let mut f = format!("{:x}\r\n", chunk.len()).into_bytes();
                        f.extend_from_slice(&chunk);
                        f.extend_from_slice(b"\r\n");
                        f
                    } else {
                        chunk.clone()
                    };
                    if s.write_all(&framed).await.is_err() {
                        return;
                    }
                    sent += chunk.len();
                }
                let _ = s.write_all(b"0\r\n\r\n").await;
            });
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_over_max_response_size_is_a_typed_error() {
    let ctx = camel_core::CamelContext::new();
    ctx.add_component(std::sync::Arc::new(camel_http::HttpComponent::http()));
    ctx.start().await.unwrap();
    // 1 GiB streamed against a 1 MiB limit: refused once the limit is passed.
    let streaming = big_server(1 << 30, true).await;
    let declared = big_server(4 << 20, false).await;
    for addr in [streaming, declared] {
        let uri = format!("http://{addr}/big?maxResponseSize=1048576");
        let call = ctx.request(&uri, Exchange::default());
        let err = tokio::time::timeout(Duration::from_secs(20), call)
            .await
            .expect("refused without reading the whole response")
            .expect_err("over the limit");
        let CamelError::External { source, .. } = &err else {
            panic!("{err:?}");
        };
        assert!(
            matches!(
                source.downcast_ref::<HttpProducerError>(),
                Some(HttpProducerError::ResponseTooLarge { limit: 1048576 })
            ),
            "{err:?}"
        );
    }
    // Under the limit, the body is the response.
    let small = big_server(128 * 1024, true).await;
    let reply = ctx
        .request(&format!("http://{small}/x"), Exchange::default())
        .await
        .unwrap();
    assert_eq!(reply.message.body.to_bytes().len(), 2 * 64 * 1024);
    ctx.stop().await;
}
