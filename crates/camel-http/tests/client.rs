//! The `http:` producer against the `platform-http:` consumer, through one context.

mod support;

use std::sync::Arc;
use std::time::Duration;

use camel_api::{Body, BoxProcessor, CamelError, Exchange, Value};
use camel_core::builder::simple;
use camel_core::RouteBuilder;
use camel_http::headers as h;
use support::{local, start};

/// A route that answers with the status in `?status=` and echoes `Authorization`.
fn backend() -> camel_core::RouteDefinition {
    RouteBuilder::from("platform-http:/status")
        .process(|mut ex: Exchange| {
            let status = ex.header("status").and_then(Value::as_i64).unwrap_or(200);
            let auth = ex
                .header("Authorization")
                .map(Value::to_string)
                .unwrap_or_default();
            ex.message.headers.insert(h::HTTP_RESPONSE_CODE, status);
            ex.message.body = Body::from(format!("status {status} auth [{auth}]"));
            Ok(ex)
        })
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_status_is_http_operation_failed_unless_told_otherwise() {
    let run = start(local(), vec![backend()], "/status").await;
    let err = run
        .ctx
        .request(&run.url("/status?status=404"), Exchange::default())
        .await
        .expect_err("404 is a failure by default");
    match &err {
        CamelError::HttpOperationFailed {
            status,
            body,
            status_text,
            ..
        } => {
            assert_eq!(*status, 404);
            assert_eq!(&**status_text, "Not Found");
            assert_eq!(&**body, "status 404 auth []");
        }
        other => panic!("expected HttpOperationFailed, got {other:?}"),
    }
    assert!(err.to_string().contains("status 404"), "{err}");

    let reply = run
        .ctx
        .request(
            &run.url("/status?status=503&throwExceptionOnFailure=false"),
            Exchange::default(),
        )
        .await
        .expect("not thrown");
    assert_eq!(reply.header(h::HTTP_RESPONSE_CODE), Some(&Value::Int(503)));
    assert_eq!(
        reply.header(h::HTTP_RESPONSE_TEXT),
        Some(&Value::from("Service Unavailable"))
    );
    assert_eq!(
        reply.message.body.as_text().as_deref(),
        Some("status 503 auth []")
    );

    let reply = run
        .ctx
        .request(
            &run.url("/status?status=404&okStatusCodeRange=200-299,404"),
            Exchange::default(),
        )
        .await
        .expect("404 is in the range");
    assert_eq!(reply.header(h::HTTP_RESPONSE_CODE), Some(&Value::Int(404)));
    run.ctx.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_and_bearer_credentials_reach_the_server_but_no_error_text() {
    let run = start(local(), vec![backend()], "/status").await;
    let basic = run
        .ctx
        .request(
            &run.url("/status?authUsername=app&authPassword=S3CRET"),
            Exchange::default(),
        )
        .await
        .unwrap();
    // base64("app:S3CRET")
    assert_eq!(
        basic.message.body.as_text().as_deref(),
        Some("status 200 auth [Basic YXBwOlMzQ1JFVA==]")
    );
    let in_url = run
        .ctx
        .request(
            &format!("http://app:S3CRET@{}/status", run.addr),
            Exchange::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        in_url.message.body.as_text().as_deref(),
        Some("status 200 auth [Basic YXBwOlMzQ1JFVA==]")
    );
    let bearer = run
        .ctx
        .request(
            &run.url("/status?authMethod=Bearer&authBearerToken=T0KEN"),
            Exchange::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        bearer.message.body.as_text().as_deref(),
        Some("status 200 auth [Bearer T0KEN]")
    );
    let failed = run
        .ctx
        .request(
            &run.url("/status?status=500&authUsername=app&authPassword=S3CRET"),
            Exchange::default(),
        )
        .await
        .unwrap_err();
    let shown = format!("{failed} {failed:?}");
    assert!(!shown.contains("S3CRET"), "{shown}");
    // A closed port: the transport error names the URL without its credentials either.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let down = format!("http://app:S3CRET@127.0.0.1:{port}/x?authBearerToken=T0KEN");
    let err = run
        .ctx
        .request(&down, Exchange::default())
        .await
        .unwrap_err();
    let shown = format!("{err} {err:?}");
    assert!(
        !shown.contains("S3CRET") && !shown.contains("T0KEN"),
        "{shown}"
    );
    run.ctx.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridge_endpoint_proxies_the_path_and_query() {
    let backend = RouteBuilder::from("platform-http:/backend/items/{item}")
        .set_body(simple("item ${header.item} q=${header.q}"))
        .build();
    let run = start(local(), vec![backend], "/backend/items/{item}").await;
    let proxy = RouteBuilder::from("platform-http:/items/{item}")
        .to(format!("http://{}/backend?bridgeEndpoint=true", run.addr))
        .build();
    run.ctx.add_routes(vec![proxy]).await.unwrap();
    run.server.serving("/items/{item}").await.unwrap();
    let r = support::client()
        .get(run.url("/items/7?q=x"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "item 7 q=x");
    run.ctx.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_server_is_a_timeout_after_response_or_socket_timeout() {
    let release = Arc::new(tokio::sync::Notify::new());
    let gate = release.clone();
    let slow = RouteBuilder::from("platform-http:/slow")
        .process_with(BoxProcessor::from_fn(move |ex: Exchange| {
            let gate = gate.clone();
            async move {
                gate.notified().await;
                Ok(ex)
            }
        }))
        .build();
    let run = start(local(), vec![slow], "/slow").await;
    let err = run
        .ctx
        .request(
            &run.url("/slow?responseTimeout=200ms&httpMethod=GET"),
            Exchange::default(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CamelError::Timeout(_)), "{err:?}");
    // No byte of the response within `socket_timeout` either.
    let err = run
        .ctx
        .request(&run.url("/slow?socketTimeout=200ms"), Exchange::default())
        .await
        .unwrap_err();
    assert!(matches!(err, CamelError::Timeout(_)), "{err:?}");
    release.notify_waiters();
    let stopped = tokio::time::timeout(Duration::from_secs(10), run.ctx.stop())
        .await
        .expect("the stop ends");
    assert!(stopped.cut_off.is_empty(), "{stopped:?}");
}
