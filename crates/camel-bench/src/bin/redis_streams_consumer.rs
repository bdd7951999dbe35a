//! Scenario `redis_streams_consumer` (needs `CAMEL_TEST_REDIS_URL`): `from:
//! spring-redis:` as a Streams consumer group member (XACK after the route, at most
//! `max_inflight` entries in flight) through a route that counts, against a hand-written
//! loop with the redis crate (XREADGROUP of the same count, one XACK per entry right after
//! reading it, acks overlapping on a multiplexed connection). Each run reads a stream of
//! its own, filled beforehand; the clock runs from the first entry to the last.
//!
//! Count: `REDIS_ENTRIES` (default 50000); `REDIS_COUNT` entries per read (default 50).

use std::sync::Arc;
use std::time::{Duration, Instant};

use camel_bench::{count_from_env, median, per_second, result_line};
use redis::aio::MultiplexedConnection;
use redis::streams::StreamReadReply;
use redis::AsyncCommands;

async fn connection(url: &str) -> MultiplexedConnection {
    redis::Client::open(url)
        .expect("a client")
        .get_multiplexed_async_connection()
        .await
        .expect("connected")
}

/// A new stream holding `n` entries, with group `g` from its start.
async fn filled_stream(c: &mut MultiplexedConnection, n: u64) -> String {
    let stream = camel_bench::unique_name("bench:stream", ':');
    for chunk in (0..n).collect::<Vec<_>>().chunks(1000) {
        let mut pipe = redis::pipe();
        for i in chunk {
            pipe.xadd(&stream, "*", &[("body", format!("{{\"n\":{i}}}"))])
                .ignore();
        }
        let _: () = pipe.query_async(c).await.expect("filled");
    }
    let _: () = redis::cmd("XGROUP")
        .arg("CREATE")
        .arg(&stream)
        .arg("g")
        .arg("0")
        .query_async(c)
        .await
        .expect("group");
    stream
}

/// The baseline: reads `count` at a time and acknowledges each entry at once.
async fn raw_loop(url: &str, stream: &str, n: u64, count: u64) -> Duration {
    let mut reader = connection(url).await;
    let acker = connection(url).await;
    let mut acks = tokio::task::JoinSet::new();
    let mut first = None;
    let mut seen = 0;
    while seen < n {
        let reply: Option<StreamReadReply> = redis::cmd("XREADGROUP")
            .arg("GROUP")
            .arg("g")
            .arg("raw")
            .arg("COUNT")
            .arg(count)
            .arg("BLOCK")
            .arg(100)
            .arg("STREAMS")
            .arg(stream)
            .arg(">")
            .query_async(&mut reader)
            .await
            .expect("XREADGROUP");
        for entry in reply.into_iter().flat_map(|r| r.keys).flat_map(|k| k.ids) {
            first.get_or_insert_with(Instant::now);
            assert!(entry.map.contains_key("body"));
            let mut acker = acker.clone();
            let stream = stream.to_string();
            acks.spawn(async move {
                let _: i64 = acker.xack(&stream, "g", &[&entry.id]).await.expect("XACK");
            });
            seen += 1;
        }
        while let Some(done) = acks.try_join_next() {
            done.expect("ack task");
        }
    }
    while let Some(done) = acks.join_next().await {
        done.expect("ack task");
    }
    first.map(|f| f.elapsed()).unwrap_or_default()
}

/// Ours: a route that counts; the time from the first exchange to the last.
async fn route(url: &str, stream: &str, n: u64, count: u64) -> Duration {
    let at = url.trim_start_matches("redis://").trim_end_matches('/');
    let yaml = format!(
        r#"
- route:
    id: consume
    from:
      uri: "spring-redis:{at}?stream={stream}&group=g&consumerName=route&count={count}&block=100"
      steps:
        - process: {{ ref: work }}
"#
    );
    camel_bench::time_consumer_route(
        Arc::new(camel_redis::RedisComponent::spring_redis()),
        &yaml,
        n,
    )
    .await
}

#[tokio::main]
async fn main() {
    let Ok(url) = std::env::var("CAMEL_TEST_REDIS_URL") else {
        eprintln!("skipped: CAMEL_TEST_REDIS_URL is not set");
        return;
    };
    let n = count_from_env("REDIS_ENTRIES", 50_000);
    let count = count_from_env("REDIS_COUNT", 50);
    let mut admin = connection(&url).await;
    let mut raw = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..2 {
        let stream = filled_stream(&mut admin, n).await;
        raw.push(per_second(n, raw_loop(&url, &stream, n, count).await));
        let _: () = admin.del(&stream).await.expect("DEL");
        let stream = filled_stream(&mut admin, n).await;
        ours.push(per_second(n, route(&url, &stream, n, count).await));
        let _: () = admin.del(&stream).await.expect("DEL");
    }
    let (raw, ours) = (median(raw), median(ours));
    result_line(
        "redis_streams_consumer",
        &[
            ("entries", n.to_string()),
            ("count", count.to_string()),
            ("raw_per_s", format!("{raw:.0}")),
            ("route_per_s", format!("{ours:.0}")),
            ("ratio", format!("{:.2}", ours / raw)),
        ],
    );
}
