//! The EIPs as generic tower layers: readiness passes through to the inner service, the
//! EIP's own decision still holds, and `from_fn` middleware sees the rest of the pipeline.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use camel_api::transaction::{Transaction, TransactionManager};
use camel_api::{Body, BoxPredicate, BoxProcessor, CamelError, Exchange};
use camel_eip::choice::ChoiceLayer;
use camel_eip::filter::FilterLayer;
use camel_eip::layer::{into_camel_error, ProcessorLayer};
use camel_eip::middleware::{from_fn, Next};
use camel_eip::multicast::{AggregationStrategy, MulticastConfig, MulticastLayer};
use camel_eip::pipeline::PipelineLayer;
use camel_eip::transacted::TransactedLayer;
use futures::future::BoxFuture;
use tower::{Layer, Service, ServiceExt};
use tower_test::mock::{self, Handle, Spawn};

type MockError = Box<dyn std::error::Error + Send + Sync>;
type Inner = tower::util::MapErr<mock::Mock<Exchange, Exchange>, fn(MockError) -> CamelError>;

/// `layer` over a mock inner service whose readiness the test controls.
fn over_mock<L: Layer<Inner>>(layer: L) -> (Spawn<L::Service>, Handle<Exchange, Exchange>) {
    let (inner, handle) = mock::pair::<Exchange, Exchange>();
    let map: fn(MockError) -> CamelError = into_camel_error;
    (Spawn::new(layer.layer(inner.map_err(map))), handle)
}

fn body_is(text: &str) -> BoxPredicate {
    camel_language::simple_predicate(&format!("${{body}} == '{text}'")).unwrap()
}

fn set_body(text: &'static str) -> BoxProcessor {
    BoxProcessor::sync(move |mut ex: Exchange| {
        ex.message.body = Body::from(text);
        Ok(ex)
    })
}

/// A step that suspends once before completing, to force the boxed path.
fn yielding() -> BoxProcessor {
    BoxProcessor::from_fn(|ex: Exchange| async move {
        tokio::task::yield_now().await;
        Ok(ex)
    })
}

#[derive(Debug)]
struct NoopTx;
impl Transaction for NoopTx {
    fn key(&self) -> &str {
        "db"
    }
    fn commit(self: Arc<Self>) -> BoxFuture<'static, Result<(), CamelError>> {
        Box::pin(async { Ok(()) })
    }
    fn rollback(self: Arc<Self>) -> BoxFuture<'static, Result<(), CamelError>> {
        Box::pin(async { Ok(()) })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
#[derive(Debug)]
struct NoopManager;
impl TransactionManager for NoopManager {
    fn key(&self) -> &str {
        "db"
    }
    fn begin(&self) -> BoxFuture<'static, Result<Arc<dyn Transaction>, CamelError>> {
        Box::pin(async { Ok(Arc::new(NoopTx) as Arc<dyn Transaction>) })
    }
}

/// Pending while the inner service grants no capacity, ready once it grants one; then the
/// call reaches the inner service with `expect_body` and its response comes back.
async fn passes_readiness_through<L>(layer: L, input: &str, expect_body: impl Into<Body>)
where
    L: Layer<Inner>,
    L::Service: Service<Exchange, Response = Exchange, Error = CamelError>,
    <L::Service as Service<Exchange>>::Future:
        Future<Output = Result<Exchange, CamelError>> + Send + 'static,
{
    let (mut svc, mut handle) = over_mock(layer);
    handle.allow(0);
    assert!(svc.poll_ready().is_pending());
    handle.allow(1);
    assert!(matches!(svc.poll_ready(), Poll::Ready(Ok(()))));
    let call = tokio::spawn(svc.call(Exchange::new(input)));
    let (request, reply) = handle.next_request().await.unwrap();
    assert_eq!(request.message.body, expect_body.into());
    let mut response = request;
    response.message.body = Body::from("from inner");
    reply.send_response(response);
    let out = call.await.unwrap().unwrap();
    assert_eq!(out.message.body, Body::from("from inner"));
}

#[tokio::test]
async fn every_eip_layer_passes_poll_ready_through() {
    passes_readiness_through(FilterLayer::new(body_is("in")), "in", "in").await;
    let choice = ChoiceLayer::new().when(body_is("other"), set_body("when"));
    passes_readiness_through(choice, "in", "in").await;
    passes_readiness_through(
        PipelineLayer::new(vec![set_body("a"), set_body("b")]),
        "in",
        "b",
    )
    .await;
    passes_readiness_through(
        PipelineLayer::new(vec![yielding(), set_body("c")]),
        "in",
        "c",
    )
    .await;
    let config = MulticastConfig {
        parallel: true,
        strategy: AggregationStrategy::CollectAll,
    };
    let multicast = MulticastLayer::new(vec![set_body("x"), set_body("y")], config);
    passes_readiness_through(multicast, "in", serde_json::json!(["x", "y"])).await;
    passes_readiness_through(TransactedLayer::new(Arc::new(NoopManager)), "in", "in").await;
    let middleware = from_fn(|mut ex: Exchange, next: Next| async move {
        ex.message.body = Body::from("via middleware");
        next.call(ex).await
    });
    passes_readiness_through(middleware, "in", "via middleware").await;
}

#[tokio::test]
async fn decisions_made_without_the_inner_service_do_not_call_it() {
    // A non-matching filter and a taken `when` answer at once, from the EIP itself.
    let (mut filter, mut handle) = over_mock(FilterLayer::new(body_is("wanted")));
    handle.allow(1);
    assert!(matches!(filter.poll_ready(), Poll::Ready(Ok(()))));
    let out = filter.call(Exchange::new("other")).await.unwrap();
    assert_eq!(out.message.body, Body::from("other"));
    assert_eq!(
        out.properties.get(camel_api::names::FILTER_MATCHED),
        Some(&false.into())
    );

    let (mut choice, mut handle2) =
        over_mock(ChoiceLayer::new().when(body_is("in"), set_body("when branch")));
    handle2.allow(1);
    assert!(matches!(choice.poll_ready(), Poll::Ready(Ok(()))));
    let out = choice.call(Exchange::new("in")).await.unwrap();
    assert_eq!(out.message.body, Body::from("when branch"));

    // A pipeline that stops the exchange does not go on to the inner service.
    let stop = BoxProcessor::sync(|mut ex: Exchange| {
        ex.stop();
        Ok(ex)
    });
    let (mut pipeline, mut handle3) = over_mock(PipelineLayer::new(vec![yielding(), stop]));
    handle3.allow(1);
    assert!(matches!(pipeline.poll_ready(), Poll::Ready(Ok(()))));
    let out = pipeline.call(Exchange::new("in")).await.unwrap();
    assert!(out.is_stopped());

    drop((filter, choice, pipeline));
    for h in [&mut handle, &mut handle2, &mut handle3] {
        assert!(
            h.next_request().await.is_none(),
            "the inner service was called"
        );
    }
}

#[tokio::test]
async fn from_fn_middleware_wraps_the_call_and_can_short_circuit() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let middleware = from_fn(move |ex: Exchange, next: Next| {
        let log = log.clone();
        async move {
            if ex.message.body == Body::from("blocked") {
                return Err(CamelError::processor("blocked by middleware"));
            }
            log.lock().unwrap().push("before");
            let out = next.call(ex).await?;
            log.lock().unwrap().push("after");
            Ok(out)
        }
    });
    let inner_log = seen.clone();
    let inner = BoxProcessor::sync(move |mut ex: Exchange| {
        inner_log.lock().unwrap().push("inner");
        ex.message.body = Body::from("done");
        Ok(ex)
    });
    let svc = middleware.layer(inner);
    let out = svc.clone().oneshot(Exchange::new("go")).await.unwrap();
    assert_eq!(out.message.body, Body::from("done"));
    assert_eq!(*seen.lock().unwrap(), ["before", "inner", "after"]);

    let err = svc.oneshot(Exchange::new("blocked")).await.unwrap_err();
    assert_eq!(err.to_string(), "blocked by middleware");
    assert_eq!(seen.lock().unwrap().len(), 3, "the inner step did not run");
}

#[tokio::test(start_paused = true)]
async fn a_timeout_layer_becomes_a_typed_timeout_error() {
    let slow = BoxProcessor::from_fn(|ex: Exchange| async move {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(ex)
    });
    let layer = ProcessorLayer::new(tower::timeout::TimeoutLayer::new(Duration::from_secs(1)));
    let step = layer.layer(slow);
    let err = step.process(Exchange::new("x")).await.unwrap_err();
    assert!(matches!(err, CamelError::Timeout(_)), "{err:?}");
}

#[tokio::test]
async fn a_load_shed_layer_refuses_with_overloaded() {
    // A concurrency limit of one held by a first call: the shed layer in front refuses
    // the second call at once instead of queueing it.
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let released = Arc::new(tokio::sync::Mutex::new(Some(released)));
    let blocking = BoxProcessor::from_fn(move |ex: Exchange| {
        let released = released.clone();
        async move {
            if let Some(rx) = released.lock().await.take() {
                let _ = rx.await;
            }
            Ok(ex)
        }
    });
    let shed = tower::ServiceBuilder::new()
        .load_shed()
        .concurrency_limit(1);
    let step = ProcessorLayer::new(shed).layer(blocking);
    let first = tokio::spawn(step.process(Exchange::new("first")));
    tokio::task::yield_now().await;
    let err = step.process(Exchange::new("second")).await.unwrap_err();
    assert!(matches!(err, CamelError::Overloaded(_)), "{err:?}");
    release.send(()).unwrap();
    assert!(first.await.unwrap().is_ok());
}

/// Every tower layer the docs name fits in a route (a `ProcessorLayer`).
#[test]
fn tower_layers_erase_into_processor_layers() {
    #[derive(Clone)]
    struct Once;
    impl tower::retry::Policy<Exchange, Exchange, CamelError> for Once {
        type Future = std::future::Ready<()>;
        fn retry(
            &mut self,
            _: &mut Exchange,
            result: &mut Result<Exchange, CamelError>,
        ) -> Option<Self::Future> {
            result.is_err().then(|| std::future::ready(()))
        }
        fn clone_request(&mut self, req: &Exchange) -> Option<Exchange> {
            Some(req.clone())
        }
    }
    let layers = [
        ProcessorLayer::new(tower::timeout::TimeoutLayer::new(Duration::from_secs(1))),
        ProcessorLayer::new(tower::limit::ConcurrencyLimitLayer::new(2)),
        ProcessorLayer::buffered(
            tower::limit::RateLimitLayer::new(10, Duration::from_secs(1)),
            16,
        ),
        ProcessorLayer::new(tower::retry::RetryLayer::new(Once)),
        ProcessorLayer::new(tower::load_shed::LoadShedLayer::new()),
        ProcessorLayer::new(FilterLayer::new(body_is("x"))),
    ];
    assert!(layers[1].type_name().contains("ConcurrencyLimitLayer"));
}

/// The route form of each EIP (over `BoxProcessor`) still completes a synchronous path
/// with a ready future: no boxed future is allocated.
#[test]
fn the_route_form_keeps_the_synchronous_fast_path() {
    use camel_api::ProcessorFuture;
    let ready = |p: &BoxProcessor, body: &str| {
        matches!(
            p.process(Exchange::new(body)),
            ProcessorFuture::Ready(Some(Ok(_)))
        )
    };
    let steps = camel_eip::pipeline::pipeline(vec![set_body("a"), set_body("b")]);
    assert!(ready(&steps, "x"));
    let filter = camel_eip::filter::filter(body_is("x"), steps.clone());
    assert!(ready(&filter, "x") && ready(&filter, "y"));
    let choice = camel_eip::choice::choice(vec![(body_is("x"), steps.clone())], None);
    assert!(ready(&choice, "x") && ready(&choice, "y"));
    let nested = camel_eip::pipeline::pipeline(vec![filter, choice, steps]);
    assert!(ready(&nested, "x"));
}

#[tokio::test]
async fn the_transacted_layer_runs_a_synchronous_inner_service_inside_the_transaction() {
    // A synchronous step does its work when called, so the call itself must happen
    // inside the transaction's scope.
    let probe = BoxProcessor::sync(|mut ex: Exchange| {
        let key = camel_api::transaction::current().map(|t| t.key().to_string());
        ex.message.body = Body::from(key.unwrap_or_else(|| "none".into()));
        Ok(ex)
    });
    let svc = TransactedLayer::new(Arc::new(NoopManager)).layer(probe);
    let out = svc.oneshot(Exchange::new("x")).await.unwrap();
    assert_eq!(out.message.body, Body::from("db"));
    assert!(camel_api::transaction::current().is_none());
}
