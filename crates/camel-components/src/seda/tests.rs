use std::sync::{Arc, Mutex};
use std::time::Duration;

use camel_api::{
    Body, BoxProcessor, CamelError, ConsumerContext, Endpoint, Exchange, ExchangePattern,
};
use tokio::sync::Barrier;
use tokio::task::JoinHandle;

use super::SedaComponent;
use crate::testing::{endpoint, send, text};

type Seen = Arc<Mutex<Vec<String>>>;

fn recorder() -> (BoxProcessor, Seen) {
    let seen: Seen = Arc::default();
    let sink = seen.clone();
    let pipeline = BoxProcessor::sync(move |ex: Exchange| {
        sink.lock().unwrap().push(text(&ex));
        Ok(ex)
    });
    (pipeline, seen)
}

fn start(
    endpoint: &Arc<dyn Endpoint>,
    pipeline: BoxProcessor,
) -> (ConsumerContext, JoinHandle<Result<(), CamelError>>) {
    let ctx = ConsumerContext::for_pipeline("r", pipeline);
    let task = tokio::spawn(endpoint.consumer().unwrap().run(ctx.clone()));
    (ctx, task)
}

#[tokio::test]
async fn in_only_returns_once_queued_and_the_consumer_runs_in_order() {
    let seda = SedaComponent::new();
    let ep = endpoint(&seda, "seda:q").unwrap();
    for i in 0..5 {
        let out = send(&ep, &i.to_string()).await.unwrap();
        assert_eq!(text(&out), i.to_string());
    }
    assert_eq!(seda.pending("q"), Some(5));

    let (pipeline, seen) = recorder();
    let (ctx, task) = start(&ep, pipeline);
    ctx.stats().wait_for(5).await;
    assert_eq!(*seen.lock().unwrap(), ["0", "1", "2", "3", "4"]);
    ctx.cancellation().cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_full_queue_refuses_unless_told_to_block() {
    let seda = SedaComponent::new();
    let ep = endpoint(&seda, "seda:small?size=2").unwrap();
    send(&ep, "a").await.unwrap();
    send(&ep, "b").await.unwrap();
    let err = send(&ep, "c").await.unwrap_err();
    assert!(matches!(err, CamelError::RetryAfter { .. }), "{err}");
    assert_eq!(seda.pending("small"), Some(2));
}

#[tokio::test]
async fn what_queues_still_hold_is_listed_at_stop() {
    use camel_api::Component;
    let seda = SedaComponent::new();
    let full = endpoint(&seda, "seda:full?size=2").unwrap();
    endpoint(&seda, "seda:empty").unwrap();
    send(&full, "a").await.unwrap();
    send(&full, "b").await.unwrap();
    assert_eq!(seda.left_at_stop(), [("seda:full".to_string(), 2)]);
}

#[tokio::test(start_paused = true)]
async fn a_blocking_producer_waits_for_room() {
    let seda = SedaComponent::new();
    let ep = endpoint(&seda, "seda:b?size=1&blockWhenFull=true").unwrap();
    send(&ep, "a").await.unwrap();
    let ep2 = ep.clone();
    let blocked = tokio::spawn(async move { send(&ep2, "b").await });
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(
        !blocked.is_finished(),
        "the offer must wait while the queue is full"
    );

    let (pipeline, seen) = recorder();
    let (ctx, _task) = start(&ep, pipeline);
    blocked.await.unwrap().unwrap();
    ctx.stats().wait_for(2).await;
    assert_eq!(*seen.lock().unwrap(), ["a", "b"]);
}

#[tokio::test(start_paused = true)]
async fn a_blocking_offer_gives_up_after_offer_timeout() {
    let seda = SedaComponent::new();
    let ep = endpoint(&seda, "seda:t?size=1&block_when_full=true&offer_timeout=2s").unwrap();
    send(&ep, "a").await.unwrap();
    let start = tokio::time::Instant::now();
    let err = send(&ep, "b").await.unwrap_err();
    assert!(matches!(err, CamelError::Timeout(_)), "{err}");
    assert_eq!(start.elapsed(), Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_consumers_run_side_by_side() {
    let seda = SedaComponent::new();
    let ep = endpoint(&seda, "seda:wide?concurrentConsumers=4").unwrap();
    // All four exchanges must be inside the route at once for the barrier to open.
    let barrier = Arc::new(Barrier::new(4));
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let barrier = barrier.clone();
        async move {
            barrier.wait().await;
            Ok(ex)
        }
    });
    let (ctx, task) = start(&ep, pipeline);
    for i in 0..4 {
        send(&ep, &i.to_string()).await.unwrap();
    }
    tokio::time::timeout(Duration::from_secs(20), ctx.stats().wait_for(4))
        .await
        .expect("four consumers did not run concurrently");
    ctx.cancellation().cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn in_out_waits_for_the_routes_result() {
    let seda = SedaComponent::new();
    let ep = endpoint(&seda, "seda:rr").unwrap();
    let pipeline = BoxProcessor::sync(|mut ex: Exchange| {
        ex.message.body = Body::from("done");
        Ok(ex)
    });
    let (_ctx, _task) = start(&ep, pipeline);
    let ex = Exchange::new("job").with_pattern(ExchangePattern::InOut);
    let out = ep.producer().unwrap().process(ex).await.unwrap();
    assert_eq!(text(&out), "done");

    let failing = BoxProcessor::sync(|_| Err(CamelError::processor("boom")));
    let seda = SedaComponent::new();
    let ep = endpoint(&seda, "seda:f?waitForTaskToComplete=Always").unwrap();
    let (_ctx, _task) = start(&ep, failing);
    let err = send(&ep, "x").await.unwrap_err();
    assert_eq!(err.to_string(), "boom");
}

#[tokio::test]
async fn stopped_consumers_leave_the_queue_for_the_next_start() {
    let seda = SedaComponent::new();
    let ep = endpoint(&seda, "seda:keep").unwrap();
    let (pipeline, seen) = recorder();
    let (ctx, task) = start(&ep, pipeline.clone());
    send(&ep, "first").await.unwrap();
    ctx.stats().wait_for(1).await;
    ctx.cancellation().cancel();
    task.await.unwrap().unwrap();

    send(&ep, "second").await.unwrap();
    assert_eq!(seda.pending("keep"), Some(1));
    let (ctx, _task) = start(&ep, pipeline);
    ctx.stats().wait_for(1).await;
    assert_eq!(*seen.lock().unwrap(), ["first", "second"]);
}

#[tokio::test]
async fn an_exchange_refused_by_a_closed_route_goes_back_on_the_queue() {
    let seda = SedaComponent::new();
    let ep = endpoint(&seda, "seda:closed").unwrap();
    send(&ep, "kept").await.unwrap();
    let ctx = ConsumerContext::for_pipeline("r", BoxProcessor::identity());
    ctx.gate().close();
    ep.consumer().unwrap().run(ctx).await.unwrap();
    assert_eq!(seda.pending("closed"), Some(1));
}

#[test]
fn bad_options_are_refused() {
    let seda = SedaComponent::new();
    endpoint(&seda, "seda:s?size=5").unwrap();
    let err = endpoint(&seda, "seda:s?size=6").unwrap_err().to_string();
    assert!(err.contains("size 5"), "{err}");
    assert!(endpoint(&seda, "seda:s").is_ok());
    let err = endpoint(&seda, "seda:s?sise=5").unwrap_err().to_string();
    assert!(err.contains("did you mean `size`"), "{err}");
    assert!(endpoint(&seda, "seda:z?concurrentConsumers=0").is_err());
    assert!(endpoint(&seda, "seda:z?waitForTaskToComplete=Sometimes").is_err());
}

#[tokio::test]
async fn never_waits_for_the_result_even_in_out() {
    let seda = SedaComponent::new();
    let ep = endpoint(&seda, "seda:fire?wait_for_task_to_complete=Never").unwrap();
    // No consumer at all: an InOut exchange still returns as soon as it is queued,
    // unchanged.
    let ex = Exchange::new("job").with_pattern(ExchangePattern::InOut);
    let out = ep.producer().unwrap().process(ex).await.unwrap();
    assert_eq!(text(&out), "job");
    assert_eq!(seda.pending("fire"), Some(1));
}

#[tokio::test(start_paused = true)]
async fn the_result_timeout_bounds_the_wait_and_zero_waits_as_long_as_it_takes() {
    let seda = SedaComponent::new();
    // No consumer: nobody answers.
    let ep = endpoint(&seda, "seda:slow?timeout=250").unwrap();
    let started = tokio::time::Instant::now();
    let ex = Exchange::new("job").with_pattern(ExchangePattern::InOut);
    let err = ep.producer().unwrap().process(ex).await.unwrap_err();
    assert!(matches!(err, CamelError::Timeout(_)), "{err}");
    assert_eq!(started.elapsed(), Duration::from_millis(250));

    let ep = endpoint(&seda, "seda:patient?timeout=0").unwrap();
    let ex = Exchange::new("job").with_pattern(ExchangePattern::InOut);
    let waiting = tokio::spawn(ep.producer().unwrap().process(ex));
    // An hour later it still waits; a consumer then answers it.
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert!(!waiting.is_finished());
    let (pipeline, seen) = recorder();
    let (_ctx, _task) = start(&ep, pipeline);
    let out = waiting.await.unwrap().unwrap();
    assert_eq!(text(&out), "job");
    assert_eq!(*seen.lock().unwrap(), ["job"]);
}
