//! The route table never blocks: a long drain of one route delays no operation on
//! another, nor a read; operations on one route still run one after another.
//!
//! Time is paused: the clock jumps ahead only when every task waits. An operation that
//! waited for the other route's drain would let the clock reach its 100 ms timeout long
//! before the drain's 10 s end, so the timeouts below fail exactly when something blocks.

use std::sync::Arc;
use std::time::Duration;

use camel_api::{Body, BoxProcessor, Exchange};
use camel_core::builder::RouteBuilder;
use camel_core::context::RouteOperation;
use camel_core::{CamelContext, RouteErrorKind, RouteStatus};
use tokio::sync::Notify;
use tokio::time::{timeout, Instant};

/// How long route `a`'s one exchange stays in flight.
const DRAIN: Duration = Duration::from_secs(10);
/// What every other operation and read must answer within.
const PROMPT: Duration = Duration::from_millis(100);

/// A step that signals `entered`, then takes `DRAIN` to finish.
fn slow(entered: Arc<Notify>) -> BoxProcessor {
    BoxProcessor::from_fn(move |ex: Exchange| {
        let entered = entered.clone();
        async move {
            entered.notify_one();
            tokio::time::sleep(DRAIN).await;
            Ok(ex)
        }
    })
}

/// A step that sets the body to `text`.
fn reply(text: &'static str) -> BoxProcessor {
    BoxProcessor::from_fn(move |mut ex: Exchange| async move {
        ex.message.body = Body::from(text);
        Ok(ex)
    })
}

fn body(ex: &Exchange) -> String {
    ex.message.body.as_text().unwrap_or_default().into_owned()
}

/// A started context with route `a` (slow) and route `b`, and `a`'s one exchange in
/// flight; returns the context, the exchange's task and the stop of `a`, draining.
async fn draining_a() -> (
    CamelContext,
    tokio::task::JoinHandle<Result<Exchange, camel_api::CamelError>>,
    tokio::task::JoinHandle<camel_core::StopOutcome>,
) {
    let entered = Arc::new(Notify::new());
    let a = RouteBuilder::from("direct:a")
        .id("a")
        .process_with(slow(entered.clone()))
        .build();
    let b = RouteBuilder::from("direct:b")
        .id("b")
        .process_with(reply("b1"))
        .build();
    let ctx = CamelContext::new();
    ctx.add_routes(vec![a, b]).await.unwrap();
    ctx.start().await.unwrap();
    let in_flight = {
        let ctx = ctx.clone();
        tokio::spawn(async move { ctx.request("direct:a", Exchange::default()).await })
    };
    entered.notified().await;
    let stop_a = {
        let routes = ctx.route_controller();
        tokio::spawn(async move { routes.stop_route("a").await.unwrap() })
    };
    // The stop has the route's lock once the listing shows it under way.
    let routes = ctx.route_controller();
    while routes.operation("a").await.unwrap() != Some(RouteOperation::Stopping) {
        tokio::task::yield_now().await;
    }
    (ctx, in_flight, stop_a)
}

/// Runs `op` and fails the test unless it ends within `PROMPT`.
async fn promptly<T>(what: &str, op: impl std::future::Future<Output = T>) -> T {
    match timeout(PROMPT, op).await {
        Ok(v) => v,
        Err(_) => panic!("{what} waited for another route's drain"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_long_drain_of_one_route_delays_no_operation_on_another_nor_a_read() {
    let began = Instant::now();
    let (ctx, in_flight, stop_a) = draining_a().await;
    let routes = ctx.route_controller();

    // Reads: the listing, each status, the operation under way, the definitions.
    let listed = promptly("the listing", routes.route_ids()).await;
    assert_eq!(listed, ["a", "b"]);
    let a_status = promptly("a's status", routes.status("a")).await.unwrap();
    assert_eq!(
        a_status,
        RouteStatus::Started,
        "the status before the stop ends"
    );
    promptly("a's definition", routes.definition("a"))
        .await
        .unwrap();
    promptly("a's health", routes.failure("a")).await.unwrap();

    // B: swapped (same source: one atomic store), swapped again onto a new source (its
    // consumer restarts), stopped, started, suspended, resumed; a route added and removed.
    let v2 = RouteBuilder::from("direct:b")
        .process_with(reply("b2"))
        .build();
    promptly("b's swap", routes.swap("b", v2)).await.unwrap();
    let out = promptly(
        "a request to b",
        ctx.request("direct:b", Exchange::default()),
    )
    .await
    .unwrap();
    assert_eq!(body(&out), "b2");
    let v3 = RouteBuilder::from("direct:b3")
        .process_with(reply("b3"))
        .build();
    promptly("b's swap to a new source", routes.swap("b", v3))
        .await
        .unwrap();
    promptly("b's stop", routes.stop_route("b")).await.unwrap();
    assert_eq!(routes.status("b").await.unwrap(), RouteStatus::Stopped);
    promptly("b's start", routes.start_route("b"))
        .await
        .unwrap();
    assert_eq!(routes.status("b").await.unwrap(), RouteStatus::Started);
    promptly("b's suspend", routes.suspend_route("b"))
        .await
        .unwrap();
    promptly("b's resume", routes.resume_route("b"))
        .await
        .unwrap();
    let out = promptly(
        "a request to b",
        ctx.request("direct:b3", Exchange::default()),
    )
    .await
    .unwrap();
    assert_eq!(body(&out), "b3");
    let c = RouteBuilder::from("direct:c")
        .id("c")
        .process_with(reply("c"))
        .build();
    promptly("an add", ctx.add_routes(vec![c])).await.unwrap();
    assert_eq!(routes.status("c").await.unwrap(), RouteStatus::Started);
    promptly("a removal", routes.remove_route("c"))
        .await
        .unwrap();
    let listed = promptly("the listing", routes.route_ids()).await;
    assert_eq!(listed, ["a", "b"]);

    // All of that happened inside a's drain, which still runs.
    assert!(!stop_a.is_finished(), "a's stop ended early");
    assert_eq!(
        routes.operation("a").await.unwrap(),
        Some(RouteOperation::Stopping)
    );
    assert!(began.elapsed() < DRAIN, "{:?}", began.elapsed());

    let outcome = stop_a.await.unwrap();
    assert_eq!(
        outcome.cut_off, 0,
        "the slow exchange finished within the deadline"
    );
    assert!(began.elapsed() >= DRAIN, "{:?}", began.elapsed());
    in_flight.await.unwrap().unwrap();
    assert_eq!(routes.status("a").await.unwrap(), RouteStatus::Stopped);
    assert_eq!(routes.operation("a").await.unwrap(), None);
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn operations_on_one_route_run_one_after_the_other() {
    let (ctx, in_flight, stop_a) = draining_a().await;
    let routes = ctx.route_controller();
    let mut start_a = {
        let routes = routes.clone();
        tokio::spawn(async move {
            routes.start_route("a").await.unwrap();
            Instant::now()
        })
    };
    // The start waits for the stop: a second in, it has not run.
    assert!(timeout(Duration::from_secs(1), &mut start_a).await.is_err());
    assert_eq!(routes.status("a").await.unwrap(), RouteStatus::Started);

    let stopped_at = {
        let outcome = stop_a.await.unwrap();
        assert_eq!(outcome.cut_off, 0);
        Instant::now()
    };
    let started_at = start_a.await.unwrap();
    assert!(started_at >= stopped_at);
    assert_eq!(routes.status("a").await.unwrap(), RouteStatus::Started);
    in_flight.await.unwrap().unwrap();
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_operation_queued_behind_a_removal_finds_the_route_gone() {
    let (ctx, in_flight, stop_a) = draining_a().await;
    let routes = ctx.route_controller();
    let remove = {
        let routes = routes.clone();
        tokio::spawn(async move { routes.remove_route("a").await })
    };
    // One turn for the removal to queue for the route's lock (the lock is fair: first
    // come, first served), behind the stop.
    tokio::task::yield_now().await;
    let suspend = {
        let routes = routes.clone();
        tokio::spawn(async move { routes.suspend_route("a").await })
    };
    stop_a.await.unwrap();
    remove.await.unwrap().unwrap();
    let err = suspend.await.unwrap().unwrap_err();
    assert!(matches!(err.kind, RouteErrorKind::NoSuchRoute(_)), "{err}");
    assert_eq!(routes.route_ids().await, ["b"]);
    in_flight.await.unwrap().unwrap();
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn no_route_starts_while_the_context_stops() {
    let (ctx, in_flight, stop_a) = draining_a().await;
    let routes = ctx.route_controller();
    routes.stop_route("b").await.unwrap();
    let stopping = {
        let ctx = ctx.clone();
        tokio::spawn(async move { ctx.stop().await })
    };
    // The context stop waits for a's own stop; meanwhile b may not start, or it would
    // run on after the context stopped.
    tokio::task::yield_now().await;
    let err = promptly("b's start", routes.start_route("b"))
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind, RouteErrorKind::ContextStopping(_)),
        "{err}"
    );
    assert_eq!(routes.status("b").await.unwrap(), RouteStatus::Stopped);

    stop_a.await.unwrap();
    let report = stopping.await.unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    in_flight.await.unwrap().unwrap();
    // Once the stop is over a route may start again, as before.
    routes.start_route("b").await.unwrap();
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_context_stop_waits_for_a_busy_route_only_until_its_deadline() {
    let (ctx, in_flight, stop_a) = draining_a().await;
    let began = Instant::now();
    let report = ctx.stop_by(Instant::now() + Duration::from_secs(2)).await;
    assert!(
        began.elapsed() >= Duration::from_secs(2),
        "{:?}",
        began.elapsed()
    );
    assert!(began.elapsed() < DRAIN, "the stop waited for the drain");
    assert_eq!(report.cut_off, [("a".to_string(), 1)]);
    assert!(
        report.errors.iter().any(|e| e.contains("route `a`")),
        "{:?}",
        report.errors
    );
    assert_eq!(report.routes_stopped, 1, "b stopped");
    stop_a.await.unwrap();
    in_flight.await.unwrap().unwrap();
}

/// Routes are compiled outside the table's lock; the ids are checked again when they are
/// added, so of many adds of one id on many threads exactly one wins.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_concurrent_adds_of_one_id_exactly_one_wins() {
    let ctx = CamelContext::new();
    // All adds leave the barrier together, so their compiles overlap.
    let together = Arc::new(tokio::sync::Barrier::new(16));
    let adds: Vec<_> = (0..16)
        .map(|_| {
            let ctx = ctx.clone();
            let together = together.clone();
            tokio::spawn(async move {
                together.wait().await;
                let route = RouteBuilder::from("direct:dup")
                    .id("dup")
                    .process_with(reply("dup"))
                    .build();
                ctx.add_routes(vec![route]).await
            })
        })
        .collect();
    let mut won = 0;
    for add in adds {
        match add.await.unwrap() {
            Ok(ids) => {
                assert_eq!(ids, ["dup"]);
                won += 1;
            }
            Err(errors) => assert!(
                matches!(errors.0[..], [ref e] if matches!(e.kind, RouteErrorKind::DuplicateRouteId { .. })),
                "{errors:?}"
            ),
        }
    }
    assert_eq!(won, 1);
    assert_eq!(ctx.route_controller().route_ids().await, ["dup"]);
}
