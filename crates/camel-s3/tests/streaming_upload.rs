//! `aws2-s3:` with `streamingUploadMode=true` against moto (`CAMEL_TEST_SQS_ENDPOINT`:
//! moto serves S3 on the same port): objects completed by count, by size and by timeout,
//! progressive and random names, `lastPart` resuming the numbering, the open object
//! stored when the route stops, and a failed store failing every exchange of its object.
//! These tests wait for stores (`streamingUploadAck=stored`); the first one below shows
//! the default, Camel's answer once the body is buffered.

mod support;

use std::sync::Arc;
use std::time::Duration;

use camel_api::test_support::service_from_env;
use camel_api::{
    BoxProcessor, CamelError, Component, ContextChange, Endpoint, EndpointUri, Exchange,
    ShutdownReason,
};
use camel_s3::{headers, S3Component};
use support::{unique, Bucket, NoContext};
use tokio::task::JoinHandle;

/// How long an exchange may take before a test gives up on it.
const BOUND: Duration = Duration::from_secs(20);

fn endpoint_for(bucket: &str, service: &str, extra: &str) -> Arc<dyn Endpoint> {
    let uri = format!(
        "aws2-s3://{bucket}?overrideEndpoint=true&uriEndpointOverride={service}&forcePathStyle=true&accessKey=test&secretKey=test&region=us-east-1&streamingUploadMode=true&streamingUploadAck=stored{extra}"
    );
    S3Component::new()
        .endpoint(EndpointUri::parse(&uri).unwrap(), &NoContext)
        .unwrap()
}

/// Sends `body` on its own task, so several exchanges wait at once.
fn send(producer: &BoxProcessor, body: &str) -> JoinHandle<Result<Exchange, CamelError>> {
    let producer = producer.clone();
    let exchange = Exchange::new(body.to_string());
    tokio::spawn(async move { producer.process(exchange).await })
}

/// The exchange's outcome, within [`BOUND`].
async fn outcome(task: JoinHandle<Result<Exchange, CamelError>>) -> Result<Exchange, CamelError> {
    tokio::time::timeout(BOUND, task)
        .await
        .expect("the exchange completed within the bound")
        .expect("the exchange's task ran")
}

fn key_of(exchange: &Exchange) -> String {
    exchange
        .header(headers::KEY)
        .map(|v| v.to_string())
        .unwrap_or_default()
}

/// Sends the bodies one after another (each is queued before the next is sent), so they
/// arrive in this order.
async fn send_in_order(
    producer: &BoxProcessor,
    bodies: &[&str],
) -> Vec<JoinHandle<Result<Exchange, CamelError>>> {
    let mut tasks = Vec::new();
    for body in bodies {
        tasks.push(send(producer, body));
        // Let the task reach the queue before the next one starts.
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
    }
    tasks
}

/// The default answers each exchange once its body is in the open object, so a caller
/// that sends one exchange at a time (a timer, a Kafka partition) still fills objects of
/// `batchMessageNumber` messages, as in Camel; with `stored` it would wait for ever.
#[tokio::test]
async fn by_default_one_caller_at_a_time_fills_objects_as_in_camel() {
    let Some(service) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let b = Bucket::create(&service, "stream-buffered").await;
    let uri = format!(
        "aws2-s3://{}?overrideEndpoint=true&uriEndpointOverride={service}&forcePathStyle=true&accessKey=test&secretKey=test&region=us-east-1&streamingUploadMode=true&keyName=seq.txt&batchMessageNumber=3",
        b.name
    );
    let endpoint = S3Component::new()
        .endpoint(EndpointUri::parse(&uri).unwrap(), &NoContext)
        .unwrap();
    let lifecycle = endpoint.lifecycle().expect("a lifecycle");
    lifecycle.start().await.unwrap();
    let producer = endpoint.producer().unwrap();
    for body in ["1\n", "2\n", "3\n", "4\n", "5\n", "6\n", "7\n"] {
        let done = tokio::time::timeout(BOUND, producer.process(Exchange::new(body.to_string())))
            .await
            .expect("answered without waiting for its object")
            .expect("buffered");
        assert_eq!(key_of(&done), "", "no key before the object is stored");
    }
    // The seventh is in the open object until the route stops.
    lifecycle.shutdown(ShutdownReason::RouteStop).await.unwrap();
    assert_eq!(b.keys().await, ["seq-1.txt", "seq-2.txt", "seq.txt"]);
    assert_eq!(b.text("seq.txt").await, "1\n2\n3\n");
    assert_eq!(b.text("seq-1.txt").await, "4\n5\n6\n");
    assert_eq!(b.text("seq-2.txt").await, "7\n");
}

#[tokio::test]
async fn objects_complete_at_the_message_count_with_progressive_names_and_at_stop() {
    let Some(service) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let b = Bucket::create(&service, "stream-count").await;
    let endpoint = endpoint_for(
        &b.name,
        &service,
        "&keyName=out/log.txt&batchMessageNumber=3",
    );
    let lifecycle = endpoint
        .lifecycle()
        .expect("a streaming endpoint has a lifecycle");
    lifecycle.start().await.unwrap();
    let producer = endpoint.producer().unwrap();
    let bodies = ["a\n", "b\n", "c\n", "d\n", "e\n", "f\n", "g\n"];
    let mut tasks = send_in_order(&producer, &bodies).await;
    let last = tasks.pop().expect("seven exchanges");
    let mut keys = Vec::new();
    for task in tasks {
        let done = outcome(task).await.expect("stored");
        assert!(done.header(headers::E_TAG).is_some(), "an ETag");
        keys.push(key_of(&done));
    }
    assert_eq!(
        keys,
        [
            "out/log.txt",
            "out/log.txt",
            "out/log.txt",
            "out/log-1.txt",
            "out/log-1.txt",
            "out/log-1.txt"
        ]
    );
    assert!(
        !last.is_finished(),
        "the seventh waits for its object to complete"
    );
    // Stopping the route completes the open object, so the seventh is answered.
    lifecycle.shutdown(ShutdownReason::RouteStop).await.unwrap();
    let seventh = outcome(last).await.expect("stored at stop");
    assert_eq!(key_of(&seventh), "out/log-2.txt");
    assert_eq!(
        b.keys().await,
        ["out/log-1.txt", "out/log-2.txt", "out/log.txt"]
    );
    assert_eq!(b.text("out/log.txt").await, "a\nb\nc\n");
    assert_eq!(b.text("out/log-1.txt").await, "d\ne\nf\n");
    assert_eq!(b.text("out/log-2.txt").await, "g\n");
    // A stopped route takes no more messages, and says so.
    let refused = producer.process(Exchange::new("late")).await.unwrap_err();
    assert!(refused.to_string().contains("stopped"), "{refused}");
}

#[tokio::test]
async fn an_object_completes_at_the_batch_size() {
    let Some(service) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let b = Bucket::create(&service, "stream-size").await;
    let endpoint = endpoint_for(
        &b.name,
        &service,
        "&keyName=sized&batchMessageNumber=100&batchSize=10",
    );
    let producer = endpoint.producer().unwrap();
    let tasks = send_in_order(&producer, &["12345", "6789", "0abc", "d"]).await;
    let mut tasks = tasks.into_iter();
    for task in tasks.by_ref().take(3) {
        assert_eq!(key_of(&outcome(task).await.expect("stored")), "sized");
    }
    assert_eq!(
        b.text("sized").await,
        "1234567890abc",
        "10 bytes reached with the third body"
    );
    let fourth = tasks.next().expect("a fourth exchange");
    assert!(!fourth.is_finished(), "the fourth opens the next object");
    endpoint
        .lifecycle()
        .unwrap()
        .shutdown(ShutdownReason::RouteStop)
        .await
        .unwrap();
    assert_eq!(
        key_of(&outcome(fourth).await.expect("stored at stop")),
        "sized-1"
    );
}

#[tokio::test]
async fn an_object_completes_at_the_timeout_after_its_first_message() {
    let Some(service) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let b = Bucket::create(&service, "stream-timeout").await;
    let endpoint = endpoint_for(
        &b.name,
        &service,
        "&keyName=slow.log&batchMessageNumber=100&streamingUploadTimeout=300",
    );
    let producer = endpoint.producer().unwrap();
    let started = tokio::time::Instant::now();
    let tasks = send_in_order(&producer, &["only ", "two"]).await;
    for task in tasks {
        assert_eq!(key_of(&outcome(task).await.expect("stored")), "slow.log");
    }
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "completed by the timeout, not before: {:?}",
        started.elapsed()
    );
    assert_eq!(b.text("slow.log").await, "only two");
}

#[tokio::test]
async fn a_failed_store_fails_every_exchange_of_the_object() {
    let Some(service) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let missing = unique("stream-missing");
    let endpoint = endpoint_for(&missing, &service, "&keyName=k.txt&batchMessageNumber=2");
    let producer = endpoint.producer().unwrap();
    for task in send_in_order(&producer, &["x", "y"]).await {
        let error = outcome(task)
            .await
            .expect_err("no bucket, no object")
            .to_string();
        assert!(
            error.contains("NoSuchBucket") && error.contains("2 messages"),
            "{error}"
        );
    }
}

/// The option names and values as the catalog's `aws-s3-streaming-upload-sink` Kamelet
/// writes them; `lastPart` resumes after the highest number already in the bucket.
#[tokio::test]
async fn the_kamelet_options_resume_the_numbering_with_last_part() {
    let Some(service) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let b = Bucket::create(&service, "stream-kamelet").await;
    b.put("camel.txt", "earlier\n").await;
    b.put("camel-4.txt", "earlier\n").await;
    b.put("camel-x.txt", "not one of ours\n").await;
    let endpoint = endpoint_for(
        &b.name,
        &service,
        "&autoCreateBucket=false&restartingPolicy=lastPart&batchMessageNumber=2\
         &batchSize=1000000&namingStrategy=progressive&keyName=camel.txt\
         &streamingUploadTimeout=10000&useDefaultCredentialsProvider=false\
         &useProfileCredentialsProvider=false&useSessionCredentials=false",
    );
    let producer = endpoint.producer().unwrap();
    let keys: Vec<String> = {
        let mut keys = Vec::new();
        for task in send_in_order(&producer, &["1\n", "2\n", "3\n", "4\n"]).await {
            keys.push(key_of(&outcome(task).await.expect("stored")));
        }
        keys
    };
    assert_eq!(
        keys,
        ["camel-5.txt", "camel-5.txt", "camel-6.txt", "camel-6.txt"]
    );
    assert_eq!(b.text("camel-6.txt").await, "3\n4\n");
    assert_eq!(
        b.text("camel.txt").await,
        "earlier\n",
        "nothing written before is replaced"
    );
}

#[tokio::test]
async fn random_names_give_each_object_its_own_key() {
    let Some(service) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let b = Bucket::create(&service, "stream-random").await;
    let endpoint = endpoint_for(
        &b.name,
        &service,
        "&keyName=in/part.csv&batchMessageNumber=1&namingStrategy=random",
    );
    let producer = endpoint.producer().unwrap();
    let first = producer.process(Exchange::new("a")).await.unwrap();
    let second = producer.process(Exchange::new("b")).await.unwrap();
    let (k1, k2) = (key_of(&first), key_of(&second));
    assert_ne!(k1, k2);
    for k in [&k1, &k2] {
        assert!(k.starts_with("in/part-") && k.ends_with(".csv"), "{k}");
    }
    let mut want = vec![k1, k2];
    want.sort();
    assert_eq!(b.keys().await, want);
}

/// Many callers at once, on several threads: each body lands in exactly one object, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_callers_each_land_once() {
    let Some(service) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let b = Bucket::create(&service, "stream-concurrent").await;
    let endpoint = endpoint_for(&b.name, &service, "&keyName=many.txt&batchMessageNumber=5");
    let producer = endpoint.producer().unwrap();
    let bodies: Vec<String> = (0..20).map(|i| format!("m{i:02}\n")).collect();
    let tasks: Vec<_> = bodies.iter().map(|body| send(&producer, body)).collect();
    for task in tasks {
        outcome(task).await.expect("stored");
    }
    let keys = b.keys().await;
    assert_eq!(keys, ["many-1.txt", "many-2.txt", "many-3.txt", "many.txt"]);
    let mut lines = Vec::new();
    for key in &keys {
        let text = b.text(key).await;
        assert_eq!(text.lines().count(), 5, "{key}: {text}");
        lines.extend(text.lines().map(str::to_string));
    }
    lines.sort();
    let want: Vec<String> = bodies.iter().map(|b| b.trim_end().to_string()).collect();
    assert_eq!(lines, want);
}

/// When the context stops, the open object is stored at once (the route's drain then
/// does not wait for its deadline), and each later body on its own.
#[tokio::test]
async fn a_stopping_context_stores_the_open_object_at_once() {
    let Some(service) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let b = Bucket::create(&service, "stream-stopping").await;
    let component = S3Component::new();
    let uri = format!(
        "aws2-s3://{}?overrideEndpoint=true&uriEndpointOverride={service}&forcePathStyle=true&accessKey=test&secretKey=test&region=us-east-1&streamingUploadMode=true&streamingUploadAck=stored&keyName=open.txt&batchMessageNumber=100",
        b.name
    );
    let endpoint = component
        .endpoint(EndpointUri::parse(&uri).unwrap(), &NoContext)
        .unwrap();
    let producer = endpoint.producer().unwrap();
    let tasks = send_in_order(&producer, &["x", "y"]).await;
    assert!(
        tasks.iter().all(|t| !t.is_finished()),
        "waiting for 100 messages"
    );
    component.context_changed(ContextChange::Stopping);
    for task in tasks {
        assert_eq!(key_of(&outcome(task).await.expect("stored")), "open.txt");
    }
    assert_eq!(b.text("open.txt").await, "xy");
    let late = tokio::time::timeout(BOUND, producer.process(Exchange::new("z")))
        .await
        .expect("stored on its own, at once")
        .expect("stored");
    assert_eq!(key_of(&late), "open-1.txt");
}

/// A context running one YAML route, `direct:in` → a streaming upload of `key` into
/// `bucket` that completes at 100 messages (never, in these tests), and two exchanges
/// waiting in its producer.
async fn two_waiting_in_a_route(
    service: &str,
    bucket: &str,
    key: &str,
) -> (
    Arc<camel_core::CamelContext>,
    Vec<JoinHandle<Result<Exchange, CamelError>>>,
) {
    let yaml = format!(
        "- route:\n    id: upload\n    from:\n      uri: direct:in\n      steps:\n        - to: \"aws2-s3://{bucket}?overrideEndpoint=true&uriEndpointOverride={service}&forcePathStyle=true&accessKey=test&secretKey=test&region=us-east-1&streamingUploadMode=true&streamingUploadAck=stored&keyName={key}&batchMessageNumber=100\"\n",
    );
    let ctx = camel_core::CamelContext::new();
    ctx.add_component(Arc::new(S3Component::new()));
    ctx.add_routes(camel_core::yaml::load_str(&yaml, "streaming.yaml").unwrap())
        .await
        .unwrap();
    ctx.start().await.unwrap();
    let ctx = Arc::new(ctx);
    let mut tasks = Vec::new();
    for body in ["one ", "two"] {
        let ctx = ctx.clone();
        tasks.push(tokio::spawn(async move {
            ctx.request("direct:in", Exchange::new(body)).await
        }));
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
    }
    (ctx, tasks)
}

/// Through a context and a YAML route: stopping the context stores the open object, the
/// waiting exchanges succeed, and nothing is cut off at the deadline. (One thread, so
/// both exchanges are waiting in the producer before the stop begins.)
#[tokio::test]
async fn a_route_stopped_with_its_context_answers_every_exchange() {
    let Some(service) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let b = Bucket::create(&service, "stream-route").await;
    let (ctx, tasks) = two_waiting_in_a_route(&service, &b.name, "route.txt").await;
    let report = tokio::time::timeout(BOUND, ctx.stop())
        .await
        .expect("the stop ended within the bound");
    assert!(report.cut_off.is_empty(), "{report:?}");
    assert!(report.errors.is_empty(), "{report:?}");
    for task in tasks {
        let done = outcome(task).await.expect("stored");
        assert_eq!(key_of(&done), "route.txt");
    }
    let text = b.text("route.txt").await;
    assert_eq!(text, "one two");
}

/// A route stopped on its own, its context running on and no `streamingUploadTimeout`:
/// the stop tells the step its intake closed, so the open object is stored at once and
/// the waiting exchanges end it, well before the 30 s stop deadline (the bound is 20 s).
#[tokio::test]
async fn a_route_stopped_alone_stores_the_open_object_without_waiting_for_its_deadline() {
    let Some(service) = service_from_env("CAMEL_TEST_SQS_ENDPOINT") else {
        return;
    };
    let b = Bucket::create(&service, "stream-alone").await;
    let (ctx, tasks) = two_waiting_in_a_route(&service, &b.name, "alone.txt").await;
    let report = tokio::time::timeout(BOUND, ctx.route_controller().stop_route("upload"))
        .await
        .expect("the route's stop ended long before its deadline")
        .expect("the route exists");
    assert_eq!(report.cut_off, 0, "{report:?}");
    for task in tasks {
        let done = outcome(task).await.expect("stored");
        assert_eq!(key_of(&done), "alone.txt");
    }
    assert_eq!(b.text("alone.txt").await, "one two");
    ctx.stop().await;
}
