//! The route controller: swap, suspend/resume, stop/start, remove, graceful shutdown.

use std::sync::Arc;
use std::time::Duration;

use camel_api::{Body, BoxProcessor, Exchange};
use camel_core::builder::{constant, RouteBuilder};
use camel_core::{CamelContext, RouteStatus};
use tokio::sync::Notify;

/// A processor that waits for `gate` before passing the exchange on, and signals `entered`.
fn held(gate: Arc<Notify>, entered: Arc<Notify>) -> BoxProcessor {
    BoxProcessor::from_fn(move |ex: Exchange| {
        let gate = gate.clone();
        let entered = entered.clone();
        async move {
            let wait = gate.notified();
            entered.notify_one();
            wait.await;
            Ok(ex)
        }
    })
}

fn body(ex: &Exchange) -> String {
    ex.message.body.as_text().unwrap_or_default().into_owned()
}

async fn started(routes: Vec<camel_core::RouteDefinition>) -> CamelContext {
    let ctx = CamelContext::new();
    ctx.add_routes(routes).await.unwrap();
    ctx.start().await.unwrap();
    ctx
}

#[tokio::test]
async fn swap_is_atomic_and_in_flight_exchanges_finish_on_the_old_pipeline() {
    let gate = Arc::new(Notify::new());
    let entered = Arc::new(Notify::new());
    let v1 = RouteBuilder::from("direct:in")
        .id("r")
        .process_with(held(gate.clone(), entered.clone()))
        .set_body(constant("v1"))
        .build();
    let ctx = started(vec![v1]).await;

    let in_flight = {
        let ctx = ctx.clone();
        tokio::spawn(async move { ctx.request("direct:in", Exchange::default()).await })
    };
    entered.notified().await;

    let v2 = RouteBuilder::from("direct:in")
        .set_body(constant("v2"))
        .build();
    ctx.route_controller().swap("r", v2).await.unwrap();
    let fresh = ctx.request("direct:in", Exchange::default()).await.unwrap();
    assert_eq!(body(&fresh), "v2");

    gate.notify_one();
    let old = in_flight.await.unwrap().unwrap();
    assert_eq!(
        body(&old),
        "v1",
        "the in-flight exchange finishes on the pipeline it started on"
    );
    ctx.stop().await;
}

#[tokio::test]
async fn a_swap_that_does_not_compile_leaves_the_old_route_running() {
    let v1 = RouteBuilder::from("direct:in")
        .id("r")
        .set_body(constant("v1"))
        .build();
    let ctx = started(vec![v1]).await;
    let broken = RouteBuilder::from("direct:in").to("nowhere:x").build();
    let err = ctx.route_controller().swap("r", broken).await.unwrap_err();
    assert!(err.to_string().contains("nowhere"), "{err}");
    let out = ctx.request("direct:in", Exchange::default()).await.unwrap();
    assert_eq!(body(&out), "v1");
    ctx.stop().await;
}

#[tokio::test]
async fn swapping_the_source_restarts_the_consumer() {
    let v1 = RouteBuilder::from("direct:a")
        .id("r")
        .set_body(constant("v1"))
        .build();
    let ctx = started(vec![v1]).await;
    let v2 = RouteBuilder::from("direct:b")
        .set_body(constant("v2"))
        .build();
    ctx.route_controller().swap("r", v2).await.unwrap();
    let out = ctx.request("direct:b", Exchange::default()).await.unwrap();
    assert_eq!(body(&out), "v2");
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn suspend_holds_intake_and_resume_releases_it() {
    let route = RouteBuilder::from("direct:in")
        .id("r")
        .set_body(constant("done"))
        .build();
    let ctx = started(vec![route]).await;
    let controller = ctx.route_controller();
    controller.suspend_route("r").await.unwrap();
    assert_eq!(
        controller.status("r").await.unwrap(),
        RouteStatus::Suspended
    );

    let mut waiting = {
        let ctx = ctx.clone();
        tokio::spawn(async move { ctx.request("direct:in", Exchange::default()).await })
    };
    // Paused time: the clock jumps ahead only once every task is blocked, so this
    // timeout elapses exactly when the request is stuck at the suspended route.
    let still_waiting = tokio::time::timeout(Duration::from_secs(5), &mut waiting).await;
    assert!(
        still_waiting.is_err(),
        "a suspended route must not take the exchange"
    );

    controller.resume_route("r").await.unwrap();
    let out = waiting.await.unwrap().unwrap();
    assert_eq!(body(&out), "done");
    ctx.stop().await;
}

#[tokio::test]
async fn graceful_stop_waits_for_in_flight_exchanges() {
    let gate = Arc::new(Notify::new());
    let entered = Arc::new(Notify::new());
    let route = RouteBuilder::from("direct:in")
        .id("r")
        .process_with(held(gate.clone(), entered.clone()))
        .set_body(constant("finished"))
        .build();
    let ctx = started(vec![route]).await;
    let in_flight = {
        let ctx = ctx.clone();
        tokio::spawn(async move { ctx.request("direct:in", Exchange::default()).await })
    };
    entered.notified().await;
    let stopping = {
        let ctx = ctx.clone();
        tokio::spawn(async move { ctx.stop().await })
    };
    tokio::task::yield_now().await;
    gate.notify_one();
    let report = stopping.await.unwrap();
    assert!(report.cut_off.is_empty(), "{report:?}");
    assert_eq!(body(&in_flight.await.unwrap().unwrap()), "finished");
}

#[tokio::test(start_paused = true)]
async fn shutdown_deadline_reports_cut_off_exchanges() {
    let gate = Arc::new(Notify::new());
    let entered = Arc::new(Notify::new());
    let route = RouteBuilder::from("direct:in")
        .id("stuck")
        .process_with(held(gate, entered.clone()))
        .build();
    let ctx = started(vec![route]).await;
    ctx.set_shutdown_timeout(Duration::from_millis(200));
    let _in_flight = {
        let ctx = ctx.clone();
        tokio::spawn(async move { ctx.request("direct:in", Exchange::default()).await })
    };
    entered.notified().await;
    let report = ctx.stop().await;
    assert_eq!(report.cut_off, vec![("stuck".to_string(), 1)]);
    assert!(report.elapsed >= Duration::from_millis(200));
}

#[tokio::test]
async fn stop_start_and_remove_a_route() {
    let route = RouteBuilder::from("direct:in?block=false")
        .id("r")
        .set_body(constant("up"))
        .build();
    let ctx = started(vec![route]).await;
    let controller = ctx.route_controller();
    controller.stop_route("r").await.unwrap();
    assert_eq!(controller.status("r").await.unwrap(), RouteStatus::Stopped);
    assert!(ctx
        .request("direct:in?block=false", Exchange::default())
        .await
        .is_err());

    controller.start_route("r").await.unwrap();
    let out = ctx.request("direct:in", Exchange::default()).await.unwrap();
    assert_eq!(body(&out), "up");

    controller.remove_route("r").await.unwrap();
    assert!(controller.route_ids().await.is_empty());
    assert!(ctx
        .request("direct:in?block=false", Exchange::default())
        .await
        .is_err());
    ctx.stop().await;
}

#[tokio::test]
async fn routes_added_to_a_started_context_start_at_once() {
    let ctx = started(vec![]).await;
    ctx.add_routes(vec![RouteBuilder::from("direct:late")
        .set_body(constant("late"))
        .build()])
        .await
        .unwrap();
    let out = ctx
        .request("direct:late", Exchange::new(Body::Empty))
        .await
        .unwrap();
    assert_eq!(body(&out), "late");
    ctx.stop().await;
}

fn yaml(text: &str) -> Vec<camel_core::RouteDefinition> {
    camel_core::yaml::load_str(text, "reload.yaml").unwrap()
}

#[tokio::test]
async fn reload_diffs_by_id_and_a_bad_set_changes_nothing() {
    let ctx = started(yaml(concat!(
        "- route: {id: keep, from: {uri: direct:keep, steps: [{set_body: {constant: k}}]}}\n",
        "- route: {id: change, from: {uri: direct:change, steps: [{set_body: {constant: v1}}]}}\n",
        "- route: {id: drop, from: {uri: direct:drop, steps: [{set_body: {constant: d}}]}}\n",
    )))
    .await;
    let report = ctx
        .reload(yaml(concat!(
            "- route: {id: keep, from: {uri: direct:keep, steps: [{set_body: {constant: k}}]}}\n",
            "- route: {id: change, from: {uri: direct:change, steps: [{set_body: {constant: v2}}]}}\n",
            "- route: {id: new, from: {uri: direct:new, steps: [{set_body: {constant: n}}]}}\n",
        )))
        .await
        .unwrap();
    assert_eq!(report.unchanged, vec!["keep"]);
    assert_eq!(report.swapped, vec!["change"]);
    assert_eq!(report.removed, vec!["drop"]);
    assert_eq!(report.added, vec!["new"]);
    let out = ctx
        .request("direct:change", Exchange::default())
        .await
        .unwrap();
    assert_eq!(body(&out), "v2");
    let out = ctx
        .request("direct:new", Exchange::default())
        .await
        .unwrap();
    assert_eq!(body(&out), "n");
    assert!(ctx
        .request("direct:drop?block=false", Exchange::default())
        .await
        .is_err());

    // A set with one bad route: nothing changes.
    let bad = yaml(concat!(
        "- route: {id: keep, from: {uri: direct:keep, steps: [{set_body: {constant: k2}}]}}\n",
        "- route: {id: broken, from: {uri: direct:b, steps: [{to: nowhere:x}]}}\n",
    ));
    assert!(ctx.reload(bad).await.is_err());
    let out = ctx
        .request("direct:keep", Exchange::default())
        .await
        .unwrap();
    assert_eq!(body(&out), "k");
    assert!(ctx
        .route_controller()
        .route_ids()
        .await
        .contains(&"new".to_string()));
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn swapping_the_source_of_a_suspended_route_keeps_it_suspended() {
    let ctx = started(vec![RouteBuilder::from("direct:a")
        .id("r")
        .set_body(constant("v1"))
        .build()])
    .await;
    let controller = ctx.route_controller();
    controller.suspend_route("r").await.unwrap();
    controller
        .swap(
            "r",
            RouteBuilder::from("direct:b")
                .set_body(constant("v2"))
                .build(),
        )
        .await
        .unwrap();
    assert_eq!(
        controller.status("r").await.unwrap(),
        RouteStatus::Suspended
    );
    let mut waiting = {
        let ctx = ctx.clone();
        tokio::spawn(async move { ctx.request("direct:b", Exchange::default()).await })
    };
    assert!(tokio::time::timeout(Duration::from_secs(5), &mut waiting)
        .await
        .is_err());
    controller.resume_route("r").await.unwrap();
    assert_eq!(body(&waiting.await.unwrap().unwrap()), "v2");
    ctx.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_context_stop_ends_direct_waits_at_once_and_lists_what_seda_queues_hold() {
    let waits = RouteBuilder::from("direct:in")
        .id("waits")
        .to("direct:nobody")
        .build();
    let feeds = RouteBuilder::from("direct:feed")
        .id("feeds")
        .to("seda:jobs?wait_for_task_to_complete=never")
        .build();
    let ctx = started(vec![waits, feeds]).await;
    ctx.request("direct:feed", Exchange::new("job"))
        .await
        .unwrap();
    let waiting = {
        let ctx = ctx.clone();
        tokio::spawn(async move { ctx.request("direct:in", Exchange::default()).await })
    };
    // Paused time: the producer is now blocked on its 30 s wait for a consumer.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!waiting.is_finished());

    let start = tokio::time::Instant::now();
    let report = ctx.stop().await;
    assert_eq!(
        start.elapsed(),
        Duration::ZERO,
        "no route starts during a stop"
    );
    assert!(report.cut_off.is_empty(), "{report:?}");
    assert_eq!(report.left_queued, [("seda:jobs".to_string(), 1)]);
    let failed = waiting.await.unwrap().unwrap_err();
    assert!(
        matches!(failed, camel_api::CamelError::NoConsumer { .. }),
        "{failed}"
    );
}
