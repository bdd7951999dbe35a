//! The producer and both consumers against the local Redis (`CAMEL_TEST_REDIS_URL`,
//! redis://127.0.0.1:6379): commands, pub/sub, and the stream consumer group (XACK after
//! success, a failed entry claimed again, a dead consumer's entries claimed, the
//! in-flight bound).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use camel_api::test_support::{service_from_env, SlowRoute};
use camel_api::{BoxProcessor, CamelError, Consumer, ConsumerContext, EndpointUri, Exchange};
use camel_redis::{
    RedisConsumer, RedisOptions, RedisProducer, CHANNEL_HEADER, CLAIMED_HEADER, COMMAND_HEADER,
    FIELD_HEADER, KEY_HEADER, VALUE_HEADER,
};
use redis::AsyncCommands;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

const WITHIN: Duration = Duration::from_secs(20);

fn server(url: &str) -> String {
    url.trim_start_matches("redis://")
        .trim_end_matches('/')
        .to_string()
}

fn unique(name: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("camel-test:{name}:{}-{nanos}", std::process::id())
}

fn options(uri: &str) -> RedisOptions {
    RedisOptions::from_uri(EndpointUri::parse(uri).expect("a URI")).expect("options")
}

fn producer(uri: &str) -> BoxProcessor {
    Arc::new(RedisProducer::new(options(uri))).processor()
}

async fn raw(url: &str) -> redis::aio::MultiplexedConnection {
    redis::Client::open(url)
        .expect("a client")
        .get_multiplexed_async_connection()
        .await
        .expect("connected")
}

#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<Exchange>>,
    changed: Notify,
}

impl Recorder {
    fn record(&self, ex: &Exchange) {
        self.seen.lock().unwrap().push(ex.clone());
        self.changed.notify_waiters();
    }

    fn bodies(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|e| e.message.body.as_text().unwrap_or_default().to_string())
            .collect()
    }

    fn find(&self, body: &str) -> Vec<Exchange> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e.message.body.as_text().as_deref() == Some(body))
            .cloned()
            .collect()
    }

    async fn until(&self, what: &str, done: impl Fn(&Recorder) -> bool) {
        let deadline = tokio::time::Instant::now() + WITHIN;
        while !done(self) {
            let changed = self.changed.notified();
            if tokio::time::timeout_at(deadline, changed).await.is_err() && !done(self) {
                panic!("{what}: not within {WITHIN:?}; seen {:?}", self.bodies());
            }
        }
    }
}

fn recording(
    seen: &Arc<Recorder>,
    fail: impl Fn(&str) -> bool + Send + Sync + 'static,
) -> BoxProcessor {
    let seen = seen.clone();
    let fail = Arc::new(fail);
    BoxProcessor::from_fn(move |ex: Exchange| {
        let (seen, fail) = (seen.clone(), fail.clone());
        async move {
            seen.record(&ex);
            let body = ex.message.body.as_text().unwrap_or_default().to_string();
            if fail(&body) {
                return Err(CamelError::processor(format!("refusing {body}")));
            }
            Ok(ex)
        }
    })
}

struct Running {
    ctx: ConsumerContext,
    task: JoinHandle<Result<(), CamelError>>,
}

fn start(uri: &str, pipeline: BoxProcessor) -> Running {
    let consumer = RedisConsumer::new(options(uri)).expect("a consumer");
    let ctx = ConsumerContext::for_pipeline("redis-test", pipeline);
    let task = tokio::spawn(Box::new(consumer).run(ctx.clone()));
    Running { ctx, task }
}

impl Running {
    async fn stop(self) {
        self.ctx.cancellation().cancel();
        tokio::time::timeout(WITHIN, self.task)
            .await
            .expect("the consumer stops")
            .expect("joined")
            .expect("stopped cleanly");
    }
}

async fn pending(url: &str, stream: &str, group: &str) -> i64 {
    let mut c = raw(url).await;
    let summary: redis::Value = redis::cmd("XPENDING")
        .arg(stream)
        .arg(group)
        .query_async(&mut c)
        .await
        .expect("XPENDING");
    match summary {
        redis::Value::Array(items) => match items.first() {
            Some(redis::Value::Int(n)) => *n,
            _ => 0,
        },
        _ => 0,
    }
}

/// Polls XPENDING until it is zero; panics after WITHIN.
async fn until_nothing_pending(url: &str, stream: &str, group: &str) {
    let deadline = tokio::time::Instant::now() + WITHIN;
    loop {
        let n = pending(url, stream, group).await;
        if n == 0 {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{n} entries still pending"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn producer_commands_with_camels_headers() {
    let Some(url) = service_from_env("CAMEL_TEST_REDIS_URL") else {
        return;
    };
    let at = server(&url);
    let send = producer(&format!("spring-redis:{at}"));
    let key = unique("set");
    let run = |ex: Exchange| {
        let send = send.clone();
        async move { send.process(ex).await.expect("the command ran") }
    };
    run(Exchange::new("v1").with_header(KEY_HEADER, key.as_str())).await;
    let got = run(Exchange::new("")
        .with_header(COMMAND_HEADER, "GET")
        .with_header(KEY_HEADER, key.as_str()))
    .await;
    assert_eq!(
        got.message.body.as_text().as_deref(),
        Some("v1"),
        "SET is the default"
    );
    let hash = unique("hash");
    run(Exchange::new("")
        .with_header(COMMAND_HEADER, "HSET")
        .with_header(KEY_HEADER, hash.as_str())
        .with_header(FIELD_HEADER, "f")
        .with_header(VALUE_HEADER, "hv"))
    .await;
    let list = unique("list");
    let len = run(Exchange::new("item")
        .with_header(COMMAND_HEADER, "LPUSH")
        .with_header(KEY_HEADER, list.as_str()))
    .await;
    assert_eq!(len.message.body.as_text().as_deref(), Some("1"));
    let counter = unique("counter");
    let n = run(Exchange::new("")
        .with_header(COMMAND_HEADER, "INCR")
        .with_header(KEY_HEADER, counter.as_str()))
    .await;
    assert_eq!(n.message.body.as_text().as_deref(), Some("1"));
    let stream = unique("xadd");
    let id = run(Exchange::new("payload")
        .with_header(COMMAND_HEADER, "XADD")
        .with_header(KEY_HEADER, stream.as_str())
        .with_header("tenant", "acme")
        .with_header("CamelSqlQuery", "drop"))
    .await;
    let id = id.message.body.as_text().unwrap_or_default().to_string();
    assert!(id.contains('-'), "XADD replies with the entry id: {id}");

    let mut c = raw(&url).await;
    let hv: String = c.hget(&hash, "f").await.expect("HGET");
    assert_eq!(hv, "hv");
    let entries: redis::streams::StreamRangeReply = c.xrange_all(&stream).await.expect("XRANGE");
    let fields = &entries.ids[0].map;
    assert!(fields.contains_key("tenant"));
    assert!(
        !fields.contains_key("CamelSqlQuery"),
        "control headers stay in the process"
    );
    let _: () = c
        .del(&[&key, &hash, &list, &counter, &stream])
        .await
        .expect("DEL");

    // A mistake is a failed exchange naming what is missing.
    let e = send
        .process(
            Exchange::new("x")
                .with_header(COMMAND_HEADER, "HSET")
                .with_header(KEY_HEADER, "k"),
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains(FIELD_HEADER), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pubsub_round_trip() {
    let Some(url) = service_from_env("CAMEL_TEST_REDIS_URL") else {
        return;
    };
    let at = server(&url);
    let channel = unique("chan");
    let seen = Arc::new(Recorder::default());
    let consumer = start(
        &format!("spring-redis:{at}?channels={channel}&command=SUBSCRIBE"),
        recording(&seen, |_| false),
    );
    let send = producer(&format!(
        "spring-redis:{at}?command=PUBLISH&channels={channel}"
    ));
    // Published until the subscription is in place (pub/sub keeps nothing).
    let deadline = tokio::time::Instant::now() + WITHIN;
    while seen.find("hello").is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "never subscribed");
        send.process(Exchange::new("hello"))
            .await
            .expect("published");
        let _ = tokio::time::timeout(Duration::from_millis(100), seen.changed.notified()).await;
    }
    let got = &seen.find("hello")[0];
    assert_eq!(
        got.header(CHANNEL_HEADER).map(|v| v.to_string()),
        Some(channel.clone())
    );
    consumer.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_entry_is_acknowledged_after_success_and_a_failed_one_is_claimed_again() {
    let Some(url) = service_from_env("CAMEL_TEST_REDIS_URL") else {
        return;
    };
    let at = server(&url);
    let stream = unique("stream");
    let uri = format!(
        "spring-redis:{at}?stream={stream}&group=g&consumerName=c1&groupStartId=0&claimMinIdle=300&claimInterval=100&block=100"
    );
    let seen = Arc::new(Recorder::default());
    let failed_once = Arc::new(AtomicBool::new(false));
    let flag = failed_once.clone();
    let consumer = start(
        &uri,
        recording(&seen, move |b| {
            b == "e2" && !flag.swap(true, Ordering::SeqCst)
        }),
    );
    let send = producer(&format!("spring-redis:{at}?command=XADD&stream={stream}"));
    for body in ["e1", "e2", "e3"] {
        send.process(Exchange::new(body)).await.expect("XADD");
    }
    seen.until("e2 claimed back", |s| {
        s.find("e2").len() == 2 && !s.find("e1").is_empty() && !s.find("e3").is_empty()
    })
    .await;
    let again = &seen.find("e2")[1];
    assert_eq!(
        again
            .header(CLAIMED_HEADER)
            .map(|v| v.to_string())
            .as_deref(),
        Some("true")
    );
    until_nothing_pending(&url, &stream, "g").await;
    assert_eq!(
        seen.find("e1").len(),
        1,
        "acknowledged entries are not run again"
    );
    consumer.stop().await;
    let _: () = raw(&url).await.del(&stream).await.expect("DEL");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_consumers_pending_entries_are_claimed() {
    let Some(url) = service_from_env("CAMEL_TEST_REDIS_URL") else {
        return;
    };
    let at = server(&url);
    let stream = unique("dead");
    let mut c = raw(&url).await;
    let _: () = redis::cmd("XGROUP")
        .arg("CREATE")
        .arg(&stream)
        .arg("g")
        .arg("$")
        .arg("MKSTREAM")
        .query_async(&mut c)
        .await
        .expect("group");
    for i in 0..5 {
        let _: String = c
            .xadd(&stream, "*", &[("body", format!("d{i}"))])
            .await
            .expect("XADD");
    }
    // A consumer that takes all five and dies without acknowledging.
    let _: redis::Value = redis::cmd("XREADGROUP")
        .arg("GROUP")
        .arg("g")
        .arg("dead-one")
        .arg("STREAMS")
        .arg(&stream)
        .arg(">")
        .query_async(&mut c)
        .await
        .expect("taken");
    assert_eq!(pending(&url, &stream, "g").await, 5);
    let seen = Arc::new(Recorder::default());
    let consumer = start(
        &format!("spring-redis:{at}?stream={stream}&group=g&consumerName=alive&claimMinIdle=200&claimInterval=100&block=100"),
        recording(&seen, |_| false),
    );
    seen.until("the five claimed", |s| {
        (0..5).all(|i| !s.find(&format!("d{i}")).is_empty())
    })
    .await;
    until_nothing_pending(&url, &stream, "g").await;
    consumer.stop().await;
    let _: () = c.del(&stream).await.expect("DEL");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_entries_in_flight_stay_within_max_inflight() {
    let Some(url) = service_from_env("CAMEL_TEST_REDIS_URL") else {
        return;
    };
    let at = server(&url);
    let stream = unique("bound");
    let mut c = raw(&url).await;
    for i in 0..30 {
        let _: String = c
            .xadd(&stream, "*", &[("body", format!("b{i}"))])
            .await
            .expect("XADD");
    }
    let route = SlowRoute::new(30, Duration::from_millis(30));
    let consumer = start(
        &format!("spring-redis:{at}?stream={stream}&group=g&groupStartId=0&maxInflight=3&count=10&block=100"),
        route.pipeline(),
    );
    route.wait_all(WITHIN).await;
    assert_eq!(route.most(), 3);
    until_nothing_pending(&url, &stream, "g").await;
    consumer.stop().await;
    let _: () = c.del(&stream).await.expect("DEL");
}
