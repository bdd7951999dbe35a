//! The `platform-http:` consumer through route and context lifecycles: suspend, stop,
//! swap, a stop deadline, a taken port, a client that hangs up.

mod support;

use std::sync::Arc;
use std::time::Duration;

use camel_api::{Body, BoxProcessor, Exchange};
use camel_core::builder::simple;
use camel_core::RouteBuilder;
use support::{client, local, start};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_hangs_up_does_not_cut_its_exchange_short() {
    let (entered_tx, mut entered) = tokio::sync::mpsc::channel::<()>(1);
    let release = Arc::new(tokio::sync::Notify::new());
    let gate = release.clone();
    let slow = BoxProcessor::from_fn(move |ex: Exchange| {
        let entered_tx = entered_tx.clone();
        let gate = gate.clone();
        async move {
            let released = gate.notified();
            let _ = entered_tx.send(()).await;
            released.await;
            Ok(ex)
        }
    });
    let route = RouteBuilder::from("platform-http:/work")
        .process_with(slow)
        .build();
    let run = start(local(), vec![route], "/work").await;
    let mut s = TcpStream::connect(run.addr).await.unwrap();
    s.write_all(b"GET /work HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    entered.recv().await.unwrap();
    drop(s);
    release.notify_waiters();
    tokio::time::timeout(Duration::from_secs(10), run.ctx.stats().wait_for(1))
        .await
        .expect("the exchange ran to its end");
    assert_eq!(run.ctx.stats().failed(), 0);
    run.ctx.stop().await;
}
