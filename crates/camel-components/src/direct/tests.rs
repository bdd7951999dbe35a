use std::sync::Arc;
use std::time::Duration;

use camel_api::{Body, BoxProcessor, CamelError, ConsumerContext, Endpoint, Exchange};
use tokio::sync::Barrier;
use tokio::task::JoinHandle;

use super::DirectComponent;
use crate::testing::{endpoint, send, text};

fn attach(
    endpoint: &Arc<dyn Endpoint>,
    route: &str,
    pipeline: BoxProcessor,
) -> (ConsumerContext, JoinHandle<Result<(), CamelError>>) {
    let ctx = ConsumerContext::for_pipeline(route, pipeline);
    let task = tokio::spawn(endpoint.consumer().unwrap().run(ctx.clone()));
    (ctx, task)
}

async fn attached(direct: &DirectComponent, name: &str) {
    while !direct.has_consumer(name) {
        tokio::task::yield_now().await;
    }
}

fn upper() -> BoxProcessor {
    BoxProcessor::sync(|mut ex: Exchange| {
        let text = ex.message.body.as_text().unwrap_or_default().to_uppercase();
        ex.message.body = Body::from(text);
        Ok(ex)
    })
}

#[tokio::test]
async fn producer_returns_the_consumer_routes_result() {
    let direct = DirectComponent::new();
    let ep = endpoint(&direct, "direct:up").unwrap();
    let (ctx, task) = attach(&ep, "r", upper());
    attached(&direct, "up").await;

    let out = send(&ep, "abc").await.unwrap();
    assert_eq!(text(&out), "ABC");

    ctx.cancellation().cancel();
    task.await.unwrap().unwrap();
    assert!(!direct.has_consumer("up"));
}

#[tokio::test]
async fn the_pipeline_runs_in_the_calling_task() {
    let direct = DirectComponent::new();
    let ep = endpoint(&direct, "direct:where").unwrap();
    let pipeline = BoxProcessor::sync(|ex: Exchange| {
        let id = tokio::task::try_id()
            .map(|id| id.to_string())
            .unwrap_or_default();
        Ok(ex.with_header("task", id))
    });
    let (_ctx, _task) = attach(&ep, "r", pipeline);
    attached(&direct, "where").await;

    let producer = ep.producer().unwrap();
    let caller = tokio::spawn(async move {
        let out = producer.process(Exchange::default()).await.unwrap();
        (tokio::task::id().to_string(), out)
    });
    let (caller_id, out) = caller.await.unwrap();
    assert_eq!(out.header("task").unwrap().to_string(), caller_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_callers_are_inside_the_pipeline_at_once() {
    const CALLERS: usize = 64;
    let direct = DirectComponent::new();
    let ep = endpoint(&direct, "direct:wide").unwrap();
    // Every caller waits inside the pipeline until all 64 are inside: if the consumer
    // served one exchange at a time, the barrier would never open.
    let barrier = Arc::new(Barrier::new(CALLERS));
    let pipeline = BoxProcessor::from_fn(move |ex: Exchange| {
        let barrier = barrier.clone();
        async move {
            barrier.wait().await;
            Ok(ex)
        }
    });
    let (_ctx, _task) = attach(&ep, "r", pipeline);
    attached(&direct, "wide").await;

    let producer = ep.producer().unwrap();
    let callers: Vec<_> = (0..CALLERS)
        .map(|i| {
            let producer = producer.clone();
            tokio::spawn(async move { producer.process(Exchange::new(i.to_string())).await })
        })
        .collect();
    let all = async {
        for caller in callers {
            caller.await.unwrap().unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(20), all)
        .await
        .expect("the 64 callers did not run concurrently");
}

#[tokio::test]
async fn without_consumer_and_without_blocking_fails_at_once() {
    let direct = DirectComponent::new();
    let ep = endpoint(&direct, "direct:nobody?block=false").unwrap();
    let err = ep
        .producer()
        .unwrap()
        .process(Exchange::default())
        .await
        .unwrap_err();
    assert!(matches!(err, CamelError::NoConsumer { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "no consumer is attached to `direct:nobody`"
    );
}

#[tokio::test(start_paused = true)]
async fn blocking_producer_gives_up_after_the_timeout() {
    let direct = DirectComponent::new();
    let ep = endpoint(&direct, "direct:late").unwrap();
    let start = tokio::time::Instant::now();
    let err = ep
        .producer()
        .unwrap()
        .process(Exchange::default())
        .await
        .unwrap_err();
    assert!(matches!(err, CamelError::NoConsumer { .. }), "{err}");
    assert_eq!(start.elapsed(), Duration::from_secs(30));

    let short = endpoint(&direct, "direct:late?timeout=2s").unwrap();
    let start = tokio::time::Instant::now();
    short
        .producer()
        .unwrap()
        .process(Exchange::default())
        .await
        .unwrap_err();
    assert_eq!(start.elapsed(), Duration::from_secs(2));
}

#[tokio::test(start_paused = true)]
async fn blocking_producer_proceeds_when_a_consumer_attaches() {
    let direct = DirectComponent::new();
    let ep = endpoint(&direct, "direct:soon").unwrap();
    let producer = ep.producer().unwrap();
    let call = tokio::spawn(async move { producer.process(Exchange::new("x")).await });
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(!call.is_finished());

    let (_ctx, _task) = attach(&ep, "r", upper());
    let out = call.await.unwrap().unwrap();
    assert_eq!(text(&out), "X");
}

#[tokio::test(start_paused = true)]
async fn a_stopping_context_ends_the_wait_for_a_consumer() {
    use camel_api::{Component, ContextChange};
    let direct = DirectComponent::new();
    let ep = endpoint(&direct, "direct:nobody").unwrap();
    let producer = ep.producer().unwrap();
    let start = tokio::time::Instant::now();
    let call = tokio::spawn(async move { producer.process(Exchange::default()).await });
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!call.is_finished());

    direct.context_changed(ContextChange::Stopping);
    let err = call.await.unwrap().unwrap_err();
    assert!(matches!(err, CamelError::NoConsumer { .. }), "{err}");
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    // While stopped, a call fails at once; a started context waits again.
    let err = send(&ep, "x").await.unwrap_err();
    assert!(matches!(err, CamelError::NoConsumer { .. }), "{err}");
    assert_eq!(start.elapsed(), Duration::from_secs(2));

    direct.context_changed(ContextChange::Starting);
    let start = tokio::time::Instant::now();
    send(&ep, "x").await.unwrap_err();
    assert_eq!(start.elapsed(), Duration::from_secs(30));
}

#[tokio::test]
async fn without_consumer_can_pass_the_exchange_through() {
    let direct = DirectComponent::new();
    let ep = endpoint(&direct, "direct:none?block=false&failIfNoConsumers=false").unwrap();
    let out = send(&ep, "same").await.unwrap();
    assert_eq!(text(&out), "same");
}

#[tokio::test]
async fn a_name_takes_one_live_consumer() {
    let direct = DirectComponent::new();
    let ep = endpoint(&direct, "direct:one").unwrap();
    let (first, first_task) = attach(&ep, "first", upper());
    attached(&direct, "one").await;

    let (_second, second_task) = attach(&ep, "second", BoxProcessor::identity());
    let err = second_task.await.unwrap().unwrap_err();
    assert!(err.to_string().contains("`first`"), "{err}");

    first.cancellation().cancel();
    first_task.await.unwrap().unwrap();
    let (_third, _third_task) = attach(&ep, "third", BoxProcessor::identity());
    attached(&direct, "one").await;
    let out = send(&ep, "a").await.unwrap();
    assert_eq!(text(&out), "a");
}

#[tokio::test]
async fn an_aborted_consumer_frees_its_name() {
    let direct = DirectComponent::new();
    let ep = endpoint(&direct, "direct:gone").unwrap();
    let (_ctx, task) = attach(&ep, "r", upper());
    attached(&direct, "gone").await;
    task.abort();
    let _ = task.await;
    assert!(!direct.has_consumer("gone"));
}

#[test]
fn unknown_parameter_is_refused_with_a_suggestion() {
    let direct = DirectComponent::new();
    let err = endpoint(&direct, "direct:x?timout=5")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("timout") && err.contains("did you mean `timeout`"),
        "{err}"
    );
    assert!(endpoint(&direct, "direct:").is_err());
}
